/**
 * What the record of claims holds for a store, as `claims history` lists it: each claim once, its
 * attempts inside, streamed in the record's order (a record of millions is never held in memory),
 * filtered. No print: the verb renders each claim as it comes.
 *
 * A claim is the attempts of one content key up to the one that was filed (a later filing of the same
 * content, on purpose, is another claim). The stream keeps the claims not yet closed in the order of
 * their first attempt and hands each over once it is filed; a claim still open WINDOW claims later
 * (rejected, not sent, uncertain: a rerun may add an attempt any time) is answered whole from the
 * record's index by its key (src/record/store.ts), so memory stays bounded by the window, not the
 * record. `--email` and `--order` read only the lines of the keys their index terms name.
 */
import { emailIdentity, idIdentity } from '../core/identity.js';
import { blockingDamage, describeDamage } from '../record/damage.js';
import { claimWeight, endAttempt } from '../record/outcome.js';
import { earlierPlaces } from '../config/record-dir.js';
import { ClaimRecord, type IntentLine, type OpenRecord, type OutcomeLine, type ReadLine } from './record.js';
import { orderTerm } from './record-index.js';

/** One filing as history shows it. */
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

/** Filters of `claims history`, each compared by identity. */
export interface ClaimHistoryFilter {
  order?: string;
  email?: string;
  /** ISO date or date-time: filings at or after it. */
  since?: number;
}

/** How many claims may wait open before the oldest is answered from the index. */
const WINDOW = 10_000;

/**
 * Streams the claims of the record (and of the places it lived before, read first) that pass
 * `filter` to `emit`, oldest first attempt first. The lines it could not read are returned before
 * any claim is streamed (named, never dropped in silence): `each` streams.
 */
export function openClaimHistory(
  open: OpenRecord,
  window = WINDOW,
): {
  path: string;
  damaged: string[];
  each: (filter: ClaimHistoryFilter, emit: (c: ClaimEntry) => void) => void;
  close: () => void;
} {
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
      const stream = new ClaimStream(filingFilter(filter), emit, window, linesOf);
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

/** One attempt being gathered: its intent, its outcome once read, and its place in the read (-1: taken from the index ahead of the read). */
interface Attempt {
  intent: IntentLine;
  outcome?: OutcomeLine;
  seq: number;
}

/** Attempts of one key, from the first of a claim. */
interface Gathering {
  key: string;
  attempts: Attempt[];
}

/** The record's lines, gathered into claims and handed over in the order of their first attempt. */
class ClaimStream {
  private queue: Gathering[] = [];
  private head = 0;
  private seq = 0;
  /** The claim each key's next attempt belongs to, until one of its attempts is filed. */
  private readonly open = new Map<string, Gathering>();
  private readonly byFiling = new Map<string, Attempt>();
  /** Filings already handed over from the index: their lines are skipped when the read reaches them. */
  private readonly done = new Set<string>();

  constructor(
    private readonly matches: (row: ClaimHistoryRow) => boolean,
    private readonly emit: (c: ClaimEntry) => void,
    private readonly window: number,
    private readonly linesOf?: (terms: string[]) => ReadLine[],
  ) {}

  take(r: ReadLine): void {
    if (r.type === 'intent') {
      if (this.done.has(r.issuance)) return;
      let g = this.open.get(r.key);
      if (!g) {
        g = { key: r.key, attempts: [] };
        this.queue.push(g);
        this.open.set(r.key, g);
      }
      const a: Attempt = { intent: r, seq: this.seq++ };
      g.attempts.push(a);
      this.byFiling.set(r.issuance, a);
    } else if (r.type === 'outcome') {
      const a = this.byFiling.get(r.issuance);
      if (!a) return;
      a.outcome = settle(a.outcome, r);
      const g = this.open.get(r.key);
      if (a.outcome.status === 'filed' && g?.attempts.at(-1) === a) this.open.delete(r.key);
    } else return;
    this.release();
  }

  /** Hands over the claims at the head that are closed, and answers from the index those open too long. */
  private release(): void {
    while (this.head < this.queue.length) {
      const g = this.queue[this.head] as Gathering;
      if (this.open.get(g.key) === g) {
        if (!this.linesOf || this.queue.length - this.head <= this.window) break;
        this.whole(g, this.linesOf([`key:${g.key}`]));
      } else if (this.linesOf && g.attempts.some((a) => !a.outcome)) {
        // Closed by a later attempt's filing while an earlier one has no outcome yet: that outcome may
        // come later in the record (a filing of the earlier attempt closes the claim there instead).
        this.closedWhole(g, this.linesOf([`key:${g.key}`]));
      }
      this.hand(g);
      this.head++;
    }
    if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * A claim still open: its attempts from the index's `lines` of its key, up to the first filed one,
   * each with its outcome as the whole record has it. Attempts the read reaches later are skipped
   * then; those it read past the filed one wait as the key's next claim.
   */
  private whole(g: Gathering, lines: ReadLine[]): void {
    const first = (g.attempts[0] as Attempt).intent.issuance;
    const read = new Map(g.attempts.map((a) => [a.intent.issuance, a]));
    const outcomes = new Map<string, OutcomeLine>();
    for (const l of lines) if (l.type === 'outcome') outcomes.set(l.issuance, settle(outcomes.get(l.issuance), l));
    const claim: Attempt[] = [];
    for (const l of lines) {
      if (l.type !== 'intent' || (claim.length === 0 && l.issuance !== first)) continue;
      const a = read.get(l.issuance) ?? { intent: l, seq: -1 };
      if (a.seq < 0) this.done.add(l.issuance);
      a.outcome = outcomes.get(l.issuance) ?? a.outcome;
      claim.push(a);
      if (a.outcome?.status === 'filed') break;
    }
    // No line of the key from the index (the record changed under it): the attempts read so far are the claim.
    const rest = claim.length ? g.attempts.filter((a) => !claim.includes(a)) : [];
    if (claim.length) g.attempts = claim;
    this.open.delete(g.key);
    if (rest.length) this.open.set(g.key, this.insert({ key: g.key, attempts: rest }));
  }

  /** `whole` for a claim already closed: the key's open claim, if the read has begun one, stays open. */
  private closedWhole(g: Gathering, lines: ReadLine[]): void {
    const open = this.open.get(g.key);
    this.whole(g, lines);
    if (open) this.open.set(g.key, open);
    else this.open.delete(g.key);
  }

  /** Hands over the claim `g` begins (up to its first filed attempt), when one attempt passes the filter; what follows waits as the key's next claim. */
  private hand(g: Gathering): void {
    const end = g.attempts.findIndex((a) => a.outcome?.status === 'filed');
    const claim = end < 0 ? g.attempts : g.attempts.slice(0, end + 1);
    for (const a of claim) this.byFiling.delete(a.intent.issuance);
    const rows = claim.map(rowOf);
    if (rows.some(this.matches)) this.emit(entry(rows));
    if (claim.length === g.attempts.length) return;
    const next = this.insert({ key: g.key, attempts: g.attempts.slice(end + 1) });
    if (this.open.get(g.key) === g) this.open.set(g.key, next);
  }

  /** Puts a claim into the queue by its first attempt's place in the read (after the head). */
  private insert(g: Gathering): Gathering {
    const seq = (g.attempts[0] as Attempt).seq;
    let at = this.queue.length;
    while (at > this.head + 1 && ((this.queue[at - 1] as Gathering).attempts[0] as Attempt).seq > seq) at--;
    this.queue.splice(at, 0, g);
    return g;
  }

  /** Hands over every claim still held, in order. */
  end(): void {
    for (; this.head < this.queue.length; this.head++) this.hand(this.queue[this.head] as Gathering);
    this.queue = [];
    this.head = 0;
  }
}

/** An attempt's outcome after another outcome line of it, by the one rule (src/record/outcome.ts): a later line never undoes `filed`. */
function settle(had: OutcomeLine | undefined, r: OutcomeLine): OutcomeLine {
  const before = had ? { state: had.status, settled: true, earlierMaybe: false } : { state: 'sending', settled: false, earlierMaybe: false };
  return endAttempt<string>(before, r.status, undefined, claimWeight) === before ? (had as OutcomeLine) : r;
}

/** One claim's attempts, each its intent and outcome lines (as the team's database reads them: src/record-pg/claims.ts), as history lists it. */
export function claimEntry(attempts: ReadLine[][]): { rows: ClaimHistoryRow[]; entry: ClaimEntry } {
  const rows = attempts.map(([intent, ...lines]) => {
    let outcome: OutcomeLine | undefined;
    for (const l of lines) if (l.type === 'outcome') outcome = settle(outcome, l);
    return rowOf({ intent: intent as IntentLine, outcome, seq: 0 });
  });
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
