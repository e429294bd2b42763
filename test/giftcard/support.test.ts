/**
 * A support person at a terminal, and the same commands in scripts: questions for missing fields,
 * the confirmation, the e-mail typo warning, setup as people paste values, the ledger shared by
 * profiles, and history in plain words.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxProfile, scriptedPrompter } from '../helpers.js';
import { aliceClaim, type Fixture, fixture, giftcardSuite } from './fixture.js';

let fx: Fixture | undefined;
giftcardSuite();

const issueBodies = (f: Fixture) => f.sandbox.requests.filter((q) => q.path === '/provider/v2/gift-cards/issue/').map((q) => JSON.parse(q.body));

describe('giftcard issue at a terminal', () => {
  it('asks for each missing field in plain words, shows the summary, and issues after yes', async () => {
    fx = await fixture({ triggerDelayMs: null, fakeClock: true, unset: ['trigger-id'] });
    await fx.run(['config', 'set', 'currency', 'eur']);
    const prompter = scriptedPrompter({
      'Claim id': 'C-200',
      'Order number': '1200',
      'Amount in EUR': '12.5',
      "Customer's e-mail": 'carol@example.com',
      "Customer's name": 'Carol Example',
      'storefront id': '',
      'Issue 12.50 EUR to Carol Example <carol@example.com>?': true,
    });
    const r = await fx.run(['giftcard', 'issue'], { tty: true, prompter });
    expect(r.code, r.stderr).toBe(0);
    expect(prompter.asked).toHaveLength(7);
    expect(r.stderr).toMatch(
      /Amount\s+12\.50 EUR\n\s+Customer\s+Carol Example\n\s+E-mail\s+carol@example\.com\n\s+Customer id\s+\(none: a new gift card is created\)\n\s+Reference\s+claim C-200, order #1200/,
    );
    expect(r.stderr).toMatch(/First path\s+the credit API/);
    // A terminal wraps notices at its width (80 here): the last sentence may span lines.
    expect(r.stderr.trimEnd().replace(/\s*\n\s*/g, ' ')).toMatch(
      /Issued 12\.50 EUR for claim C-200 to Carol Example <carol@example\.com>; recorded in the ledger\.$/,
    );
    expect(issueBodies(fx)).toEqual([
      expect.objectContaining({
        gift_card: expect.objectContaining({ balance: 12.5 }),
        email_details: expect.objectContaining({ recipient_email: 'carol@example.com' }),
      }),
    ]);
  });

  it('refuses to ask without a terminal, naming the flags, and sends nothing', async () => {
    fx = await fixture();
    const r = await fx.run(['giftcard', 'issue', '--claim', 'C-201', '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Missing --order, --amount, --email, --name\./);
    expect(fx.sandbox.requests).toHaveLength(0);
  });

  it('offers the likely e-mail for a misspelt domain and uses the answer', async () => {
    fx = await fixture({ triggerDelayMs: null, fakeClock: true, unset: ['trigger-id'] });
    const prompter = scriptedPrompter({ 'looks misspelt. Did you mean bob@example.com?': 'suggested', 'Issue 5.00 USD to Bob <bob@example.com>?': true });
    const r = await fx.run(['giftcard', 'issue', '--claim', 'C-202', '--order', '2', '--amount', '5', '--email', 'bob@exmaple.com', '--name', 'Bob'], {
      tty: true,
      prompter,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(issueBodies(fx)[0].email_details.recipient_email).toBe('bob@example.com');
  });

  it('in a script, refuses a misspelt domain (exit 2, nothing sent); --email-confirmed issues as given', async () => {
    fx = await fixture({ triggerDelayMs: null, fakeClock: true, unset: ['trigger-id'] });
    const args = ['giftcard', 'issue', '--claim', 'C-203', '--order', '3', '--amount', '5', '--email', 'bob@exmaple.com', '--name', 'Bob', '--yes'];
    const r = await fx.run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/The e-mail bob@exmaple\.com looks misspelt: did you mean bob@example\.com\?/);
    expect(fx.sandbox.requests).toHaveLength(0);
    const confirmed = await fx.run([...args, '--email-confirmed']);
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(issueBodies(fx)[0].email_details.recipient_email).toBe('bob@exmaple.com');
  });

  it('declining the confirmation prints "Nothing was issued." plainly, exit 1 (not 130, the code of Ctrl-C), nothing sent or recorded', async () => {
    fx = await fixture();
    const args = aliceClaim('C-204').filter((a) => a !== '--yes');
    const r = await fx.run(args, { tty: true, prompter: scriptedPrompter({ 'Issue 25.00 USD': false }) });
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe('Nothing was issued.');
    expect(r.stderr).not.toMatch(/Error/);
    expect(fx.sandbox.requests).toHaveLength(0);
  });
});

describe('the trigger call', () => {
  it('carries the credit API token only when trigger-sends-token is on', async () => {
    fx = await fixture({ triggerDelayMs: 0, fakeClock: true });
    await fx.run(['config', 'set', 'trigger-sends-token', 'true']);
    const r = await fx.run(aliceClaim('C-210'));
    expect(r.code, r.stderr).toBe(0);
    const trigger = fx.sandbox.requests.find((q) => q.path.includes('/workflows/execute/'));
    expect(trigger?.headers['x-giftly-access-token']).toBe(fx.sandbox.store.providerToken);
  });
});

describe('giftcard setup as people paste values', () => {
  it('refuses a provider name that cannot be a header, exit 2, and saves nothing', async () => {
    fx = await fixture();
    const before = readFileSync(join(fx.dir, 'settings.json'), 'utf8');
    const r = await fx.run(['giftcard', 'setup', '--provider-name', 'ac me', '--shop-url', 'x.example']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/provider-name: expected letters, digits and - only/);
    expect(readFileSync(join(fx.dir, 'settings.json'), 'utf8')).toBe(before);
    expect(fx.sandbox.requests).toHaveLength(0);
  });

  it('refuses to issue with a stored provider name that cannot be a header: exit 2, nothing sent or recorded', async () => {
    fx = await fixture();
    const { SettingsStore } = await import('../../src/config/settings.js');
    const store = await SettingsStore.open(fx.dir);
    store.updateProfile('default', { provider: { name: 'ac me' } });
    const r = await fx.run(aliceClaim('C-212'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/provider name "ac me" cannot form the header/);
    expect(fx.sandbox.requests).toHaveLength(0);
    expect(() => readFileSync(join(fx?.dir ?? '', 'giftcard-ledger.jsonl'))).toThrow();
  });

  it('takes the id from a whole execute URL, the domain from a shop URL, and checks at the end', async () => {
    fx = await fixture({ unset: ['trigger-id', 'trigger-url', 'shop-url'] });
    const url = `${fx.sandbox.triggerUrl}/${fx.sandbox.store.triggerId}`;
    const r = await fx.run(['giftcard', 'setup', '--trigger-id', url, '--shop-url', `https://${fx.sandbox.store.shopUrl}/`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `Took the trigger id ${fx.sandbox.store.triggerId} from the end of the execute URL; the execute URL without it is ${fx.sandbox.triggerUrl}.`,
    );
    expect(r.stderr).toContain(`Saved the store domain as ${fx.sandbox.store.shopUrl}`);
    expect(r.stdout).toMatch(/^store domain\tok/m);
    expect(fx.providerCalls()).toEqual(['GET /v2/gift-cards/']);
    const get = await fx.run(['config', 'get', 'trigger-url']);
    expect(get.stdout.trim()).toBe(fx.sandbox.triggerUrl);
  });

  it('--no-check saves without contacting the provider', async () => {
    fx = await fixture();
    const r = await fx.run(['giftcard', 'setup', '--shop-url', 'other.example', '--no-check']);
    expect(r.code, r.stderr).toBe(0);
    expect(fx.sandbox.requests).toHaveLength(0);
  });
});

describe('the ledger across profiles', () => {
  it('refuses the same claim from another profile on the same shop and store, naming the first profile', async () => {
    fx = await fixture({ triggerDelayMs: 0, fakeClock: true });
    await sandboxProfile(fx.sandbox, fx.dir, { profile: 'support' });
    expect((await fx.run(aliceClaim('C-220'))).code).toBe(0);
    const r = await fx.run(['--profile', 'support', ...aliceClaim('C-220')]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/Store credit for claim C-220 was already issued \(.* with profile "default": 25\.00 USD to alice@example\.com/);
    expect(fx.sandbox.counters.creditsPosted.trigger).toBe(1);
  });

  it('does not block a claim issued in another shop, and old unscoped records still block', async () => {
    fx = await fixture({ triggerDelayMs: 0, fakeClock: true });
    const base = {
      v: 1,
      user: 'someone',
      type: 'attempt',
      orderNumber: '1001',
      bonus: false,
      amountCents: 2500,
      amount: '25.00',
      email: 'a@example.com',
      name: 'A',
      profile: 'sandbox',
      firstPath: 'trigger',
      forced: false,
      host: 'h',
      at: '2026-01-01T00:00:00.000Z',
    };
    const lines = [
      { ...base, issuance: 'i-1', key: 'shop:another-shop.example|store:store_9|claim:C-221', claimId: 'C-221' },
      { ...base, issuance: 'i-2', key: 'claim:C-222', claimId: 'C-222' },
    ];
    writeFileSync(join(fx.dir, 'giftcard-ledger.jsonl'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    expect((await fx.run(aliceClaim('C-221'))).code).toBe(0);
    const old = await fx.run(aliceClaim('C-222'));
    expect(old.code).toBe(3);
    expect(old.stderr).toMatch(/claim C-222 has no recorded outcome .*profile "sandbox"/);
  });
});

describe('giftcard history', () => {
  it('shows the e-mail, the currency, the profile, and UTC times with --utc', async () => {
    fx = await fixture({ triggerDelayMs: 0, fakeClock: true });
    await fx.run(['config', 'set', 'currency', 'EUR']);
    expect((await fx.run(aliceClaim('C-230'))).code).toBe(0);
    const r = await fx.run(['giftcard', 'history', '--utc']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^2027-01-15 08:00:00 UTC\tclaim C-230\t25\.00 EUR\talice@example\.com\tissued\ttrigger\t\S+\tdefault\t/m);
    const local = await fx.run(['giftcard', 'history']);
    expect(local.stdout).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d\tclaim C-230/m);
  });
});
