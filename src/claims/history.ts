/**
 * What the record of claims holds for a store, as `claims history` lists it: each filing with its
 * latest outcome, filtered. No print: the verb renders the rows.
 */
import { emailIdentity, idIdentity } from '../core/identity.js';
import { blockingDamage, describeDamage } from '../record/damage.js';
import { claimWeight, endAttempt } from '../record/outcome.js';
import { earlierPlaces } from '../config/record-dir.js';
import { ClaimRecord, type IntentLine, type OpenRecord, type OutcomeLine } from './record.js';

/** One filing as history shows it. */
export interface ClaimHistoryRow {
  /** The claim's content key: the filings of one claim share it (`claims history` groups them). */
  key: string;
  at: string;
  /** filed, rejected, not_sent, uncertain (sent, no answer recorded: the claim may exist). */
  status: 'filed' | 'rejected' | 'uncertain' | 'not_sent';
  sourceOrderId?: string;
  email?: string;
  item?: string;
  profile: string;
  user: string;
  host: string;
  source: string;
  line?: number;
  forced: boolean;
  error?: string;
}

/** Filters of `claims history`, each compared by identity. */
export interface ClaimHistoryFilter {
  order?: string;
  email?: string;
  /** ISO date or date-time: filings at or after it. */
  since?: number;
}

/** Keeps an outcome line as its filing's outcome by the one rule (src/record/outcome.ts): a later line never undoes `filed`. */
function settleOutcome(outcomes: Map<string, OutcomeLine>, r: OutcomeLine): void {
  const had = outcomes.get(r.issuance);
  const before = had ? { state: had.status, settled: true, earlierMaybe: false } : { state: 'sending', settled: false, earlierMaybe: false };
  const after = endAttempt<string>(before, r.status, undefined, claimWeight);
  if (after !== before) outcomes.set(r.issuance, r);
}

/**
 * The filings of the record (oldest first), filtered, with the lines it could not read (named, never
 * dropped in silence). The places the record lived before (an earlier record-dir, the config folder)
 * are read too, as every command that files reads them (src/config/record-dir.ts).
 */
export async function readClaimHistory(open: OpenRecord, filter: ClaimHistoryFilter): Promise<{ path: string; rows: ClaimHistoryRow[]; damaged: string[] }> {
  // A damaged record is still listed (its damage named): history is how the damage is looked into.
  const reader = await ClaimRecord.open({ ...open, lock: undefined, tolerateDamage: true });
  const earlier = earlierPlaces(open.place).map((place) => ClaimRecord.openSync({ ...open, place, tolerateDamage: true }));
  try {
    const intents: IntentLine[] = [];
    const outcomes = new Map<string, OutcomeLine>();
    for (const r of [...earlier, reader].flatMap((record) => [...record.all()])) {
      if (r.type === 'intent') intents.push(r);
      else if (r.type === 'outcome') settleOutcome(outcomes, r);
    }
    intents.sort((a, b) => a.at.localeCompare(b.at));
    const matches = filingFilter(filter);
    const rows: ClaimHistoryRow[] = [];
    for (const i of intents) {
      const o = outcomes.get(i.issuance);
      const row: ClaimHistoryRow = {
        key: i.key,
        at: i.at,
        status: o?.status ?? 'uncertain',
        sourceOrderId: o?.sourceOrderId,
        email: i.email,
        item: i.item,
        profile: i.profile,
        user: i.user,
        host: i.host,
        source: i.source,
        line: i.line,
        forced: !!i.forced,
        error: o ? o.error : 'no outcome recorded: the run stopped after sending it, the claim may exist',
      };
      if (matches(row)) rows.push(row);
    }
    const damaged = [...earlier, reader].flatMap((record) =>
      blockingDamage(record.damaged).map((d) => (record === reader ? '' : `${record.path}: `) + describeDamage(d)),
    );
    return { path: reader.path, rows, damaged };
  } finally {
    reader.close();
    for (const record of earlier) record.close();
  }
}

/** Whether a filing passes the filters, each compared by identity (`claims history` applies it to each filing of a claim). */
export function filingFilter(filter: ClaimHistoryFilter): (row: ClaimHistoryRow) => boolean {
  const order = filter.order === undefined ? undefined : idIdentity(filter.order).replace(/^#+ ?/, '');
  const email = filter.email === undefined ? undefined : emailIdentity(filter.email);
  return (r) =>
    (order === undefined || (!!r.sourceOrderId && idIdentity(r.sourceOrderId) === order)) &&
    (email === undefined || (!!r.email && emailIdentity(r.email) === email)) &&
    (filter.since === undefined || Date.parse(r.at) >= filter.since);
}
