import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptedPrompter } from '../helpers.js';
import { aliceClaim, BACKENDS, type Fixture, fixture, giftcardSuite, ledgerLines, recordedLines } from './fixture.js';

let fx: Fixture | undefined;
giftcardSuite();

describe('giftcard issue: the chain', () => {
  it('issues through the trigger workflow when it posts in time', async () => {
    fx = await fixture({ triggerDelayMs: 100, fakeClock: true });
    const r = await fx.run([...aliceClaim('C-1'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      status: 'issued',
      path: 'trigger',
      balance: '35.00',
      amount: '25.00',
      fellBackFromTrigger: false,
      possibleDoubleCredit: false,
    });
    expect(out.cardId).toBe(fx.sandbox.loyaltyCard('cust_1001')?.giftCardId);
    expect(out.code).toMatch(/^\*\*\*\*.{4}$/);
    expect(fx.sandbox.counters.creditsPosted).toEqual({ trigger: 1, creditApiIssue: 0, creditApiTopUp: 0, native: 0 });
    const trigger = fx.sandbox.requests.find((q) => q.path.includes('/workflows/execute/'));
    expect(trigger?.path).toBe(`/provider/v2/workflows/execute/${fx.sandbox.store.triggerId}`);
    expect(JSON.parse(trigger?.body ?? '')).toEqual({ email: 'alice@example.com', amount: 25 });
    // Credit API calls carry the provider header; the trigger gets no token; none gets the API's bearer token.
    for (const q of fx.sandbox.requests.filter((x) => x.path.startsWith('/provider'))) {
      const isTrigger = q.path.includes('/workflows/execute/');
      expect(q.headers['x-giftly-access-token']).toBe(isTrigger ? undefined : fx.sandbox.store.providerToken);
      expect(q.headers.authorization).toBeUndefined();
    }
    expect(fx.providerCalls()[0]).toBe('GET /v2/gift-cards/');
  });

  it('falls back to the credit API (top-up of the loyalty card) when the trigger does not post in time', async () => {
    fx = await fixture({ triggerDelayMs: null, fakeClock: true });
    const r = await fx.run([...aliceClaim('C-2', ['--trigger-wait', '1s', '--late-check', '1s']), '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ path: 'credit-api-top-up', balance: '35.00', fellBackFromTrigger: true, triggerPosted: true, possibleDoubleCredit: false });
    expect(fx.sandbox.counters.creditsPosted).toEqual({ trigger: 0, creditApiIssue: 0, creditApiTopUp: 1, native: 0 });
    const put = fx.sandbox.requests.find((q) => q.method === 'PUT');
    expect(put?.path).toBe(`/provider/v2/gift-cards/${fx.sandbox.loyaltyCard('cust_1001')?.giftCardId}`);
    expect(JSON.parse(put?.body ?? '')).toEqual({ shop_url: fx.sandbox.store.shopUrl, amount: 25, type: 'refund', order_id: '1001' });
    expect(out.notes.join(' ')).toMatch(/Waited 1 s for the trigger workflow to post the credit; it did not/);
    expect(fx.sandbox.loyaltyCard('cust_1001')?.balance).toBe(35);
  });

  it('uses the native gift card when neither a trigger id nor a token is configured', async () => {
    fx = await fixture({ unset: ['trigger-id', 'provider-token'] });
    const r = await fx.run(aliceClaim('C-3'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Path\tthe storefront's native gift card$/m);
    expect(fx.sandbox.counters.creditsPosted).toEqual({ trigger: 0, creditApiIssue: 0, creditApiTopUp: 0, native: 1 });
    const native = fx.sandbox.requests.find((q) => q.path === '/storefront/gift-cards');
    expect(native?.headers.authorization).toMatch(/^Bearer svc_at_/);
    expect(JSON.parse(native?.body ?? '')).toMatchObject({
      amount: 25,
      email: 'alice@example.com',
      name: 'Alice Example',
      subject: 'Gift Card for Claim #C-3',
    });
    expect(fx.sandbox.requests.some((q) => q.path.startsWith('/provider'))).toBe(false);
  });

  it('tops up an existing loyalty card, and creates a card with every field for a customer without one', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    const alice = await fx.run([...aliceClaim('C-4'), '--json']);
    expect(alice.code, alice.stderr).toBe(0);
    expect(JSON.parse(alice.stdout)).toMatchObject({ path: 'credit-api-top-up', balance: '35.00' });

    const bob = await fx.run([
      'giftcard',
      'issue',
      '--claim',
      'C-5',
      '--order',
      '1002',
      '--amount',
      '12.5',
      '--email',
      'bob@example.com',
      '--name',
      'Bob Example',
      '--customer-id',
      'cust_1002',
      '--yes',
      '--json',
    ]);
    expect(bob.code, bob.stderr).toBe(0);
    const out = JSON.parse(bob.stdout);
    expect(out).toMatchObject({ path: 'credit-api-issue', balance: '12.50' });
    expect(fx.sandbox.counters.creditsPosted).toEqual({ trigger: 0, creditApiIssue: 1, creditApiTopUp: 1, native: 0 });
    const post = fx.sandbox.requests.find((q) => q.method === 'POST' && q.path === '/provider/v2/gift-cards/issue/');
    const body = JSON.parse(post?.body ?? '');
    expect(body.shop_url).toBe(fx.sandbox.store.shopUrl);
    expect(body.gift_card.balance).toBe(12.5);
    expect(body.gift_card.note).toMatch(/Claim #C-5; order #1002/);
    expect(body.email_details).toMatchObject({ recipient: 'Bob Example', recipient_email: 'bob@example.com', subject: 'Gift Card for Claim #C-5' });
    expect(body.email_details.title).toMatch(/Order Protection/);
    expect(body.email_details.body).toMatch(/claim #C-5/);
    const card = fx.sandbox.giftCards.find((c) => c.giftCardId === out.cardId);
    expect(card).toMatchObject({ source: 'issue', balance: 12.5, subject: 'Gift Card for Claim #C-5' });
  });

  it('gives a bonus credit the bonus subject and keys it by order', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    const args = [
      'giftcard',
      'issue',
      '--bonus',
      '--order',
      '2001',
      '--amount',
      '5',
      '--email',
      'carol@example.com',
      '--name',
      'Carol Example',
      '--yes',
      '--json',
    ];
    const r = await fx.run(args);
    expect(r.code, r.stderr).toBe(0);
    const post = fx.sandbox.requests.find((q) => q.path === '/provider/v2/gift-cards/issue/');
    const body = JSON.parse(post?.body ?? '');
    expect(body.email_details.subject).toBe('Bonus Store Credit for Order #2001');
    expect(body.gift_card.note).toMatch(/order #2001/);
    const again = await fx.run(args);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/bonus credit for order #2001 was already issued/);
  });

  it('skips the trigger without --customer-id and says why', async () => {
    fx = await fixture({ triggerDelayMs: 50, fakeClock: true });
    const r = await fx.run([
      'giftcard',
      'issue',
      '--claim',
      'C-6',
      '--order',
      '1',
      '--amount',
      '1.00',
      '--email',
      'carol@example.com',
      '--name',
      'Carol',
      '--yes',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/trigger workflow is configured but skipped: it needs --customer-id/);
    expect(fx.sandbox.counters.creditsPosted.creditApiIssue).toBe(1);
    expect(fx.sandbox.requests.some((q) => q.path.includes('/workflows/'))).toBe(false);
  });
});

for (const ledger of BACKENDS) {
  describe(`giftcard issue: late trigger (${ledger} ledger)`, () => {
    it('reports a trigger that posts after the fallback as a possible double credit', async () => {
      fx = await fixture({ triggerDelayMs: 1800, fakeClock: true, ledger });
      const r = await fx.run([...aliceClaim('C-7', ['--trigger-wait', '1s', '--late-check', '4s']), '--json']);
      expect(r.code, r.stderr).toBe(3);
      const out = JSON.parse(r.stdout);
      expect(out.path).toBe('credit-api-top-up');
      expect(out.possibleDoubleCredit).toBe(true);
      expect(out.warnings[0]).toMatch(/may have been paid twice/);
      expect(r.stderr).toMatch(/WARNING: The customer may have been paid twice\. .*also added 25\.00 USD to loyalty card/);
      expect(fx.sandbox.counters.creditsPosted).toMatchObject({ trigger: 1, creditApiTopUp: 1 });
      expect(fx.sandbox.loyaltyCard('cust_1001')?.balance).toBe(60);
      const outcome = (await recordedLines(fx)).find((l) => l.type === 'outcome');
      expect(outcome).toMatchObject({ status: 'issued', possibleDoubleCredit: true });
      const history = await fx.run(['giftcard', 'history']);
      expect(history.stdout).toMatch(/claim C-7\t25\.00 USD\talice@example\.com\tissued, POSSIBLE DOUBLE CREDIT\tcredit-api-top-up/);
    });

    it('history --verify flags a late credit that arrived after the command finished', async () => {
      fx = await fixture({ triggerDelayMs: null, fakeClock: true, ledger });
      const r = await fx.run(aliceClaim('C-8', ['--trigger-wait', '1s', '--late-check', '1s']));
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/history --verify/);
      expect(r.stdout).not.toMatch(/possible double credit/);
      const clean = await fx.run(['giftcard', 'history', '--verify']);
      expect(clean.code, clean.stderr).toBe(0);
      expect(clean.stderr).toMatch(/Verified 1 issuance\(s\).*0 possible double/);
      // The workflow finally runs, long after opcli fell back: the provider credits the loyalty card.
      fx.sandbox.configure({ triggerDelayMs: 0 });
      const { request } = await import('undici');
      const late = await request(`${fx.sandbox.triggerUrl}/${fx.sandbox.store.triggerId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-giftly-access-token': fx.sandbox.store.providerToken },
        body: JSON.stringify({ email: 'alice@example.com', amount: 25 }),
      });
      await late.body.text();
      // On the injected clock a trigger due now is credited as its request is answered: nothing to wait for.
      expect(fx.sandbox.counters.creditsPosted.trigger).toBe(1);
      const verify = await fx.run(['giftcard', 'history', '--verify', '--json']);
      expect(verify.code).toBe(3);
      const doc = JSON.parse(verify.stdout);
      expect(doc.verify).toEqual([expect.objectContaining({ result: 'possible-double-credit' })]);
      expect(verify.stderr).toMatch(/WARNING: The customer may have been paid twice/);
      expect((await recordedLines(fx)).filter((l) => l.type === 'warning')).toHaveLength(1);
      const shown = await fx.run(['giftcard', 'history', '--claim', 'C-8', '--json']);
      expect(JSON.parse(shown.stdout).issuances[0].possibleDoubleCredit).toBe(true);
    });
  });
}

describe('giftcard issue: input', () => {
  it.each([
    ['0', /above zero/],
    ['-5', /above zero/],
    ['1.234', /at most two decimal places/],
    ['abc', /decimal amount/],
    ['1e3', /decimal amount/],
  ])('refuses the amount %s before sending anything', async (amount, why) => {
    fx = await fixture();
    const r = await fx.run(['giftcard', 'issue', '--claim', 'C-9', '--order', '1', '--amount', amount, '--email', 'a@example.com', '--name', 'A', '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--amount/);
    expect(r.stderr).toMatch(why);
    expect(fx.sandbox.requests).toHaveLength(0);
  });

  it('refuses an empty, blank or garbled --claim, --order, --name or --customer-id by name: nothing sent, nothing in the ledger (F2)', async () => {
    fx = await fixture();
    const cases: [string, string][] = [];
    for (const flag of ['--claim', '--order', '--name', '--customer-id', '--email']) {
      for (const value of ['', ' ', '\t', 'C\x1b[2J1', 'C\x07-1', 'C\r1', 'C\uFFFD1']) cases.push([flag, value]);
    }
    for (const [flag, value] of cases) {
      const args = aliceClaim('C-20');
      args[args.indexOf(flag) + 1] = value;
      const r = await fx.run(args);
      expect(r.code, `${flag} ${JSON.stringify(value)}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^Error: ${flag} (is empty|is blank|holds a control character|holds U\\+FFFD)`, 'm'));
      expect(r.stderr).not.toContain('\x1b');
    }
    // --bonus with an empty --claim is still both.
    const both = await fx.run([
      'giftcard',
      'issue',
      '--bonus',
      '--claim',
      '',
      '--order',
      '1001',
      '--amount',
      '5',
      '--email',
      'a@example.com',
      '--name',
      'A',
      '--yes',
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--claim .*--bonus, not both/);
    expect(fx.sandbox.requests).toHaveLength(0);
    expect(() => statSync(join(fx?.dir ?? '', 'giftcard-ledger.jsonl'))).toThrow();
  });

  it('on a terminal, a garbled answer is asked again, not issued (F2)', async () => {
    fx = await fixture();
    const refused: string[] = [];
    const answers: Record<string, string[]> = {
      'Order number': ['10\x1b[2J01', '1001'],
      "Customer's name": ['Alice\uFFFD', 'Alice Example'],
      'storefront id': ['cust\x07', 'cust_1001'],
    };
    const prompter = {
      input: async (o: { message: string; validate?: (v: string) => true | string }) => {
        const key = Object.keys(answers).find((k) => o.message.includes(k));
        if (!key) throw new Error(`unexpected prompt: ${o.message}`);
        for (const answer of answers[key] ?? []) {
          const verdict = o.validate ? o.validate(answer) : true;
          if (verdict === true) return answer;
          refused.push(verdict);
        }
        throw new Error(`no acceptable answer for ${key}`);
      },
      password: async () => '',
      confirm: async () => true,
      select: async () => 'keep' as never,
    };
    const r = await fx.run(['giftcard', 'issue', '--claim', 'C-21', '--amount', '25.00', '--email', 'alice@example.com', '--dry-run'], { tty: true, prompter });
    expect(r.code, r.stderr).toBe(0);
    expect(refused).toEqual([
      'the order number holds a control character',
      'the name holds U+FFFD, the mark of bytes that were not UTF-8 (check the encoding it was typed or pasted in)',
      'the customer id holds a control character',
    ]);
    expect(r.stdout).toContain('"subject":"Gift Card for Claim #C-21"');
    expect(fx.sandbox.requests).toHaveLength(0);
  });

  it('adds 0.10 and 0.20 to exactly 0.30', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    const base = ['--order', '3', '--email', 'bob@example.com', '--name', 'Bob', '--customer-id', 'cust_1002', '--yes', '--json'];
    const a = await fx.run(['giftcard', 'issue', '--claim', 'C-10', '--amount', '0.1', ...base]);
    const b = await fx.run(['giftcard', 'issue', '--claim', 'C-11', '--amount', '0.20', ...base]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(JSON.parse(a.stdout).path).toBe('credit-api-issue');
    expect(JSON.parse(b.stdout)).toMatchObject({ path: 'credit-api-top-up', balance: '0.30' });
    const put = fx.sandbox.requests.find((q) => q.method === 'PUT');
    expect(JSON.parse(put?.body ?? '').amount).toBe(0.2);
  });

  it('refuses a bad e-mail', async () => {
    fx = await fixture();
    const r = await fx.run(['giftcard', 'issue', '--claim', 'C-12', '--order', '1', '--amount', '5', '--email', 'not-an-email', '--name', 'A', '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Invalid --email "not-an-email"/);
    expect(fx.sandbox.requests).toHaveLength(0);
  });

  it('refuses without --yes when nobody can confirm, and records nothing', async () => {
    fx = await fixture();
    const args = aliceClaim('C-13').filter((a) => a !== '--yes');
    const r = await fx.run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--yes/);
    expect(fx.sandbox.requests).toHaveLength(0);
    expect(() => statSync(join(fx?.dir ?? '', 'giftcard-ledger.jsonl'))).toThrow();
  });

  it('asks on a terminal with a summary, and issues only after yes', async () => {
    fx = await fixture({ triggerDelayMs: 50, fakeClock: true });
    const args = aliceClaim('C-14').filter((a) => a !== '--yes');
    const no = await fx.run(args, { tty: true, prompter: scriptedPrompter({ 'Issue 25.00 USD to Alice Example <alice@example.com>?': false }) });
    expect(no.code).toBe(1);
    expect(no.stderr).toMatch(
      /Amount\s+25\.00 USD\n\s+Customer\s+Alice Example\n\s+E-mail\s+alice@example\.com\n\s+Customer id\s+cust_1001\n\s+Reference\s+claim C-14, order #1001\n/,
    );
    // A terminal wraps notices at its width (80 here).
    expect(no.stderr.replace(/\s*\n\s*/g, ' ')).toMatch(/First path\s+the trigger workflow, then the credit API if it does not post within 4\.5 s/);
    expect(no.stderr.trimEnd().split('\n').at(-1)).toBe('Nothing was issued.');
    expect(no.stderr).not.toMatch(/Error|Cancelled/);
    expect(() => statSync(join(fx?.dir ?? '', 'giftcard-ledger.jsonl'))).toThrow();
    expect(fx.sandbox.requests).toHaveLength(0);
    const yes = await fx.run(args, { tty: true, prompter: scriptedPrompter({ 'Issue 25.00': true }) });
    expect(yes.code, yes.stderr).toBe(0);
    expect(fx.sandbox.counters.creditsPosted.trigger).toBe(1);
  });

  it('--dry-run prints the requests with the token masked and sends nothing', async () => {
    fx = await fixture();
    const r = await fx.run([...aliceClaim('C-15'), '--dry-run', '--verbose']);
    expect(r.code, r.stderr).toBe(0);
    expect(fx.sandbox.requests).toHaveLength(0);
    expect(r.stdout).toContain(`POST ${fx.sandbox.triggerUrl}/${fx.sandbox.store.triggerId}`);
    expect(r.stdout).toContain('x-giftly-access-token: ***');
    expect(r.stdout).toContain(`PUT ${fx.sandbox.providerUrl}/v2/gift-cards/{gift_card_id}`);
    expect(r.stdout).toContain('"subject":"Gift Card for Claim #C-15"');
    const json = await fx.run([...aliceClaim('C-15'), '--dry-run', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ dryRun: true, firstPath: 'trigger', amount: '25.00' });
  });
});

for (const ledger of BACKENDS) {
  describe(`giftcard issue: exactly once (${ledger} ledger)`, () => {
    /**
     * A fixture on the credit API path (no trigger id) whose first top-up fails with `status`: `phase`
     * 'before' refuses it (no money moved), 'after' applies it and then loses the answer.
     */
    async function failingTopUp(phase: 'before' | 'after', status: number): Promise<Fixture> {
      const started = await fixture({ unset: ['trigger-id'], ledger });
      started.sandbox.setFaults([{ method: 'PUT', path: '/provider/v2/gift-cards/', phase, status, count: 1 }]);
      return started;
    }

    it('refuses a second issuance for the same claim, showing the first, unless --force', async () => {
      fx = await fixture({ unset: ['trigger-id'], ledger });
      const first = await fx.run([...aliceClaim('C-16'), '--json']);
      expect(first.code, first.stderr).toBe(0);
      const card = JSON.parse(first.stdout).cardId;
      const second = await fx.run(aliceClaim('C-16'));
      expect(second.code).toBe(3);
      expect(second.stderr).toMatch(/Store credit for claim C-16 was already issued/);
      expect(second.stderr).toContain(`card ${card}`);
      expect(second.stderr).toMatch(/--force/);
      expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(1);
      const forced = await fx.run([...aliceClaim('C-16'), '--force']);
      expect(forced.code, forced.stderr).toBe(0);
      expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(2);
      const lines = await recordedLines(fx);
      expect(lines.map((l) => l.type)).toEqual(['attempt', 'outcome', 'attempt', 'outcome']);
      expect(lines[2]).toMatchObject({
        forced: true,
        key: `shop:${fx.sandbox.store.shopUrl}|store:${fx.sandbox.store.storeId}|claim:c-16`,
        profile: 'default',
      });
      if (ledger === 'file') expect((statSync(join(fx.dir, 'giftcard-ledger.jsonl')).mode & 0o777).toString(8)).toBe('600');
    });

    // A line written by hand into the file: the database's case is record-db.test.ts (the database stopped between attempt and outcome).
    it.runIf(ledger === 'file')('refuses when an earlier attempt has no outcome on record', async () => {
      fx = await fixture();
      const { writeFileSync } = await import('node:fs');
      const attempt = {
        v: 1,
        issuance: 'i-1',
        key: 'claim:C-17',
        at: '2025-01-01T00:00:00.000Z',
        user: 'someone',
        type: 'attempt',
        claimId: 'C-17',
        orderNumber: '1001',
        bonus: false,
        amountCents: 2500,
        amount: '25.00',
        email: 'alice@example.com',
        name: 'Alice',
        profile: 'default',
        firstPath: 'trigger',
        forced: false,
        host: 'h',
      };
      writeFileSync(join(fx.dir, 'giftcard-ledger.jsonl'), `${JSON.stringify(attempt)}\n`, { mode: 0o600 });
      const r = await fx.run(aliceClaim('C-17'));
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/has no recorded outcome \(2025-01-01T00:00:00.000Z by someone/);
      expect(r.stderr).toMatch(/Check the customer's card/);
      expect(fx.sandbox.requests).toHaveLength(0);
    });

    it('records a failed attempt as failed, and a later retry is allowed', async () => {
      fx = await fixture({ unset: ['trigger-id'], ledger });
      await fx.run(['config', 'set', 'shop-url', 'wrong-shop.example']);
      const r = await fx.run(aliceClaim('C-18'));
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/Store domain not found/);
      expect(r.stderr).toMatch(/archived or deactivated, or its domain does not match the storefront/);
      expect((await recordedLines(fx)).map((l) => l.status ?? l.type)).toEqual(['attempt', 'failed']);
      await fx.run(['config', 'set', 'shop-url', fx.sandbox.store.shopUrl]);
      const retry = await fx.run(aliceClaim('C-18'));
      expect(retry.code, retry.stderr).toBe(0);
    });

    it('records a refused top-up as failed, since a 4xx moved no money', async () => {
      fx = await failingTopUp('before', 422);
      const r = await fx.run(aliceClaim('C-23'));
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/Adding credit to gift card .* was refused by the gift card provider \(422\)/);
      expect((await recordedLines(fx)).map((l) => l.status ?? l.type)).toEqual(['attempt', 'failed']);
      const retry = await fx.run(aliceClaim('C-23'));
      expect(retry.code, retry.stderr).toBe(0);
      expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(1);
    });

    it('records a lost answer as uncertain and refuses to pay again', async () => {
      fx = await failingTopUp('after', 502);
      const r = await fx.run(aliceClaim('C-19'));
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/may or may not have been issued/);
      expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(1);
      expect(fx.sandbox.requests.filter((q) => q.method === 'PUT')).toHaveLength(1);
      const again = await fx.run(aliceClaim('C-19'));
      expect(again.code).toBe(3);
      expect(again.stderr).toMatch(/ended with an unknown outcome/);
      expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(1);
    });
  });
}

describe('giftcard issue: Ctrl-C', () => {
  it('records an interrupted issuance after the trigger was posted as uncertain, exit 130', async () => {
    fx = await fixture({ triggerDelayMs: null, fakeClock: true });
    const controller = new AbortController();
    const clock = fx.clock;
    // Ctrl-C once the trigger has reached the provider, while opcli polls the loyalty card: at its
    // first wait after the trigger, in virtual time, as a person's Ctrl-C would land during it.
    const sleep = async (ms: number, signal?: AbortSignal) => {
      if (fx?.sandbox.requests.some((q) => q.path.includes('/workflows/execute/'))) {
        controller.abort(Object.assign(new Error('Interrupted'), { name: 'AbortError' }));
        throw signal?.reason ?? controller.signal.reason;
      }
      clock.advance(ms);
    };
    const r = await fx.run(aliceClaim('C-22', ['--trigger-wait', '10s']), { signal: controller.signal, sleep });
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/may have been issued; recorded as uncertain/);
    const outcome = ledgerLines(fx.dir).find((l) => l.type === 'outcome');
    expect(outcome).toMatchObject({ status: 'uncertain', triggerPosted: true });
    expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(0);
  });
});

describe('giftcard: provider errors and secrets', () => {
  it('explains a wrong token, and never prints it', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    const wrong = 'gly_wrong_token_0123456789';
    await fx.run(['config', 'set', 'provider-token', '--stdin'], { stdin: wrong });
    const r = await fx.run([...aliceClaim('C-20'), '--verbose']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/API key not found/);
    expect(r.stderr).toMatch(/wrong, expired or revoked/);
    expect(r.stderr).toContain('opcli config set provider-token --stdin');
    expect(r.stderr + r.stdout).not.toContain(wrong);
  });

  it('explains "balance update failure" with its causes', async () => {
    fx = await fixture();
    const { quietDeps } = await import('../helpers.js');
    const { providerClient, ProviderRefusedError } = await import('../../src/giftcard/provider.js');
    const deps = quietDeps({ OPCLI_CONFIG_DIR: fx.dir });
    const { client } = await providerClient(deps);
    const body = { shop_url: fx.sandbox.store.shopUrl, amount: 5, type: 'refund' as const, order_id: '1' };
    for (const id of [fx.sandbox.fixtures.expiredGiftCardId, fx.sandbox.fixtures.unlinkedGiftCardId, 'gc_missing']) {
      const error = await client.topUp(id, body).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderRefusedError);
      expect((error as Error).message).toMatch(/balance update failure/);
      expect((error as InstanceType<typeof ProviderRefusedError>).hint).toMatch(
        /gift card id does not exist, the card has expired, the card is not linked to the customer id, or the amount/,
      );
    }
    await deps.dispose();
  });

  it('keeps the token out of --verbose traces of a successful run', async () => {
    fx = await fixture({ triggerDelayMs: 50, fakeClock: true });
    const r = await fx.run([...aliceClaim('C-21'), '--verbose', '--show-code']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/x-giftly-access-token: \*\*\*/);
    expect(r.stdout).toContain(`Code\t${fx.sandbox.giftCards.find((c) => c.customerId === 'cust_1001' && c.source === 'seed' && c.balance === 35)?.code}`);
  });
});
