/**
 * `claims history` by claim: the record holds one filing per attempt (a row not sent, then filed by
 * the next run, is two), and a person or a script counting claims wants one entry per claim, its
 * attempts inside. The attempts of one claim share its content key; a filing that ends `filed` closes
 * the claim, so a later filing of the same content on purpose (--allow-duplicates, --force) is
 * another claim.
 */
import { type ClaimHistoryFilter, type ClaimHistoryRow, filingFilter } from '../../claims/history.js';

/** One attempt of a claim, as `events` lists it (the customer and item are the claim's). */
export type ClaimEvent = Omit<ClaimHistoryRow, 'key' | 'email' | 'item'>;

/** One claim: the fields of its latest attempt (whose outcome is its status), and every attempt, oldest first. */
export interface ClaimEntry extends Omit<ClaimHistoryRow, 'key'> {
  events: ClaimEvent[];
}

/** The record's filings (oldest first) as claims, in the order of their first attempt; a claim is kept when any attempt passes `filter`. */
export function byClaim(rows: readonly ClaimHistoryRow[], filter: ClaimHistoryFilter): ClaimEntry[] {
  const claims: ClaimHistoryRow[][] = [];
  /** The claim each key's next attempt belongs to, until one of its attempts is filed. */
  const open = new Map<string, ClaimHistoryRow[]>();
  for (const row of rows) {
    let attempts = open.get(row.key);
    if (!attempts) {
      attempts = [];
      claims.push(attempts);
      open.set(row.key, attempts);
    }
    attempts.push(row);
    if (row.status === 'filed') open.delete(row.key);
  }
  const matches = filingFilter(filter);
  return claims.filter((attempts) => attempts.some(matches)).map(entry);
}

function entry(attempts: ClaimHistoryRow[]): ClaimEntry {
  const { key: _, ...latest } = attempts[attempts.length - 1] as ClaimHistoryRow;
  return { ...latest, events: attempts.map(({ key: _key, email: _email, item: _item, ...event }) => event) };
}
