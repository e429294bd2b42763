/**
 * Issue 40, "upgrade without repaying": every store credit opcli 0.2.0 issued or started (its own
 * build, its ledger: test/fixtures/0.2.0) is held by today's built binary when the same command runs
 * again, with nothing sent to the provider or the storefront; the attempt a kill -9 cut short stays
 * held as unknown; `giftcard history` lists all of them.
 */
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { actions, oldFiles, opcli, type Upgraded, upgradeSuite } from './fixture.js';

let sandbox: Sandbox;
let up: Upgraded;
const old = oldFiles('0.2.0');
upgradeSuite(old, (s) => ({ sandbox, up } = s));

const issues = old.stepsOf('issue');
/** The value of `flag` in a command line. */
const flag = (argv: string[], name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
/** The issuance 0.2.0 killed after its trigger left: the one whose command waited for it. */
const killed = issues.filter((s) => s.argv.includes('--trigger-wait'));

describe('a 0.2.0 issuance run again after the upgrade', () => {
  it('the fixtures hold issuances by the trigger, by both credit API paths, a bonus, and one killed mid-way', () => {
    const sent = issues.map((s) => Object.keys(s.sent).filter((k) => !k.startsWith('GET ')));
    // Ids at the end of a path (the trigger's, a card's) are the 0.2.0 sandbox's.
    expect(sent.flat().map((k) => k.replace(/\/(gc_\w+|[0-9a-f-]{36})$/, '/{id}'))).toEqual([
      'POST /provider/v2/workflows/execute/{id}',
      'POST /provider/v2/workflows/execute/{id}',
      'PUT /provider/v2/gift-cards/{id}',
      'POST /provider/v2/gift-cards/issue/',
      'POST /provider/v2/gift-cards/issue/',
    ]);
    expect(killed).toHaveLength(1);
  });

  it.each(issues.map((s) => [s.name, s.argv] as const))('%s: held (exit 3), nothing sent, the earlier record named', async (_name, argv) => {
    const res = await opcli(up, argv);
    expect(res.code, res.stderr).toBe(3);
    const id = flag(argv, '--claim');
    const what = id ? `claim ${id}` : `bonus credit for order #${flag(argv, '--order')}`;
    if (killed.some((k) => k.argv === argv)) {
      expect(res.stderr).toContain(`An earlier attempt to issue store credit for ${what} has no recorded outcome`);
    } else {
      expect(res.stderr).toContain(`Store credit for ${what} was already issued`);
      expect(res.stderr).toContain('Nothing was sent.');
    }
    expect(res.stdout).toBe('');
    expect(actions(sandbox)).toEqual([]);
  });

  it('the same claim written with a typographic hyphen and in lower case is held too', async () => {
    const [first] = issues;
    const argv = (first?.argv ?? []).map((a) => (a === flag(first?.argv ?? [], '--claim') ? a.toLowerCase().replace('-', '\u2010') : a));
    expect(argv).toContain('c\u20101001');
    const res = await opcli(up, argv);
    expect(res.code, res.stderr).toBe(3);
    expect(res.stderr).toContain('was already issued');
    expect(actions(sandbox)).toEqual([]);
  });

  it('giftcard history lists every 0.2.0 issuance: issued by its path, the killed one without an outcome', async () => {
    const res = await opcli(up, ['giftcard', 'history', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const listed: { claimId?: string; orderNumber: string; bonus: boolean; amount: string; status: string; path: string | null }[] = JSON.parse(
      res.stdout,
    ).issuances;
    expect(listed.map((i) => ({ claimId: i.claimId ?? null, orderNumber: i.orderNumber, amount: i.amount, bonus: i.bonus }))).toEqual(
      issues.map((s) => ({
        claimId: flag(s.argv, '--claim') ?? null,
        orderNumber: flag(s.argv, '--order'),
        amount: flag(s.argv, '--amount'),
        bonus: s.argv.includes('--bonus'),
      })),
    );
    expect(listed.map((i) => [i.status, i.path])).toEqual([
      ['issued', 'trigger'],
      ['attempt', null],
      ['issued', 'credit-api-top-up'],
      ['issued', 'credit-api-issue'],
      ['issued', 'credit-api-issue'],
    ]);
    expect(actions(sandbox)).toEqual([]);
  });
});
