/**
 * The one rule by which every reader of a record of business actions (the record of claims, a batch
 * journal, the gift card ledger; so batch resume, `claims history`, `giftcard history`, `--verify`)
 * decides where a key stands: an outcome belongs to its attempt.
 *
 * Each attempt (an intent, a journal's `sending` entry, a ledger's `attempt`) starts open; its first
 * outcome settles it; a later outcome of the same attempt may only raise it (none → maybe → done),
 * never lower it. A `done` outcome (a claim filed, a credit issued) is final for its key: no later
 * line of any attempt undoes it. The outcome of another attempt moves the key only upwards too: a
 * `rejected`, `failed` or `not_sent` of attempt 2 says nothing about attempt 1, so while attempt 1
 * may have acted (sent with no answer, uncertain, cut short) the key stays uncertain until an
 * attempt is done. Appending a line can therefore never make money move again.
 */

/** What an outcome says of the money or claim: moved for good, maybe moved, provably not moved. */
export type Weight = 'done' | 'maybe' | 'none';

const RANK: Record<Weight, number> = { none: 0, maybe: 1, done: 2 };

/** A weight as a number, to find the strongest of several records' answers: none 0, maybe 1, done 2. */
export const rankOf = (w: Weight): number => RANK[w];

/** Where a key stands: its latest attempt, that attempt's state, and what earlier attempts leave. */
export interface Standing<S> {
  state: S;
  /** The latest attempt's id (undefined: a record whose outcomes name no attempt, as a journal's). */
  attempt?: string | number;
  /** The latest attempt has an outcome. */
  settled: boolean;
  /** An earlier attempt may have acted (its claim may exist, its credit may have been paid). */
  earlierMaybe: boolean;
}

/** A new attempt of the key (state: its open state, `sending`, `attempt`): a done key stays done. */
export function startAttempt<S>(s: Standing<S> | undefined, state: S, attempt: string | number | undefined, weigh: (s: S) => Weight): Standing<S> {
  if (s && weigh(s.state) === 'done') return s;
  const earlierMaybe = !!s && (s.earlierMaybe || weigh(s.state) === 'maybe');
  return { state, attempt, settled: false, earlierMaybe };
}

/**
 * An outcome line of `attempt` (undefined: the latest attempt): the key's standing after it. An
 * outcome of no known attempt of the key is ignored (undefined stays undefined).
 */
export function endAttempt<S>(s: Standing<S> | undefined, state: S, attempt: string | number | undefined, weigh: (s: S) => Weight): Standing<S> | undefined {
  if (!s || weigh(s.state) === 'done') return s;
  const w = weigh(state);
  const other = attempt !== undefined && s.attempt !== undefined && attempt !== s.attempt;
  if (other) {
    if (w === 'done') return { ...s, state, settled: true };
    return w === 'maybe' ? { ...s, earlierMaybe: true } : s;
  }
  if (!s.settled || RANK[w] > RANK[weigh(s.state)]) return { ...s, state, settled: true };
  return s;
}

/**
 * The outcome line that stands for one attempt after `next` (`had`: the one before, undefined before
 * its first): the first settles it, a later one replaces it only to raise it (endAttempt), so a line
 * appended after `filed` or `issued` changes nothing. `weigh`: the client's (claimWeight, creditWeight).
 */
export function laterOutcome<O extends { status: string }>(had: O | undefined, next: O, weigh: (status: string) => Weight): O {
  if (had === undefined) return next;
  const before = { state: had.status, settled: true, earlierMaybe: false };
  return endAttempt(before, next.status, undefined, weigh) === before ? had : next;
}

/** The state a reader acts on: the latest attempt's, or `uncertain` while an earlier attempt may have acted and the latest did nothing. */
export function actOn<S>(s: Standing<S>, uncertain: S, weigh: (s: S) => Weight): S {
  return s.earlierMaybe && weigh(s.state) === 'none' ? uncertain : s.state;
}

/** The flags of a standing in one small number (a compact index's column): bit 1 settled, bit 2 an earlier attempt may have acted. */
export function standingFlags(s: Pick<Standing<unknown>, 'settled' | 'earlierMaybe'>): number {
  return (s.settled ? 1 : 0) | (s.earlierMaybe ? 2 : 0);
}

/** The flags of `standingFlags`, read back. */
export function fromFlags(flags: number): Pick<Standing<unknown>, 'settled' | 'earlierMaybe'> {
  return { settled: (flags & 1) !== 0, earlierMaybe: (flags & 2) !== 0 };
}

/** A claim's state in the record of claims or a journal, weighed. */
export function claimWeight(state: string): Weight {
  if (state === 'filed') return 'done';
  return state === 'rejected' || state === 'not_sent' ? 'none' : 'maybe';
}

/** Whether a claim in this state exists or may exist (filed, sent or cut short, uncertain): the same claim, or a similar one, is held. */
export const claimMayExist = (state: string): boolean => claimWeight(state) !== 'none';

/** A gift card issuance's outcome (undefined: an attempt with none yet), weighed. */
export function creditWeight(status: string | undefined): Weight {
  if (status === 'issued') return 'done';
  return status === 'failed' ? 'none' : 'maybe';
}

/** A small 32-bit hash (FNV-1a) of an attempt id, for a compact index's column, or of a claim's identity, which the ledger's stream counts lines by. */
export function attemptHash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
