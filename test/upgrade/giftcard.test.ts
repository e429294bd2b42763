/**
 * Issue 40, "upgrade without repaying": every store credit opcli 0.2.0 issued, started or lost the
 * answer of (its own build, its ledger: test/fixtures/0.2.0) is held by today's built binary when the
 * same command runs again, with nothing sent to the provider or the storefront; one the provider
 * refused (nothing paid) is issued again, once; `giftcard history` lists all of them as 0.2.0
 * recorded them.
 */
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { actions, flagOf, oldFiles, opcli, type Upgraded, upgradeSuite } from './fixture.js';

let sandbox: Sandbox;
let up: Upgraded;
const old = oldFiles('0.2.0');
upgradeSuite(old, (s) => ({ sandbox, up } = s));

const issues = old.stepsOf('issue');
/** Issuances that paid or may have paid: issued, uncertain, or an attempt with no outcome. */
const held = issues.filter((s) => old.outcomeOf(s.argv).status !== 'failed');
const failed = issues.filter((s) => !held.includes(s));

/** How today's opcli refuses to pay again, by what 0.2.0 recorded. */
const REFUSAL: Record<string, string> = {
  issued: 'was already issued',
  uncertain: 'ended with an unknown outcome',
  attempt: 'has no recorded outcome',
};

/** The claim or bonus an issuance's command line is for, as opcli names it. */
const subject = (argv: string[]) => (flagOf(argv, '--claim') ? `claim ${flagOf(argv, '--claim')}` : `bonus credit for order #${flagOf(argv, '--order')}`);

describe('a 0.2.0 issuance run again after the upgrade', () => {
  it('the fixtures hold credits by the trigger, both credit API paths and a bonus, one killed, one refused, one whose answer was lost', () => {
    const sent = issues.map((s) => Object.keys(s.sent).filter((k) => !k.startsWith('GET ')));
    // Ids at the end of a path (the trigger's, a card's) are the 0.2.0 sandbox's.
    expect(sent.flat().map((k) => k.replace(/\/(gc_\w+|[0-9a-f-]{36})$/, '/{id}'))).toEqual([
      'POST /provider/v2/workflows/execute/{id}',
      'POST /provider/v2/workflows/execute/{id}',
      'PUT /provider/v2/gift-cards/{id}',
      'POST /provider/v2/gift-cards/issue/',
      'POST /provider/v2/gift-cards/issue/',
      'POST /provider/v2/gift-cards/issue/',
      'POST /provider/v2/gift-cards/issue/',
    ]);
    expect(issues.map((s) => old.outcomeOf(s.argv).status)).toEqual(['issued', 'attempt', 'issued', 'issued', 'issued', 'failed', 'uncertain']);
  });

  it.each(held.map((s) => [s.name, s.argv] as const))('%s: held (exit 3), nothing sent, the earlier record named', async (_name, argv) => {
    const res = await opcli(up, argv);
    expect(res.code, res.stderr).toBe(3);
    const recorded = old.outcomeOf(argv).status;
    expect(res.stderr).toContain(subject(argv));
    expect(res.stderr).toContain(REFUSAL[recorded]);
    if (recorded === 'issued') expect(res.stderr).toContain('Nothing was sent.');
    expect(res.stdout).toBe('');
    expect(actions(sandbox)).toEqual([]);
  });

  it.each(failed.map((s) => [s.name, s.argv] as const))('%s, refused by the provider in 0.2.0: issued once now, then held', async (_name, argv) => {
    const res = await opcli(up, argv);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`Issued ${flagOf(argv, '--amount')} USD for ${subject(argv)}`);
    expect(actions(sandbox)).toEqual(['POST /provider/v2/gift-cards/issue/']);
    const again = await opcli(up, argv);
    expect(again.code, again.stderr).toBe(3);
    expect(actions(sandbox)).toHaveLength(1);
  });

  it('the same claim written with a typographic hyphen and in lower case is held too', async () => {
    const [first] = issues;
    const argv = (first?.argv ?? []).map((a) => (a === flagOf(first?.argv ?? [], '--claim') ? a.toLowerCase().replace('-', '\u2010') : a));
    expect(argv).toContain('c\u20101001');
    const res = await opcli(up, argv);
    expect(res.code, res.stderr).toBe(3);
    expect(res.stderr).toContain('was already issued');
    expect(actions(sandbox)).toEqual([]);
  });

  it('giftcard history lists every 0.2.0 issuance with the outcome and path 0.2.0 recorded', async () => {
    const res = await opcli(up, ['giftcard', 'history', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const listed: { claimId?: string; orderNumber: string; bonus: boolean; amount: string; status: string; path: string | null }[] = JSON.parse(
      res.stdout,
    ).issuances;
    expect(
      listed.map((i) => ({ claimId: i.claimId ?? null, orderNumber: i.orderNumber, amount: i.amount, bonus: i.bonus, status: i.status, path: i.path })),
    ).toEqual(
      issues.map((s) => ({
        claimId: flagOf(s.argv, '--claim') ?? null,
        orderNumber: flagOf(s.argv, '--order'),
        amount: flagOf(s.argv, '--amount'),
        bonus: s.argv.includes('--bonus'),
        ...old.outcomeOf(s.argv),
      })),
    );
    expect(actions(sandbox)).toEqual([]);
  });
});
