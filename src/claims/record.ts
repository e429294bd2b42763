/**
 * The record of claims filed for one store: one append-only JSONL file per API origin and store id
 * in the record folder, shared by every profile, input file and journal filing for that store. Every
 * claim, alone or from a batch, is an `intent` made durable before its request leaves, then an
 * `outcome`; a command that files asks it first, under its lock, so a claim copied, pasted twice or
 * run twice is held, not filed again. This file opens, asks and writes it (a batch's intents one write
 * and one fdatasync a group: src/record/log.ts LogGroup); its lines are record-format.ts, its terms record-index.ts.
 * The record a run files through is picked here too (openClaimsRecord, as openLedger is for store
 * credit): the team's database with a record-url (src/record-pg/claims.ts), else this file. Both
 * answer ClaimsRecord, so a single claim, a batch and `claims history` are one code.
 */
import { closeSync } from 'node:fs';
import { join } from 'node:path';
import type { HeldLock } from '../config/lock.js';
import type { ResolvedProfile } from '../config/profile.js';
import { earlierPlaces, type RecordPlace } from '../config/record-dir.js';
import type { Timers } from '../core/timers.js';
import { hostName, osUser } from '../config/user-name.js';
import { type DamagedLine, parseText } from '../record/damage.js';
import { LogGroup, lockRecord } from '../record/log.js';
import { claimMayExist } from '../record/outcome.js';
import { eachLine } from '../record/file-lines.js';
import {
  type BatchRow,
  batchIntentLine,
  HEX64,
  type IntentLine,
  type NewIntent,
  type OutcomeLine,
  outcomeLine,
  parseRecordLine,
  strongest,
  type ReadLine,
  type RecordHit,
  type RecordLine,
  type RecordStore,
  recordFileName,
  type RunLine,
} from './record-format.js';
import { ClaimQuestions, claimFile, resolveIntent } from './record-index.js';
import { type OpenedRecord, openRecord } from '../record/store.js';
import type { ConnectionContext } from '../record-pg/connection.js';
import type { Answer, PlanRecord } from './plan.js';

export * from './record-format.js';

/** How long a second run waits for the lock (`--lock-wait`); a killed run's needs no wait: a dead owner's lock is reclaimed at once. */
export const LOCK_WAIT_MS = 5_000;

/** How the record is opened: to file (under its lock), or to read (a dry run, history). */
export interface OpenRecord {
  place: RecordPlace;
  store: RecordStore;
  /** Take the lock (to file): how long to wait for another run holding it, on the run's timers (default: the wall clock). */
  lock?: { waitMs: number; timers?: Timers };
  /** Read a damaged record without refusing it (history, repair: never to file). */
  tolerateDamage?: boolean;
}

/** Intents another member committed first, by filing id: why each row is held (it was never sent). */
export type Taken = Map<string, string>;

/** What writing intents answers: nothing (the file record, under its lock), or the filings another member committed first. */
// biome-ignore lint/suspicious/noConfusingVoidType: the file record's writes return nothing
export type Durable = Taken | undefined | void;

/** The record of claims of one store, as its clients use it (ClaimRecord and DatabaseClaimRecord): what the planner asks (PlanRecord), and the writes. */
export interface ClaimsRecord extends PlanRecord {
  /** The file's path, or `record database HOST:PORT/DB` (never the password). */
  readonly path: string;
  /** One claim's intent, durable before it returns; the filings in `Taken` (another member's attempt first) must not be sent. */
  intents(lines: NewIntent[], now?: number): Answer<Durable>;
  /** A batch group's intents, durable when the promise resolves; the filings in `Taken` must not be sent. */
  intentsDurable(lines: NewIntent[], now?: number): Promise<Durable>;
  /** Queues an attempt's outcome. */
  outcome(o: Omit<OutcomeLine, 'v' | 'type' | 'at'>, now?: number): void;
  /** Whether another run took the record's lock since it was opened (the database takes none: never). */
  lost(): boolean;
  /** Writes what is queued, durably, and closes. */
  closeDurable(): Promise<void>;
  /** Closes (the file: what is queued is written; the database: closeDurable writes it). */
  close(): Answer<void>;
}

/** What picking the record needs beyond the profile: the environment and folder the database's credentials are read from (libpq's rules). */
export type RecordContext = Omit<ConnectionContext, 'passwordSource'>;

/** The store a profile files for. */
export interface OpenClaims {
  store: RecordStore;
  /** To file: the file record's lock is taken, waiting this long for another run (the database takes none). */
  lock?: OpenRecord['lock'];
}

/** The record of one store, asked by key, similarity and customer through its index (src/record/store.ts): only the lines that answer are read. */
export class ClaimRecord {
  readonly path: string;
  /** The record's questions (undefined: no file yet). */
  private q: ClaimQuestions | undefined;
  /** The file open to append, under the lock (src/record/log.ts: the group commit). */
  private group: LogGroup | undefined;
  /** Intents and outcomes written by this process, by key (read back without the file). */
  private readonly written = new Map<string, RecordHit>();

  private constructor(
    readonly place: RecordPlace,
    readonly store: RecordStore,
    private readonly lock: HeldLock | undefined,
  ) {
    this.path = join(place.dir, recordFileName(store));
  }

  /** Opens the record; with `lock` held until `close()`, created with its header, a torn last line set aside. Damage throws DamagedRecordFileError (exit 2). */
  static async open(options: OpenRecord): Promise<ClaimRecord> {
    const lock = options.lock ? await lockRecord(options.place, claimFile(options.store), options.lock) : undefined;
    return ClaimRecord.openSync(options, lock);
  }

  /** Opens the record without its lock (a read: history, repair's look), or (`open`) with the `lock` it took. */
  static openSync(options: OpenRecord, lock?: HeldLock): ClaimRecord {
    const record = new ClaimRecord(options.place, options.store, lock);
    try {
      record.load(!!lock, !!options.tolerateDamage && !lock);
      // Every place the record lived before is read too (record-dir.ts): moving it forgets no claim.
      for (const place of options.tolerateDamage ? [] : earlierPlaces(options.place)) {
        record.earlier.push(new ClaimRecord(place, options.store, undefined));
        record.earlier.at(-1)?.load(false, false);
      }
    } catch (error) {
      record.close();
      throw error;
    }
    return record;
  }

  /** The lines that cannot be read (a record opened with `tolerateDamage`). */
  damaged: DamagedLine[] = [];
  /** The file as opened (src/record/store.ts): read and found intact, only then is what this person leaves witnessed. */
  private opened: OpenedRecord<RecordLine> | undefined;
  /** The record of this store in the places it lived before, read only. */
  private readonly earlier: ClaimRecord[] = [];

  private load(writing: boolean, tolerate: boolean): void {
    const file = claimFile(this.store);
    const opened = openRecord(this.place, file, writing, tolerate);
    if (!opened) return;
    this.opened = opened;
    this.q = new ClaimQuestions(opened.q);
    this.damaged = opened.damaged;
    // Created with its header, or a last line cut short ended and set aside, so it stays uncertain (src/record/log.ts).
    if (writing) this.group = new LogGroup(opened.fd, this.place, file, () => opened.damaged, { at: new Date().toISOString(), user: osUser() });
  }

  /** Starts a batch run: its `run` line is written before its first intents. */
  startRun(run: string, details: { profile: string; source: string; journal?: string }, now = Date.now()): void {
    const line: RunLine = { v: 1, type: 'run', run, at: this.stamp(now), user: osUser(), host: hostName(), ...details };
    this.q?.runs.set(run, line);
    this.group?.queue(`${JSON.stringify(line)}\n`);
  }

  /** Journals already read into the record (absolute paths). */
  get imported(): Set<string> {
    return this.q?.imported ?? new Set();
  }

  /** Appends a 0.2.0 journal's lines as they are, and with `done` the `imported` line naming it; durable before it returns. */
  importLines(lines: (IntentLine | OutcomeLine)[], done?: { journal: string; entries: number }, now = Date.now()): void {
    const marker = done ? `${JSON.stringify({ v: 1, type: 'imported', at: this.stamp(now), journal: done.journal, entries: done.entries })}\n` : '';
    this.writable().sync(`${lines.map((l) => `${JSON.stringify(l)}\n`).join('')}${marker}`);
    if (done) this.q?.imported.add(done.journal);
  }

  /** Brings the index up to the file again: lines imported from journals (`importLines`) are written, not indexed. */
  reindex(): void {
    this.q?.q.reopen();
  }

  /** What the record holds for a content key (undefined: never filed from anywhere), here or where it lived before: the strongest answer. */
  lookup(key: string): RecordHit | undefined {
    return strongest([this, ...this.earlier].map((r) => r.written.get(key) ?? r.q?.hitOf(key, r.damaged)));
  }

  /** The resume's question (record-index.ts `batchRow`), here first, then where the record lived before. */
  batchRow(batch: string, by: { key: string } | { like: string }): BatchRow | undefined {
    for (const r of [this, ...this.earlier]) {
      const row = r.q?.batchRow(batch, by, r.damaged);
      if (row) return row;
    }
    return undefined;
  }

  /** The last claim that may exist with this similarity fingerprint and another key, or undefined (here first, then where the record lived before). */
  similar(sim: string | undefined, key: string): RecordHit | undefined {
    for (const r of [this, ...this.earlier]) {
      const intent = sim && HEX64.test(sim) ? r.q?.lastIntentOf(sim) : undefined;
      if (!intent || intent.key === key) continue;
      // An earlier place's record has no earlier places: its lookup is its own lines'.
      const hit = r.lookup(intent.key);
      if (hit && claimMayExist(hit.state)) return { ...hit, intent };
    }
    return undefined;
  }

  /** Every readable line of the file, in order (history), intents resolved, handed to `take` as it is read: `run` lines are remembered on the way. */
  eachLine(take: (r: ReadLine) => void): void {
    const q = this.q;
    if (!this.opened || !q) return;
    eachLine(this.opened.fd, (buffer, start, end, _offset, _complete, long) => {
      const r = end > start && !long ? parseText(parseRecordLine, buffer.toString('utf8', start, end)) : undefined;
      if (r?.type === 'run') q.runs.set(r.run, r);
      if (r) take(r.type === 'intent' ? q.resolve(r) : r);
    });
  }

  /** Every readable line, in order, gathered (a small record's read: history streams with `eachLine`). */
  all(): ReadLine[] {
    const lines: ReadLine[] = [];
    this.eachLine((r) => lines.push(r));
    return lines;
  }

  /** The lines that hold any of `terms` (`key:`, `customer:`, `order:`: record-index.ts), in order, intents resolved. */
  linesOf(...terms: string[]): ReadLine[] {
    return this.q?.linesOf(...terms) ?? [];
  }

  /** Appends intents in one write, durable (fdatasync) when it returns: only then may their requests leave. */
  intents(lines: NewIntent[], now = Date.now()): void {
    this.writable().sync(this.intentText(lines, now, true));
  }

  /** `intents` for a batch: written at once, the fdatasync in the thread pool (the event loop goes on sending). */
  intentsDurable(lines: NewIntent[], now = Date.now()): Promise<void> {
    return this.writable().syncInPool(this.intentText(lines, now, false));
  }

  /** The group commit of the record opened with its lock (to file). */
  private writable(): LogGroup {
    if (!this.group) throw new Error('The record of claims was not opened to file (with its lock).');
    return this.group;
  }

  /** `remember`: kept for `lookup` (one claim; a batch's own rows are told apart by their occurrence, and a million would not fit). */
  private intentText(lines: NewIntent[], now: number, remember: boolean): string {
    const at = this.stamp(now);
    const user = (this.user ??= osUser());
    const host = (this.host ??= hostName());
    let text = '';
    for (const l of lines) {
      if (l.run !== undefined && !remember) {
        // A batch row (the fast path): its run line says who and from where.
        text += batchIntentLine(l as NewIntent & { run: string }, at);
        continue;
      }
      const { issuance: filing, key, ...rest } = l;
      // The id and key first: a line cut short still names its claim (src/record/damage.ts).
      const intent = { v: 1 as const, issuance: filing, key, type: 'intent' as const, at, ...(rest.run === undefined ? { user, host } : {}), ...rest };
      text += `${JSON.stringify(intent)}\n`;
      if (remember) this.written.set(key, { state: 'sending', intent: resolveIntent(intent, undefined) });
    }
    return text;
  }

  /** Queues an outcome, written unsynced at the end of the turn (LogGroup.later): lost to a power cut, its attempt reads as uncertain. */
  outcome(o: Omit<OutcomeLine, 'v' | 'type' | 'at'>, now = Date.now()): void {
    const at = this.stamp(now);
    this.group?.later(outcomeLine(o, at));
    const mine = this.written.get(o.key);
    if (mine) this.written.set(o.key, { ...mine, state: o.status, outcome: { v: 1, type: 'outcome', at, ...o } });
  }

  private user: string | undefined;
  private host: string | undefined;
  private stampMs = Number.NaN;
  private stampText = '';

  /** `now` as ISO 8601, formatted once per millisecond (a batch writes thousands of lines in one). */
  private stamp(now: number): string {
    if (now !== this.stampMs) {
      this.stampMs = now;
      this.stampText = new Date(now).toISOString();
    }
    return this.stampText;
  }

  /** Whether the lock was taken by another run meanwhile. */
  lost(): boolean {
    return this.lock?.lost() ?? false;
  }

  /** `close` with the last fdatasync in the thread pool (a batch's end, beside the journal's). */
  async closeDurable(): Promise<void> {
    try {
      await this.group?.closeInPool(!!this.opened?.intact);
    } finally {
      this.close();
    }
  }

  /** Writes what is queued, makes it durable, closes the file and releases the lock. */
  close(): void {
    const opened = this.opened;
    this.opened = undefined;
    try {
      this.group?.close(!!opened?.intact);
    } finally {
      for (const e of this.earlier.splice(0)) e.close();
      // The group closes the file it writes; a record opened to read is closed here.
      if (opened && !this.group) closeSync(opened.fd);
      this.group = undefined;
      this.lock?.release();
    }
  }
}

/** The record of claims for a profile: the database with a record-url, else the file record in `place`. */
export async function openClaimsRecord(
  place: RecordPlace,
  profile: ResolvedProfile | undefined,
  ctx: RecordContext,
  options: OpenClaims,
): Promise<ClaimsRecord> {
  if (!profile?.record) return ClaimRecord.open({ place, store: options.store, lock: options.lock });
  // Imported here, not at the top: a run on the file record loads none of the database's modules, and
  // record-pg/claims.ts, which builds on this file, is not imported by it.
  const { DatabaseClaimRecord } = await import('../record-pg/claims.js');
  // The file record of this config folder and of every place it lived before: read, never written.
  const earlier = ClaimRecord.openSync({ place, store: options.store });
  return DatabaseClaimRecord.open(profile.record, { ...ctx, passwordSource: profile.record.passwordSource }, options.store, earlier);
}
