/**
 * What the record of claims holds for a store, as `claims history` lists it: each claim once, its
 * attempts inside, streamed (a record of millions is never held in memory). A claim is the attempts
 * of one content key up to the one filed. The action stream (src/record/action-stream.ts) hands a
 * claim over once it is filed; one still open a window later is answered whole from the record's
 * index, so memory is bounded by the window. `--email` and `--order` read only the keys their index
 * terms name.
 */
import { emailIdentity, idIdentity } from '../core/identity.js';
import { ACTION_LIMITS, type ActionLines, ActionStream } from '../record/action-stream.js';
import { blockingDamage, describeDamage } from '../record/damage.js';
import { claimWeight, laterOutcome } from '../record/outcome.js';
import type { ResolvedProfile } from '../config/profile.js';
import { earlierPlaces, recordPlace } from '../config/record-dir.js';
import { ClaimRecord, type IntentLine, type OpenRecord, type OutcomeLine, type ReadLine, type RecordContext, type RecordStore } from './record.js';
import { orderTerm } from './record-index.js';

export interface ClaimHistoryRow {
  /** The claim's content key: the filings of one claim share it. */
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

/** One attempt of a claim, as `events` lists it (the customer and item are the claim's). */
export type ClaimEvent = Omit<ClaimHistoryRow, 'key' | 'email' | 'item'>;

/** One claim: the fields of its latest attempt (whose outcome is its status), and every attempt, oldest first. */
export interface ClaimEntry extends Omit<ClaimHistoryRow, 'key'> {
  events: ClaimEvent[];
}

/** `claims history`'s reader (a file record's, or the team's database's: its answers are promises). */
export interface ClaimHistory {
  path: string;
  /** The lines it could not read, in words. */
  damaged: string[];
  each: (filter: ClaimHistoryFilter, emit: (c: ClaimEntry) => void) => void | Promise<void>;
  close: () => void | Promise<void>;
}

/** Filters of `claims history`, each compared by identity. */
export interface ClaimHistoryFilter {
  order?: string;
  email?: string;
  /** ISO date or date-time: filings at or after it. */
  since?: number;
}

/** The history of a profile's record of claims: streamed from the database with a record-url, else from the file record. */
export async function openClaimsHistory(configDir: string, profile: ResolvedProfile, ctx: RecordContext, store: RecordStore): Promise<ClaimHistory> {
  const place = recordPlace(configDir, profile);
  if (!profile.record) return openClaimHistory({ place, store });
  // Imported here, as by openClaimsRecord (record.ts): only a profile with a record-url loads the database's modules.
  const { DatabaseClaimRecord } = await import('../record-pg/claims.js');
  const record = await DatabaseClaimRecord.open(profile.record, { ...ctx, passwordSource: profile.record.passwordSource }, store, undefined);
  return {
    path: record.path,
    damaged: [],
    each: (filter, emit) => {
      const matches = filingFilter(filter);
      return record.eachClaim(filter, (attempts) => {
        const claim = claimEntry(attempts);
        if (claim.rows.some(matches)) emit(claim.entry);
      });
    },
    close: () => record.close(),
  };
}

/** The claims of the record (and of where it lived before) that pass `filter`; the lines it could not read are named before `each` streams. */
export function openClaimHistory(open: OpenRecord, window = ACTION_LIMITS.window): ClaimHistory {
  // A damaged record is still listed (its damage named): history is how the damage is looked into.
  const reader = ClaimRecord.openSync({ ...open, lock: undefined, tolerateDamage: true });
  const records = [...earlierPlaces(open.place).map((place) => ClaimRecord.openSync({ ...open, place, tolerateDamage: true })), reader];
  const blocked = records.some((r) => blockingDamage(r.damaged).length > 0);
  const damaged = records.flatMap((record) => blockingDamage(record.damaged).map((d) => (record === reader ? '' : `${record.path}: `) + describeDamage(d)));
  // The index covers a record up to its first damaged line only: a damaged record is read line by line.
  const linesOf = blocked ? undefined : (terms: string[]) => records.flatMap((r) => r.linesOf(...terms));
  return {
    path: reader.path,
    damaged,
    each: (filter, emit) => {
      const stream = new ActionStream(claimLines(filingFilter(filter), emit), { ...ACTION_LIMITS, window }, linesOf && ((key) => linesOf([`key:${key}`])));
      const terms = linesOf && indexTerms(filter);
      if (linesOf && terms) {
        const keys = new Set(linesOf(terms).map((r) => ('key' in r ? `key:${r.key}` : '')));
        keys.delete('');
        if (keys.size) for (const r of linesOf([...keys])) stream.take(r);
      } else for (const r of records) r.eachLine((l) => stream.take(l));
      stream.end();
    },
    close: () => {
      for (const r of records) r.close();
    },
  };
}

/** The index terms a filter narrows the record to (undefined: every line is read). */
function indexTerms(filter: ClaimHistoryFilter): string[] | undefined {
  if (filter.email !== undefined) return [`customer:${emailIdentity(filter.email)}`];
  return filter.order === undefined ? undefined : [`order:${orderTerm(filter.order)}`];
}

/** One attempt of a claim: its intent, and its outcome as the lines read have it. */
interface Attempt {
  intent: IntentLine;
  outcome?: OutcomeLine;
}

/** A key's claims in `lines`: its attempts, each with its strongest outcome, a claim ending at its first filed attempt. */
function claimsOf(lines: ReadLine[]): Attempt[][] {
  const outcomes = new Map<string, OutcomeLine>();
  for (const l of lines) if (l.type === 'outcome') outcomes.set(l.issuance, laterOutcome(outcomes.get(l.issuance), l, claimWeight));
  const claims: Attempt[][] = [];
  let open: Attempt[] | undefined;
  for (const l of lines) {
    if (l.type !== 'intent') continue;
    const a: Attempt = { intent: l, outcome: outcomes.get(l.issuance) };
    if (!open) claims.push((open = []));
    open.push(a);
    if (a.outcome?.status === 'filed') open = undefined;
  }
  return claims;
}

/**
 * The record's lines as the action stream groups them: by content key, a claim handed over once
 * closed (filed, every attempt before it answered). Attempts of a claim handed over ahead of the
 * read are skipped when the read reaches them.
 */
function claimLines(matches: (row: ClaimHistoryRow) => boolean, emit: (c: ClaimEntry) => void): ActionLines<ReadLine, IntentLine> {
  const handed = new Set<string>();
  const claimOf = (i: IntentLine, lines: ReadLine[]) => claimsOf(lines).find((c) => c.some((a) => a.intent.issuance === i.issuance));
  return {
    key: (r) => (r.type === 'intent' || r.type === 'outcome' ? r.key : undefined),
    entry: (r) => (r.type === 'intent' && !handed.delete(r.issuance) ? r : undefined),
    complete: (i, lines) => {
      if (handed.has(i.issuance)) return true;
      const claim = claimOf(i, lines) ?? [];
      const end = claim.findIndex((a) => a.outcome?.status === 'filed');
      return end >= 0 && claim.slice(0, end).every((a) => a.outcome);
    },
    forget: () => true,
    hand: (i, lines) => {
      if (handed.delete(i.issuance)) return;
      const claim = claimOf(i, lines);
      if (claim?.[0]?.intent.issuance !== i.issuance) return;
      for (const a of claim.slice(1)) handed.add(a.intent.issuance);
      const rows = claim.map(rowOf);
      if (rows.some(matches)) emit(entry(rows));
    },
  };
}

/** One claim's attempts, each its intent and outcome lines (as the team's database reads them: src/record-pg/claims.ts), as history lists it. */
export function claimEntry(attempts: ReadLine[][]): { rows: ClaimHistoryRow[]; entry: ClaimEntry } {
  const rows = claimsOf(attempts.flat()).flat().map(rowOf);
  return { rows, entry: entry(rows) };
}

function rowOf({ intent: i, outcome: o }: Attempt): ClaimHistoryRow {
  return {
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
}

function entry(attempts: ClaimHistoryRow[]): ClaimEntry {
  const { key: _, ...latest } = attempts[attempts.length - 1] as ClaimHistoryRow;
  return { ...latest, events: attempts.map(({ key: _key, email: _email, item: _item, ...event }) => event) };
}

/** Whether a filing passes the filters, each compared by identity (applied to each filing of a claim). */
export function filingFilter(filter: ClaimHistoryFilter): (row: ClaimHistoryRow) => boolean {
  const order = filter.order === undefined ? undefined : orderTerm(filter.order);
  const email = filter.email === undefined ? undefined : emailIdentity(filter.email);
  return (r) =>
    (order === undefined || (!!r.sourceOrderId && idIdentity(r.sourceOrderId) === order)) &&
    (email === undefined || (!!r.email && emailIdentity(r.email) === email)) &&
    (filter.since === undefined || Date.parse(r.at) >= filter.since);
}
