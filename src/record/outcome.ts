/**
 * The one rule by which every reader of a record of business actions (the record of claims, a 0.2.0
 * journal, the gift card ledger) decides where a key stands: an outcome belongs to its attempt.
 * An attempt's first outcome settles it; a later one may only raise it (none → maybe → done). A
 * `done` outcome (filed, issued) is final for its key. Another attempt's outcome moves the key only
 * upwards: a `rejected` of attempt 2 says nothing of attempt 1, so while attempt 1 may have acted the
 * key stays uncertain. Appending a line can therefore never make money move again.
 */

/** What an outcome says of the money or claim: moved for good, maybe moved, provably not moved. */
export type Weight = 'done' | 'maybe' | 'none';

/** A weight as a number, to find the strongest of several records' answers. */
export const RANK: Record<Weight, number> = { none: 0, maybe: 1, done: 2 };

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

/** The key's standing after an outcome of `attempt` (undefined: the latest); one of no known attempt is ignored. */
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

/** The outcome line that stands for one attempt after `next` (`had`: the one before): a later one replaces it only to raise it. */
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
