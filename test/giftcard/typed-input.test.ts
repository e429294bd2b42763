/**
 * What a person types into `giftcard issue` (issue 39, rows 8 and 9): a misspelt e-mail domain is
 * never paid under --yes alone, and an interactive issuance for a claim or order already paid is
 * refused as soon as its id is typed, before the remaining questions.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEDGER_FILE } from '../../src/giftcard/ledger.js';
import { scriptedPrompter } from '../helpers.js';
import { aliceClaim, type Fixture, fixture, giftcardSuite, ledgerLines } from './fixture.js';

let fx: Fixture | undefined;
giftcardSuite();

/** Requests that move money, as "METHOD path". */
const moneyCalls = (f: Fixture) => f.providerCalls().filter((c) => !c.startsWith('GET'));

function dave(extra: string[] = []): string[] {
  return ['giftcard', 'issue', '--claim', 'C-801', '--order', '801', '--amount', '5', '--email', 'dave@gmial.com', '--name', 'Dave', '--yes', ...extra];
}

describe('a misspelt e-mail domain under --yes', () => {
  it('is refused, exit 2, naming the suggestion and --email-confirmed: nothing sent, nothing recorded', async () => {
    fx = await fixture({ triggerDelayMs: 0, fakeClock: true });
    const r = await fx.run(dave());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/The e-mail dave@gmial\.com looks misspelt: did you mean dave@gmail\.com\? Nothing was sent\./);
    expect(r.stderr).toMatch(/pass --email dave@gmail\.com; if dave@gmial\.com is right as typed, pass --email-confirmed as well/);
    expect(fx.sandbox.requests).toHaveLength(0);
    expect(existsSync(join(fx.dir, LEDGER_FILE))).toBe(false);
  });

  it('is paid to the address as typed with --email-confirmed', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    const r = await fx.run(dave(['--email-confirmed', '--json']));
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).customer.email).toBe('dave@gmial.com');
    expect(moneyCalls(fx)).toEqual(['POST /v2/gift-cards/issue/']);
  });

  it('the review case (alice@exmaple.com with the right customer id) pays nothing', async () => {
    fx = await fixture({ triggerDelayMs: null, fakeClock: true });
    const args = aliceClaim('TYPO-1').map((a) => (a === 'alice@example.com' ? 'alice@exmaple.com' : a));
    const r = await fx.run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/did you mean alice@example\.com\?/);
    expect(fx.sandbox.requests).toHaveLength(0);
  });

  it('--dry-run warns and shows the plan; it sends nothing', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    const r = await fx.run(dave(['--dry-run']));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /Warning: the e-mail dave@gmial\.com looks misspelt \(did you mean dave@gmail\.com\?\); a real run is refused without --email-confirmed/,
    );
    expect(fx.sandbox.requests).toHaveLength(0);
  });

  it('on a terminal, an e-mail typed at the prompt is asked about even with --yes, and the answer is used', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    const prompter = scriptedPrompter({ "Customer's e-mail": 'dave@gmial.com', 'Did you mean dave@gmail.com?': 'suggested', 'storefront id': '' });
    const args = dave().filter((a, i, all) => a !== '--email' && all[i - 1] !== '--email');
    const r = await fx.run(args, { tty: true, prompter });
    expect(r.code, r.stderr).toBe(0);
    expect(prompter.asked).toHaveLength(3);
    expect(ledgerLines(fx.dir)[0]).toMatchObject({ type: 'attempt', email: 'dave@gmail.com' });
  });
});

describe('interactive issuance for a claim or order already paid', () => {
  it('" c-2001" after C-2001 is refused (exit 3) right after the claim id, before any other question', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    expect((await fx.run(aliceClaim('C-2001'))).code).toBe(0);
    const before = fx.sandbox.requests.length;
    const prompter = scriptedPrompter({ 'Claim id': ' c-2001' });
    const r = await fx.run(['giftcard', 'issue'], { tty: true, prompter });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/Store credit for claim c-2001 was already issued \(recorded as "C-2001"/);
    expect(prompter.asked).toEqual(['Claim id (the claim resolved with store credit):']);
    expect(fx.sandbox.requests).toHaveLength(before);
  });

  it('a bonus for order #1003 after 1003 is refused right after the order number', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    const bonus = ['giftcard', 'issue', '--bonus', '--order', '1003', '--amount', '5', '--email', 'carol@example.com', '--name', 'Carol', '--yes'];
    expect((await fx.run(bonus)).code).toBe(0);
    const prompter = scriptedPrompter({ 'Order number': '#1003' });
    const r = await fx.run(['giftcard', 'issue', '--bonus'], { tty: true, prompter });
    expect(r.code).toBe(3);
    expect(prompter.asked).toHaveLength(1);
    expect(r.stderr).toMatch(/opcli giftcard history --order '#1003'/);
  });

  it('a claim given by flag is refused before the first question', async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    expect((await fx.run(aliceClaim('C-2002'))).code).toBe(0);
    const prompter = scriptedPrompter({});
    const r = await fx.run(['giftcard', 'issue', '--claim', 'C-2002'], { tty: true, prompter });
    expect(r.code).toBe(3);
    expect(prompter.asked).toEqual([]);
  });
});
