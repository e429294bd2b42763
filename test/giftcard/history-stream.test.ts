/**
 * `giftcard history` streams (issue 40): the rows history.streamHistory hands over as the ledger is
 * read, one claim's lines at a time, are the rows historyRows makes of the whole ledger read at once,
 * in the same order and with the same fields, on both backends (the file ledger with its index, and
 * the team's record in PostgreSQL a page at a time), as properties over seeded families of ledgers:
 * a claim paid again (its id written another way, in another scope, with --force), a failed attempt
 * paid afterwards, an outcome or a warning written long after its attempt, an attempt left without
 * an outcome, a bonus, an old unscoped key, and an attempt line repeating an id its claim used before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResolvedProfile } from '../../src/config/profile.js';
import { historyRows, streamHistory, type HistoryFilter, type HistoryRow } from '../../src/giftcard/history.js';
import { type CreditLedger, groupIssuances, issuanceKey, type LedgerRecord, Ledger } from '../../src/giftcard/ledger.js';
import { ACTION_LIMITS as CLAIM_WINDOW } from '../../src/record/action-stream.js';
import { openLedger } from '../../src/giftcard/ledger-db.js';
import { parseRecordUrl } from '../../src/record-pg/url.js';
import { BACKENDS, giftcardSuite, teamRecord } from './fixture.js';

giftcardSuite();

/** A small seeded generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A family member: `n` credit attempts over a few claims, shops and customers, their outcomes and warnings, in the order a desk would write them. */
function ledgerOf(seed: number, n: number, database: boolean): LedgerRecord[] {
  const r = random(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  const late: LedgerRecord[] = [];
  const out: LedgerRecord[] = [];
  let clock = t0;
  const at = () => new Date((clock += 60_000)).toISOString();
  for (let i = 0; i < n; i++) {
    const bonus = r() < 0.15;
    const claim = `C-${100 + Math.floor(r() * 8)}`;
    const typed = pick([claim, claim.toLowerCase(), claim.replace('-', '\u2010')]);
    const order = String(1000 + Math.floor(r() * 5));
    const scope = { shopUrl: pick(['shop.example', 'shop.example', 'other.example']), storeId: 'st_1' };
    // A key of before keys named their shop (the file only: the database's keys are scoped).
    const key = !database && r() < 0.1 ? `claim:${typed}` : issuanceKey({ claimId: typed, orderNumber: order, bonus }, scope);
    // An attempt line repeating the id of an earlier attempt of its claim (a line written twice) is no new attempt.
    const repeated = !database && r() < 0.1 ? out.find((l) => l.type === 'attempt' && l.key === key)?.issuance : undefined;
    const issuance = repeated ?? `i${seed}-${i}`;
    const amountCents = pick([500, 1000, 2500]);
    const common = { v: 1 as const, issuance, key, user: pick(['ann', 'bob']) };
    out.push({
      ...common,
      type: 'attempt',
      at: at(),
      claimId: bonus ? undefined : typed,
      orderNumber: order,
      bonus,
      amountCents,
      amount: (amountCents / 100).toFixed(2),
      currency: pick(['USD', undefined]),
      email: pick(['a@example.com', 'b@example.com']),
      name: 'Customer',
      profile: 'default',
      firstPath: 'credit-api',
      forced: r() < 0.2,
      host: 'desk',
    } as LedgerRecord);
    const fate = r();
    const outcome = (status: 'issued' | 'failed' | 'uncertain') =>
      ({
        ...common,
        type: 'outcome',
        at: at(),
        status,
        path: 'credit-api-top-up',
        cardId: 'gc_1',
        balanceCents: 4200,
        triggerPosted: false,
        possibleDoubleCredit: r() < 0.05,
        notes: [],
      }) as LedgerRecord;
    if (fate < 0.6) out.push(outcome(pick(['issued', 'issued', 'failed'])));
    else if (fate < 0.8) late.push(outcome(pick(['issued', 'failed', 'uncertain'])));
    if (r() < 0.1)
      late.push({ ...common, type: 'warning', kind: 'possible-double-credit', at: at(), message: `late credit ${i}`, cardId: 'gc_1' } as LedgerRecord);
    if (r() < 0.2 && late.length) out.push(late.shift() as LedgerRecord);
  }
  return [...out, ...late];
}

/** Writes the records through the backend's own append (an attempt decided on a fresh reading of its key, as issuance does). */
async function write(ledger: CreditLedger, records: LedgerRecord[]): Promise<void> {
  for (const rec of records) {
    if (rec.type === 'attempt') await ledger.heldAgainst(rec.key);
    await ledger.append(rec);
  }
}

const FILTERS: HistoryFilter[] = [{}, { claim: 'c-103' }, { order: '1002' }, { claim: 'C\u2010105', order: '1001' }];

/** The file ledger's window as shipped, and small enough that attempts wait past it and open claims' lines are dropped (answered from the index). */
const WINDOWS = [{ ...CLAIM_WINDOW }, { window: 3, held: 8 }, { window: 0, held: 0 }];

describe.each(BACKENDS)('giftcard history streams on the %s ledger', (backend) => {
  afterEach(() => Object.assign(CLAIM_WINDOW, WINDOWS[0]));
  it.each([1, 2, 3, 4, 5, 6])('seed %i: the streamed rows are historyRows of the whole ledger, for every filter', async (seed) => {
    const dir = mkdtempSync(join(tmpdir(), 'opcli-hs-'));
    let ledger: CreditLedger = new Ledger({ dir, configDir: dir });
    try {
      if (backend === 'database') {
        const { env } = await teamRecord();
        ledger = await openLedger(dir, { record: parseRecordUrl(env(0).OPCLI_RECORD_URL as string, 'test') } as ResolvedProfile, { env: env(0), cwd: '/' });
      }
      await write(ledger, ledgerOf(seed, 60, backend === 'database'));
      const { records } = await ledger.readAll();
      const all = groupIssuances(records);
      expect(all.length).toBeGreaterThan(40);
      for (const limits of WINDOWS) {
        Object.assign(CLAIM_WINDOW, limits);
        for (const filter of FILTERS) {
          const streamed: HistoryRow[] = [];
          await streamHistory(ledger, filter, { notice: (m) => expect.fail(m) }, (row) => streamed.push(row));
          expect(JSON.stringify(streamed), `${JSON.stringify(filter)} ${JSON.stringify(limits)}`).toBe(JSON.stringify(historyRows(all, filter)));
        }
      }
      // The family holds what the rows must get right: repeated payments, and outcomes or warnings after other claims' lines.
      expect(historyRows(all, {}).some((row) => row.duplicateOf !== null)).toBe(true);
    } finally {
      await ledger.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
