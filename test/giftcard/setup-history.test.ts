import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBinary, scriptedPrompter } from '../helpers.js';
import { aliceClaim, type Fixture, fixture, giftcardSuite } from './fixture.js';

let fx: Fixture | undefined;
giftcardSuite();

describe('giftcard setup', () => {
  it('--check passes on a good configuration and sends nothing that moves money', async () => {
    fx = await fixture();
    const r = await fx.run(['giftcard', 'setup', '--check', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.ok).toBe(true);
    expect(doc.checks.map((c: { check: string; result: string }) => `${c.check}=${c.result}`)).toEqual([
      'credit API token=ok',
      'store domain=ok',
      'trigger id=ok',
      'native gift card=ok',
    ]);
    expect(fx.sandbox.requests.map((q) => q.method)).toEqual(['GET']);
    expect(fx.sandbox.counters.creditsPosted).toEqual({ trigger: 0, creditApiIssue: 0, creditApiTopUp: 0, native: 0 });
  });

  it('--check tells a wrong token from a wrong store domain', async () => {
    fx = await fixture();
    await fx.run(['config', 'set', 'provider-token', '--stdin'], { stdin: 'gly_not_the_right_one_42' });
    const token = await fx.run(['giftcard', 'setup', '--check']);
    expect(token.code).toBe(1);
    expect(token.stdout).toMatch(/^credit API token\tfailed\tAPI key not found\. The credit API token is wrong, expired or revoked/m);
    expect(token.stdout).toMatch(/^store domain\tnot checked/m);
    expect(token.stdout + token.stderr).not.toContain('gly_not_the_right_one_42');

    await fx.run(['config', 'set', 'provider-token', '--stdin'], { stdin: fx.sandbox.store.providerToken });
    await fx.run(['config', 'set', 'shop-url', 'elsewhere.example']);
    const shop = await fx.run(['giftcard', 'setup', '--check']);
    expect(shop.code).toBe(1);
    expect(shop.stdout).toMatch(/^credit API token\tok/m);
    expect(shop.stdout).toMatch(/^store domain\tfailed\tStore domain not found\. .*archived or deactivated/m);
  });

  it('writes settings from flags (token from stdin) and refuses a trigger id that is not a UUID', async () => {
    fx = await fixture();
    const bad = await fx.run(['giftcard', 'setup', '--trigger-id', 'not-a-uuid', '--no-check']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/the last path segment of the execute URL, not the whole URL/);
    const token = 'gly_fresh_token_from_stdin_1234';
    const r = await fx.run(['giftcard', 'setup', '--shop-url', 'new-shop.example', '--token-stdin', '--no-check'], { stdin: `${token}\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Saved shop-url, provider-token/);
    const list = await fx.run(['config', 'list', '--json']);
    const settings = Object.fromEntries(JSON.parse(list.stdout).settings.map((s: { key: string; value: string }) => [s.key, s.value]));
    expect(settings['shop-url']).toBe('new-shop.example');
    expect(settings['provider-token']).not.toContain('fresh');
    expect(r.stderr + r.stdout + list.stdout).not.toContain(token);
  });

  it('refuses a blank or garbled --shop-url, a non-http(s) URL and an unlisted currency by flag, saving nothing (F3)', async () => {
    fx = await fixture();
    const settingsFile = join(fx.dir, 'settings.json');
    const before = readFileSync(settingsFile, 'utf8');
    for (const [flag, value, why] of [
      ['--shop-url', ' ', /the value is blank/],
      ['--shop-url', 'Shop\x1b[2J.example', /the value holds a control character/],
      ['--shop-url', 'shop\uFFFD.example', /the value holds U\+FFFD/],
      ['--shop-url', 'shop.example/admin', /expected the store's domain alone/],
      ['--api-url', 'file:///etc/passwd', /expected an http\(s\) URL/],
      ['--api-url', 'javascript:alert(1)', /expected an http\(s\) URL/],
      ['--trigger-url', 'file:///etc/passwd', /expected an http\(s\) URL/],
      ['--native-url', 'javascript:alert(1)', /expected an http\(s\) URL/],
      ['--currency', 'ZZZ', /not a currency code of the spec's list/],
      ['--provider-name', 'gift\x07ly', /the value holds a control character/],
    ] as const) {
      // A good value beside the bad one is not saved either: the whole command is refused.
      const good = flag === '--shop-url' ? ['--currency', 'EUR'] : ['--shop-url', 'other-shop.example'];
      const r = await fx.run(['giftcard', 'setup', ...good, flag, value]);
      expect(r.code, `${flag} ${JSON.stringify(value)}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`Error: Invalid value for ${flag}:`);
      expect(r.stderr).toMatch(why);
      expect(r.stderr).not.toMatch(/Saved|Note:/);
      expect(r.stderr).not.toContain('\x1b');
    }
    const token = await fx.run(['giftcard', 'setup', '--token-stdin', '--no-check'], { stdin: 'gly_\x1b[2Jtoken\n' });
    expect(token.code).toBe(2);
    expect(token.stderr).toContain('Invalid value for the token (--token-stdin): the value holds a control character');
    expect(readFileSync(settingsFile, 'utf8')).toBe(before);
    expect(fx.sandbox.requests).toHaveLength(0);
  });

  it('asks on a terminal, and refuses to ask without one', async () => {
    fx = await fixture();
    const none = await fx.run(['giftcard', 'setup']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--token-stdin/);
    const prompter = scriptedPrompter({
      'Provider name': 'giftly',
      'Provider API address': fx.sandbox.providerUrl,
      'Credit API token': '',
      'Store domain at': 'https://asked-shop.example/',
      'Trigger workflow id': '',
      'Trigger execute URL': fx.sandbox.triggerUrl,
      'Storefront gift card address': fx.sandbox.nativeUrl,
      Currency: 'eur',
    });
    const r = await fx.run(['giftcard', 'setup'], { tty: true, prompter });
    // The check at the end runs against the sandbox, which knows another shop: exit 1, with advice.
    expect(r.code, r.stderr).toBe(1);
    expect(prompter.asked).toHaveLength(8);
    for (const q of prompter.asked) expect(q).not.toMatch(/x-<|header/);
    expect(r.stderr).toMatch(/Saved the store domain as asked-shop\.example/);
    expect(r.stdout).toMatch(/store domain\s*│\s*failed\s*│\s*Store domain not found\./);
    expect(r.stderr).toMatch(/Saved shop-url/);
    const get = await fx.run(['config', 'get', 'shop-url']);
    expect(get.stdout.trim()).toBe('asked-shop.example');
  });
});

describe('giftcard history', () => {
  it('shows each issuance with amount, path, card and OS user', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    await fx.run(aliceClaim('C-30'));
    await fx.run(['giftcard', 'issue', '--claim', 'C-31', '--order', '7', '--amount', '3.50', '--email', 'bob@example.com', '--name', 'Bob', '--yes']);
    const all = await fx.run(['giftcard', 'history']);
    expect(all.code, all.stderr).toBe(0);
    const lines = all.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    const card = fx.sandbox.loyaltyCard('cust_1001')?.giftCardId;
    expect(lines[0]).toMatch(
      new RegExp(`\\tclaim C-30\\t25\\.00 USD\\talice@example\\.com\\tissued\\tcredit-api-top-up\\t${card}\\tdefault\\t${userInfo().username}$`),
    );
    expect(lines[1]).toMatch(/\tclaim C-31\t3\.50 USD\tbob@example\.com\tissued\tcredit-api-issue\t/);
    const one = await fx.run(['giftcard', 'history', '--claim', 'C-31', '--json']);
    const doc = JSON.parse(one.stdout);
    expect(doc.issuances).toHaveLength(1);
    expect(doc.issuances[0]).toMatchObject({
      claimId: 'C-31',
      amount: '3.50',
      status: 'issued',
      path: 'credit-api-issue',
      balance: '3.50',
      user: userInfo().username,
    });
  });
});

describe('giftcard history: filters', () => {
  it('refuses an empty, blank or garbled --claim or --order by name instead of answering "no issuances" (F4)', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    expect((await fx.run(aliceClaim('C-32'))).code).toBe(0);
    fx.sandbox.resetLog();
    for (const flag of ['--claim', '--order']) {
      for (const value of ['', ' ', '\t', 'C\x1b[2J32', 'C\x07-32', 'C\uFFFD32']) {
        const r = await fx.run(['giftcard', 'history', flag, value, '--verify']);
        expect(r.code, `${flag} ${JSON.stringify(value)}`).toBe(2);
        expect(r.stderr).toMatch(new RegExp(`^Error: ${flag} (is empty|is blank|holds)`, 'm'));
        expect(r.stderr).not.toMatch(/No issuances/);
        expect(r.stdout).toBe('');
      }
    }
    expect(fx.sandbox.requests).toHaveLength(0);
    const good = await fx.run(['giftcard', 'history', '--claim', 'C-32']);
    expect(good.stdout).toMatch(/\tclaim C-32\t25\.00 USD\t/);
  });
});

describe('giftcard issue: two processes at once', () => {
  it('issues exactly once when two operators issue for the same claim at the same moment', async () => {
    fx = await fixture({ triggerDelayMs: 0 });
    const env = { ...fx.env, CI: '1' };
    const args = aliceClaim('C-40');
    const [a, b] = await Promise.all([runBinary(args, { env }), runBinary(args, { env })]);
    const codes = [a.code, b.code].sort();
    expect(codes, a.stderr + b.stderr).toEqual([0, 3]);
    const refused = a.code === 3 ? a : b;
    expect(refused.stderr).toMatch(/claim C-40 (was already issued|has no recorded outcome)/);
    const posted = fx.sandbox.counters.creditsPosted;
    expect(posted.trigger + posted.creditApiIssue + posted.creditApiTopUp + posted.native).toBe(1);
    expect(fx.sandbox.requests.filter((q) => q.path.includes('/workflows/execute/'))).toHaveLength(1);
    for (const r of [a, b]) expect(r.stdout + r.stderr).not.toContain(fx.sandbox.store.providerToken);
  });
});
