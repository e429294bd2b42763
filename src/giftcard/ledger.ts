/**
 * The issuance ledger: an append-only JSONL file of the record folder (0600), written under a
 * cross-process lock: an `attempt` synced before any money is sent, then an `outcome`; later findings
 * (a late trigger credit) as `warning`s. Nothing is rewritten: it is what was done, by whom and when.
 */
import { closeSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { earlierPlaces, type RecordPlace, recordPlace } from '../config/record-dir.js';
import { claimIdentity, emailIdentity, orderIdentity } from '../core/identity.js';
import { authorName } from '../record/chain.js';
import { ACTION_START, blockingDamage, type DamagedLine, TORN_REASON, WRITER_UID } from '../record/damage.js';
import { appendDurable, LogWriter, type RecordFile, readLog, readRecordFile, SET_ASIDE, withRecordLock } from '../record/log.js';
import { ACTION_LIMITS, type ActionLines, ActionStream } from '../record/action-stream.js';
import { attemptHash as claimHash, creditWeight, laterOutcome } from '../record/outcome.js';
import { IndexedRecord, openRecord } from '../record/store.js';

/**
 * The key that may be paid once: the claim (or a bonus credit's order) in one provider shop and one service store, by
 * identity. The same shop is the same money whatever the profile, and a sandbox profile never blocks the real one.
 */
export function issuanceKey(input: { claimId?: string; orderNumber: string; bonus: boolean }, scope: { shopUrl?: string; storeId?: string }): string {
  const what = input.bonus ? `bonus:${orderIdentity(input.orderNumber)}` : `claim:${claimIdentity(input.claimId ?? '')}`;
  return `shop:${(scope.shopUrl ?? '-').trim().toLowerCase()}|store:${scope.storeId ?? '-'}|${what}`;
}

/** A key split into its scope (none for an old unscoped key) and what it pays for, by identity: `claim:c-2001`. */
export function keyParts(key: string): { scope?: string; what: string } {
  const m = /^(?:(shop:[^|]*\|store:[^|]*)\|)?(claim|bonus):([\s\S]*)$/.exec(key);
  if (!m) return { what: key };
  const id = m[2] === 'bonus' ? orderIdentity(m[3] as string) : claimIdentity(m[3] as string);
  return { scope: m[1], what: `${m[2]}:${id}` };
}

/** Whether two keys are one scope (an old unscoped key is every scope). */
export function sameScope(a: { scope?: string }, b: { scope?: string }): boolean {
  return a.scope === undefined || b.scope === undefined || a.scope === b.scope;
}

/** Whether a recorded key is the same claim or order as `key`, by identity (an old unscoped key matches any scope). */
export function sameKey(recorded: string, key: string): boolean {
  const r = keyParts(recorded);
  const k = keyParts(key);
  return r.what === k.what && sameScope(r, k);
}

export const LEDGER_FILE = 'giftcard-ledger.jsonl';

/** How the credit reached the customer. */
export const CreditPath = z.enum(['trigger', 'credit-api-top-up', 'credit-api-issue', 'native']);
export type CreditPath = z.infer<typeof CreditPath>;

const Common = {
  // `issuance`: one id per issuance, shared by its attempt, outcome and warnings. `key`: CHOICE (docs/spec-choices.md#ledger-key):
  // issuanceKey; older lines hold the id as typed (compared by identity too) or no scope (`claim:<id>`: blocks the claim in every shop).
  ...ACTION_START,
  user: z.string(),
  uid: WRITER_UID,
};

export const AttemptRecord = z.object({
  ...Common,
  type: z.literal('attempt'),
  claimId: z.string().optional(),
  orderNumber: z.string(),
  bonus: z.boolean(),
  amountCents: z.number().int(),
  amount: z.string(),
  email: z.string(),
  name: z.string(),
  customerId: z.string().optional(),
  profile: z.string(),
  shopUrl: z.string().optional(),
  /** The service's store the claim belongs to. */
  storeId: z.string().optional(),
  /** The currency of `amount` (older records: none, read as the profile's currency). */
  currency: z.string().optional(),
  /** The path the chain will try first. */
  firstPath: z.enum(['trigger', 'credit-api', 'native']),
  forced: z.boolean(),
  host: z.string(),
});
export type AttemptRecord = z.infer<typeof AttemptRecord>;

export const OutcomeRecord = z.object({
  ...Common,
  type: z.literal('outcome'),
  /** Final state of an issuance. `uncertain`: a request may have moved money but no answer says so. */
  status: z.enum(['issued', 'failed', 'uncertain']),
  path: CreditPath.optional(),
  cardId: z.string().optional(),
  balanceCents: z.number().int().optional(),
  /** Whether the trigger workflow was posted (so a late credit may still arrive). */
  triggerPosted: z.boolean(),
  /** The loyalty card a late trigger credit would land on, and its balance without one. */
  watch: z
    .object({ customerId: z.string(), cardId: z.string().nullable(), expectedCents: z.number().int().nullable(), ourCardId: z.string().optional() })
    .optional(),
  possibleDoubleCredit: z.boolean(),
  error: z.string().optional(),
  notes: z.array(z.string()),
});
export type OutcomeRecord = z.infer<typeof OutcomeRecord>;

export const WarningRecord = z.object({
  ...Common,
  type: z.literal('warning'),
  kind: z.literal('possible-double-credit'),
  message: z.string(),
  cardId: z.string().optional(),
  balanceCents: z.number().int().optional(),
});
export type WarningRecord = z.infer<typeof WarningRecord>;

/** A damaged line set aside (src/record/log.ts SET_ASIDE): its action stays `uncertain` for good. */
const SetAsideRecord = z.object({ ...Common, ...SET_ASIDE });
type SetAsideRecord = z.infer<typeof SetAsideRecord>;

export const LedgerRecord = z.discriminatedUnion('type', [AttemptRecord, OutcomeRecord, WarningRecord, SetAsideRecord]);
export type LedgerRecord = z.infer<typeof LedgerRecord>;

/** An issuance as history shows it: its attempt with the latest outcome and warnings. */
export interface Issuance {
  attempt: AttemptRecord;
  outcome?: OutcomeRecord;
  warnings: WarningRecord[];
}

/** What the ledger holds against a new credit: its records, and the lines whose action is unknown. */
export interface Held {
  records: LedgerRecord[];
  uncertain: UncertainLine[];
}

/**
 * The ledger as the issuance and history use it: this file (Ledger), or the team's record in
 * PostgreSQL (ledger-db.ts), which asks for the `hold`'s similar credits alone; the file reads the customer's lines.
 */
export interface CreditLedger {
  /** Where the ledger is, in words: a file's path, or the database (host, port, database). */
  readonly path: string;
  heldAgainst(key?: string, email?: string, hold?: { amountCents: number; currency: string; since: number }): Held | Promise<Held>;
  /** Runs `fn`, which reads, decides and appends an attempt, so that no two runs append one key's attempt on the same reading. */
  withLock<T>(fn: () => Promise<T>): Promise<T>;
  append(record: LedgerRecord): void | Promise<void>;
  appendLocked(record: LedgerRecord): Promise<void>;
  /** Every record (here and where the ledger lived before), and the lines that cannot be read. */
  readAll(): Promise<{ records: LedgerRecord[]; damaged: DamagedLine[] }>;
  /**
   * Every issuance `want` takes, in the ledger's order (where it lived before first), handed to `take`
   * with those of its claim or order (history.ts repeatedPayments) as the record streams; returns this ledger's damaged lines.
   */
  eachIssuance(take: (issuance: Issuance, same: Issuance[]) => void, want?: (a: AttemptRecord) => boolean): Promise<{ damaged: DamagedLine[] }>;
  close(): Promise<void>;
}

/** The ledger in a config folder, or in the record folder a team shares (record-dir). */
export class Ledger implements CreditLedger {
  readonly path: string;
  private readonly writer = new LogWriter();
  /** `earlier`: the ledgers of every place the record lived before: read, never written, so their credits still block a second payment. */
  constructor(
    readonly place: RecordPlace,
    private readonly earlier: Ledger[] = [],
  ) {
    this.path = join(place.dir, LEDGER_FILE);
  }

  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    return withRecordLock(this.place, LEDGER_LINES.lock, fn);
  }

  /** Every record, oldest first, and the lines that cannot be read (src/record/damage.ts): never silently dropped. */
  read(): { records: LedgerRecord[]; damaged: DamagedLine[] } {
    const records: LedgerRecord[] = [];
    return { records, damaged: readRecordFile(this.place, LEDGER_LINES, (r) => records.push(authored(r))) };
  }

  /**
   * What holds a new credit for `key` back, from the index (src/record/store.ts), here and where the
   * ledger lived before: the lines of its claim or order (by identity, any scope) and with `email` of
   * the customer's credits. Damage stops it (DamagedRecordFileError, exit 2) but torn and set-aside lines: `uncertain`.
   */
  heldAgainst(key?: string, email?: string): Held {
    const earlier = this.earlier.map((e) => e.heldAgainst(key, email));
    const opened = openRecord(this.place, LEDGER_LINES, false);
    let records: LedgerRecord[] = [];
    try {
      if (opened && key !== undefined) records = linesAgainst(opened.q, key, email).map(authored);
    } finally {
      if (opened) closeSync(opened.fd);
    }
    const setAside = records.filter((r): r is SetAsideRecord => r.type === 'set-aside');
    const torn = (opened?.damaged ?? []).filter((d) => d.kind === 'torn' && !setAside.some((u) => u.line === d.line));
    return {
      records: [...earlier.flatMap((e) => e.records), ...records],
      uncertain: [...earlier.flatMap((e) => e.uncertain), ...torn.map((d) => ({ ...d, reason: TORN_REASON })), ...setAside],
    };
  }

  /** Appends one record (inside withLock), durable when it returns: an attempt is on disk before any money is sent. */
  append(record: LedgerRecord): void {
    const { uid: _uid, ...fields } = LedgerRecord.parse(record);
    appendDurable(this.place, LEDGER_LINES, `${JSON.stringify(fields)}\n`, record, this.writer);
  }

  async appendLocked(record: LedgerRecord): Promise<void> {
    await this.withLock(async () => this.append(record));
  }

  async readAll(): Promise<{ records: LedgerRecord[]; damaged: DamagedLine[] }> {
    const { records, damaged } = this.read();
    return { records: [...this.earlier.flatMap((e) => e.read().records), ...records], damaged };
  }

  /** Each place's file streamed, a claim's lines asked of every place's index, in memory after damage. CHOICE (docs/spec-choices.md#record-index): brought up to date as a credit does. */
  async eachIssuance(
    take: (issuance: Issuance, same: Issuance[]) => void,
    want: (a: AttemptRecord) => boolean = () => true,
  ): Promise<{ damaged: DamagedLine[] }> {
    const open = [...this.earlier, this].flatMap((ledger) => {
      const o = openRecord(ledger.place, LEDGER_LINES, false, true);
      // Lines after damage are not in the index: the file's terms are held in memory instead.
      if (o && blockingDamage(o.damaged).length) o.q = IndexedRecord.open(o.fd, ledger.path, undefined, LEDGER_LINES);
      return o ? [{ ledger, ...o }] : [];
    });
    let damaged: DamagedLine[] = [];
    const count = new LineCount();
    const stream = new ActionStream(creditLines(take, want, count), ACTION_LIMITS, (what) => open.flatMap((o) => o.q.find(`key:${what}`)).map(authored));
    try {
      for (const o of open) readLog(o.fd, LEDGER_LINES, (r) => count.add(keyParts(r.key).what));
      for (const o of open) {
        const read = readLog(o.fd, LEDGER_LINES, (r) => {
          count.seen(keyParts(r.key).what);
          stream.take(authored(r));
        });
        if (o.ledger === this) damaged = read.damaged;
      }
      stream.end();
    } finally {
      for (const o of open) closeSync(o.fd);
    }
    return { damaged };
  }

  async close(): Promise<void> {}
}

/** Records grouped by issuance, oldest first, outcomes by src/record/outcome.ts; an attempt line repeating an id is not a new attempt. */
export function groupIssuances(records: LedgerRecord[]): Issuance[] {
  const byId = new Map<string, Issuance>();
  for (const r of records) {
    if (r.type === 'attempt') {
      if (!byId.has(r.issuance)) byId.set(r.issuance, { attempt: r, warnings: [] });
    } else if (r.type !== 'set-aside') {
      const entry = byId.get(r.issuance);
      if (!entry) continue;
      if (r.type === 'outcome') entry.outcome = laterOutcome(entry.outcome, r, creditWeight);
      else entry.warnings.push(r);
    }
  }
  return [...byId.values()];
}

/** The ledger's lines as the record's client (src/record/store.ts): found by the claim or order they pay for, and an attempt by its customer too. */
export const LEDGER_LINES: RecordFile<LedgerRecord> = {
  name: LEDGER_FILE,
  lock: 'giftcard-ledger',
  // The ledger in the words of a refusal (a damaged line, a file that shrank) and of its repair.
  words: {
    what: 'gift card ledger',
    command: 'opcli giftcard repair',
    risk: 'a record opcli cannot read could be a payment, and paying without it could pay twice',
    repair:
      'Run `opcli giftcard repair` to set the damaged line(s) aside (a copy of the file is kept; their claims are then held as uncertain), or follow "A damaged ledger" in docs/guides/store-credit.md.',
    detailsKey: 'ledger',
  },
  terms: 'giftcard-ledger-1',
  version: 1,
  parse: (v) => LedgerRecord.safeParse(v).data,
  setAsideOf: (r) => (r.type === 'set-aside' ? r.line : undefined),
  termsOf: (r) => (r.type === 'attempt' ? [`key:${keyParts(r.key).what}`, `customer:${emailIdentity(r.email)}`] : [`key:${keyParts(r.key).what}`]),
};

/** The lines of `key`'s claim or order, and with `email` those of every credit to that customer, in the ledger's order. */
function linesAgainst(q: IndexedRecord<LedgerRecord>, key: string, email: string | undefined): LedgerRecord[] {
  const terms = new Set([`key:${keyParts(key).what}`]);
  if (email) for (const r of q.find(`customer:${emailIdentity(email)}`)) terms.add(`key:${keyParts(r.key).what}`);
  return q.find(...terms);
}

/** A record with its author named as the OS names the line's uid (src/record/chain.ts). */
function authored(r: LedgerRecord): LedgerRecord {
  if (r.uid !== undefined) r.user = authorName(r.uid, r.user);
  return r;
}

/**
 * How many lines each claim or order has, by a 32-bit hash of its identity (a collision only delays
 * a claim), counted by a first pass so the second knows when a claim was read whole: a credit has no
 * closing line, and answering every credit past the window from the index costs more than two reads.
 */
class LineCount {
  /** The lines of each hash not read yet (none: read whole; below 0: lines appended since the count). */
  private readonly left = new Map<number, number>();

  add(what: string): void {
    const h = claimHash(what);
    this.left.set(h, (this.left.get(h) ?? 0) + 1);
  }

  /** One more line of `what` read: a claim read whole is forgotten. */
  seen(what: string): void {
    const h = claimHash(what);
    const left = (this.left.get(h) ?? 0) - 1;
    if (left === 0) this.left.delete(h);
    else this.left.set(h, left);
  }

  whole(what: string): boolean {
    return !this.left.has(claimHash(what));
  }
}

/** The ledger's lines grouped by the claim or order they pay (src/record/action-stream.ts), complete by LineCount. */
function creditLines(
  take: (issuance: Issuance, same: Issuance[]) => void,
  want: (a: AttemptRecord) => boolean,
  count: LineCount,
): ActionLines<LedgerRecord, AttemptRecord> {
  return {
    key: (r) => keyParts(r.key).what,
    entry: (r) => (r.type === 'attempt' && want(r) ? r : undefined),
    complete: (a) => count.whole(keyParts(a.key).what),
    forget: (what) => count.whole(what),
    hand: (a, lines) => {
      const same = groupIssuances(lines);
      const own = same.find((i) => i.attempt.issuance === a.issuance);
      // An attempt line repeating an id used before is not a new attempt (groupIssuances): only the first is handed over.
      if (own && sameAttempt(own.attempt, a)) take(own, same);
    },
  };
}

/** Whether two attempt lines are the same line read twice (by the stream and by its claim's index). */
function sameAttempt(a: AttemptRecord, b: AttemptRecord): boolean {
  return a.at === b.at && a.key === b.key && a.host === b.host && a.amountCents === b.amountCents;
}

/** The ledger a profile uses: in its record folder, with the ledgers of every place it lived before (earlierPlaces). */
export function ledgerFor(configDir: string, profile: { recordDir?: string } | undefined): Ledger {
  const place = recordPlace(configDir, profile);
  return new Ledger(
    place,
    earlierPlaces(place).map((p) => new Ledger(p)),
  );
}

/** A ledger line whose action is unknown (torn, or set aside): its key, when it could be read, is held as `uncertain`; `reason` follows "Line N of the ledger". */
export type UncertainLine = Pick<DamagedLine, 'line' | 'key' | 'issuance'> & { reason: string };
