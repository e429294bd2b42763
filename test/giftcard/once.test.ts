/**
 * One credit per claim or order however a person types, copies or reruns it (issue 28): the
 * variants the issue tried, similar credits, the amount ceiling and grouped amounts, and history on
 * 80- and 120-column terminals. Whole commands against the sandbox, asserting what it received.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEDGER_FILE } from '../../src/giftcard/ledger.js';
import { displayWidth } from '../../src/text/wrap.js';
import { runBinary, scriptedPrompter } from '../helpers.js';
import { aliceClaim, BACKENDS, type Fixture, fixture, giftcardSuite, ledgerLines } from './fixture.js';

let fx: Fixture | undefined;
giftcardSuite();

/** A credit for a claim to Alice (she has a loyalty card: the credit API tops it up). */
const alice = aliceClaim;

/** A bonus credit for an order to Carol (no card: the credit API creates one). */
function carolBonus(order: string, amount = '5', extra: string[] = []): string[] {
  return ['giftcard', 'issue', '--bonus', '--order', order, '--amount', amount, '--email', 'carol@example.com', '--name', 'Carol Example', '--yes', ...extra];
}

/** Requests that move money, as "METHOD path". */
const moneyCalls = (f: Fixture) => f.providerCalls().filter((c) => !c.startsWith('GET'));

// The file ledger and the team's record in PostgreSQL (fixture.ts BACKENDS): the same commands, the same assertions.
for (const ledger of BACKENDS) {
  describe(`the same claim or order, however it is written (${ledger} ledger)`, () => {
    it('c-2001 and C‐2001 (U+2010) after C-2001 are held with the earlier record, exit 3, nothing sent; --force pays', async () => {
      fx = await fixture({ unset: ['trigger-id'], ledger });
      const first = await fx.run([...alice('C-2001'), '--json']);
      expect(first.code, first.stderr).toBe(0);
      const card = JSON.parse(first.stdout).cardId as string;
      expect(moneyCalls(fx)).toHaveLength(1);

      for (const variant of ['c-2001', 'C\u20102001', ' C\u22122001 ', 'Ｃ－２００１']) {
        const r = await fx.run(alice(variant));
        expect(r.code, `${variant}: ${r.stderr}`).toBe(3);
        expect(r.stderr).toMatch(/Store credit for claim .* was already issued \(recorded as "C-2001": the same id written differently\)/);
        // The earlier record: when, who, which profile, how much, to whom, which card.
        expect(r.stderr).toMatch(
          /\(\d{4}-\d\d-\d\dT[\d:.]+Z by \S+ with profile "default": 25\.00 USD to alice@example\.com for claim C-2001, order #1001, issued via credit-api-top-up/,
        );
        expect(r.stderr).toContain(`(card ${card})`);
        expect(r.stderr).toMatch(/--force/);
      }
      expect(moneyCalls(fx)).toHaveLength(1);
      expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(1);

      // The issue's three payments, now only on purpose: --force.
      for (const variant of ['c-2001', 'C\u20102001']) expect((await fx.run(alice(variant, ['--force']))).code).toBe(0);
      expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(3);

      const verify = await fx.run(['giftcard', 'history', '--verify']);
      expect(verify.code).toBe(3);
      expect(verify.stderr).toMatch(/: 2 possible double credit\(s\)/);
      expect(verify.stdout.match(/POSSIBLE DOUBLE CREDIT/g)).toHaveLength(2);

      const listed = await fx.run(['giftcard', 'history', '--claim', 'C-2001']);
      expect(listed.code).toBe(0);
      expect(listed.stdout.trim().split('\n')).toHaveLength(3);
      for (const written of ['claim C-2001\t', 'claim c-2001\t', 'claim C\u20102001\t']) expect(listed.stdout).toContain(written);
      const json = JSON.parse((await fx.run(['giftcard', 'history', '--claim', 'c\u20112001', '--json'])).stdout);
      expect(json.issuances.map((i: { duplicateOf: string | null }) => i.duplicateOf === null)).toEqual([true, false, false]);
    });

    it('two processes at once, one typing C-2101 and the other c‐2101: one pays, the other is held (exit 3)', async () => {
      fx = await fixture({ unset: ['trigger-id'], ledger });
      const env = { ...fx.env, CI: '1' };
      const [a, b] = await Promise.all([runBinary(alice('C-2101'), { env }), runBinary(alice('c\u20102101'), { env })]);
      expect([a.code, b.code].sort(), a.stderr + b.stderr).toEqual([0, 3]);
      const held = a.code === 3 ? a : b;
      expect(held.stderr).toMatch(/recorded as "(C-2101|c‐2101)": the same id written differently\) (has no recorded outcome|\()/);
      expect(moneyCalls(fx)).toHaveLength(1);
      expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(1);
    });

    it('--bonus --order "#1003" after --order 1003 is held; the card says "order #1003", never "##1003"', async () => {
      fx = await fixture({ unset: ['trigger-id'], ledger });
      expect((await fx.run(carolBonus('1003'))).code).toBe(0);
      const again = await fx.run(carolBonus('#1003'));
      expect(again.code).toBe(3);
      expect(again.stderr).toMatch(/Store credit for bonus credit for order #1003 was already issued \(recorded as "1003"/);
      expect(fx.sandbox.counters.creditsPosted.creditApiIssue).toBe(1);

      const hashed = await fx.run(carolBonus('#1004', '7.50'));
      expect(hashed.code, hashed.stderr).toBe(0);
      expect(hashed.stderr).toMatch(/Issued 7\.50 USD for bonus credit for order #1004 to Carol Example/);
      const posts = fx.sandbox.requests.filter((q) => q.path === '/provider/v2/gift-cards/issue/').map((q) => JSON.parse(q.body));
      expect(posts).toHaveLength(2);
      const card = posts[1];
      expect(card.email_details.subject).toBe('Bonus Store Credit for Order #1004');
      expect(card.email_details.body).toContain('for your order #1004.');
      expect(card.gift_card.note).toMatch(/^Bonus store credit; order #1004;/);
      expect(JSON.stringify(posts)).not.toContain('##');
      const held = await fx.run(carolBonus('1004', '7.50'));
      expect(held.code).toBe(3);
      expect(fx.sandbox.counters.creditsPosted.creditApiIssue).toBe(2);
    });
  });
}

describe('a similar credit is held', () => {
  /** An attempt and its outcome for Alice, `daysAgo` days before now, as an earlier run recorded them. */
  function earlierCredit(f: Fixture, claim: string, daysAgo: number): void {
    const at = new Date(Date.now() - daysAgo * 86_400_000).toISOString();
    const key = `shop:${f.sandbox.store.shopUrl}|store:${f.sandbox.store.storeId}|claim:${claim.toLowerCase()}`;
    const common = { v: 1, issuance: `i-${claim}`, key, at, user: 'maria' };
    const lines = [
      {
        ...common,
        type: 'attempt',
        claimId: claim,
        orderNumber: '1001',
        bonus: false,
        amountCents: 2500,
        amount: '25.00',
        currency: 'USD',
        email: 'Alice@Example.com',
        name: 'Alice Example',
        profile: 'support',
        shopUrl: f.sandbox.store.shopUrl,
        storeId: f.sandbox.store.storeId,
        firstPath: 'credit-api',
        forced: false,
        host: 'desk-2',
      },
      {
        ...common,
        type: 'outcome',
        status: 'issued',
        path: 'credit-api-top-up',
        cardId: 'gc_earlier',
        triggerPosted: false,
        possibleDoubleCredit: false,
        notes: [],
      },
    ];
    writeFileSync(join(f.dir, LEDGER_FILE), lines.map((l) => `${JSON.stringify(l)}\n`).join(''), { mode: 0o600, flag: 'a' });
  }

  it('the same customer and amount within 30 days under another claim id: both records shown, exit 3, nothing sent; --force goes on', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    earlierCredit(fx, 'C-3001', 29);
    const r = await fx.run(alice('C-3002'));
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/Held: a credit of the same amount to the same customer was issued within 30 days under another id/);
    expect(r.stderr).toMatch(
      /Earlier: .* by maria with profile "support": 25\.00 USD to Alice@Example\.com for claim C-3001, order #1001, issued via credit-api-top-up \(card gc_earlier\)/,
    );
    expect(r.stderr).toMatch(/Now: +25\.00 USD to alice@example\.com for claim C-3002, order #1001/);
    expect(r.stderr).toMatch(/--force/);
    expect(moneyCalls(fx)).toEqual([]);
    expect(fx.sandbox.requests).toHaveLength(0);

    // Another amount is another credit.
    expect((await fx.run(alice('C-3003', [], '20.00'))).code).toBe(0);
    const forced = await fx.run(alice('C-3002', ['--force']));
    expect(forced.code, forced.stderr).toBe(0);
    expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(2);
  });

  it('a credit of the same amount older than 30 days does not hold', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    earlierCredit(fx, 'C-3101', 31);
    const r = await fx.run(alice('C-3102'));
    expect(r.code, r.stderr).toBe(0);
    expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(1);
  });
});

for (const ledger of BACKENDS) {
  describe(`amounts (${ledger} ledger)`, () => {
    it('an amount above max-amount (default 1,000.00) is refused with exit 2 naming the setting; --allow-large and a raised ceiling go on', async () => {
      fx = await fixture({ unset: ['trigger-id'], ledger });
      const slip = await fx.run(alice('C-4001', [], '25000'));
      expect(slip.code).toBe(2);
      expect(slip.stderr).toMatch(/The amount 25,000\.00 USD is above the ceiling of profile "default" \(setting max-amount: 1,000\.00 USD, the default\)/);
      expect(slip.stderr).toMatch(/--allow-large/);
      expect(slip.stderr).toMatch(/opcli config set max-amount/);
      expect(fx.sandbox.requests).toHaveLength(0);

      // On a terminal the confirmation shows the amount grouped; no says nothing is paid.
      const prompter = scriptedPrompter({ 'Issue 25,000.00 USD to Alice Example': false });
      const asked = await fx.run(
        alice('C-4001', ['--allow-large'], '25000').filter((a) => a !== '--yes'),
        { tty: true, prompter, env: { NO_COLOR: '1' } },
      );
      expect(asked.code).toBe(1);
      expect(asked.stderr).toMatch(/^ {2}Amount +25,000\.00 USD$/m);
      expect(moneyCalls(fx)).toEqual([]);

      const large = await fx.run(alice('C-4001', ['--allow-large'], '25000'));
      expect(large.code, large.stderr).toBe(0);
      expect(large.stderr).toMatch(/Issued 25,000\.00 USD for claim C-4001/);
      expect(fx.sandbox.loyaltyCard('cust_1001')?.balance).toBe(25_010);

      expect((await fx.run(['config', 'set', 'max-amount', '50,000'])).code).toBe(0);
      expect((await fx.run(['config', 'get', 'max-amount'])).stdout.trim()).toBe('50000.00');
      expect((await fx.run(alice('C-4002', [], '30000'))).code).toBe(0);
      const over = await fx.run(alice('C-4003', [], '50000.01'));
      expect(over.code).toBe(2);
      expect(over.stderr).toMatch(/setting max-amount: 50,000\.00 USD\)/);

      const bad = await fx.run(['config', 'set', 'max-amount', 'lots']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/max-amount: expected an amount above zero/);
    });
  });
}

describe('giftcard history on a terminal', () => {
  it.each([80, 120])('at %i columns never cuts the status or the amount, and the double-credit flag has its own line', async (columns) => {
    fx = await fixture({ unset: ['trigger-id'] });
    expect((await fx.run(alice('C-5001', ['--allow-large'], '1234.56'))).code).toBe(0);
    expect((await fx.run(alice('c-5001', ['--force', '--allow-large'], '1234.56'))).code).toBe(0);
    const uncertainRecord = ledgerLines(fx.dir).length;
    expect(uncertainRecord).toBe(4);
    const r = await fx.run(['giftcard', 'history', '--utc'], { tty: true, env: { NO_COLOR: '1', COLUMNS: String(columns) } });
    expect(r.code, r.stderr).toBe(0);
    for (const line of r.stdout.split('\n')) expect(displayWidth(line), line).toBeLessThanOrEqual(columns);
    expect(r.stdout).not.toContain('…');
    const firsts = r.stdout.split('\n').filter((l) => /^\d{4}-/.test(l));
    expect(firsts).toHaveLength(2);
    for (const line of firsts) expect(line).toMatch(/ UTC {2}issued {2}1,234\.56 USD {2}claim /);
    expect(r.stdout).toMatch(/^ {4}POSSIBLE DOUBLE CREDIT: this claim or order was paid before \(issuance\s+[0-9a-f-]{36}\)$/m);
    expect(r.stdout).toMatch(/^ {4}alice@example\.com · card \S+ \(credit-api-top-up\) · profile default ·\s+user \S+/m);
  });

  it('a pipe still gets one tab-separated line per issuance, the amount grouped', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    expect((await fx.run(alice('C-5101', ['--allow-large'], '2500'))).code).toBe(0);
    const r = await fx.run(['giftcard', 'history']);
    expect(r.stdout).toMatch(/\tclaim C-5101\t2,500\.00 USD\talice@example\.com\tissued\t/);
    expect(readFileSync(join(fx.dir, LEDGER_FILE), 'utf8')).toContain('"amount":"2500.00"');
  });
});
