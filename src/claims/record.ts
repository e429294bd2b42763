/**
 * The record of claims filed for one store: one append-only JSONL file per API origin and store id
 * (`claims-record-<hash>.jsonl` in the record folder: the config folder, or a team's record-dir),
 * shared by every profile, every input file and every journal that files for that store. Every
 * claim opcli files, alone or from a batch, is written here as an `intent` made durable (fdatasync)
 * before its request leaves, then an `outcome`; a command that files consults it first, under the
 * record's lock, so the same claim copied into another file, pasted twice or run twice from
 * `--data` is held instead of filed again. Lines are read as the gift card ledger's are
 * (src/record-lines.ts): a line that cannot be read stops every command that files; a torn last
 * line is set aside and its claim stays `uncertain`.
 *
 * Fast path (docs/benchmarks.md#the-record-of-claims, bench/claims-batch.mjs): the index is a
 * key-table.ts table of byte offsets, and a batch writes its intents in one write and one
 * fdatasync per group, alongside the journal's.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, fdatasync, fdatasyncSync, fstatSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { acquireFileLock, type HeldLock } from '../config/lock.js';
import { openPrivateFile } from '../config/private-file.js';
import { ensureRecordDir, type RecordPlace } from '../config/record-dir.js';
import { ExitCode, OpcliError } from '../errors.js';
import { hostName, osUser } from '../giftcard/ledger.js';
import type { RepairTarget } from '../record-repair.js';
import { blockingDamage, type DamagedLine, describeDamaged, readRecordLine, settleSetAside } from '../record-lines.js';
import { KeyTable } from './key-table.js';

/** The format this opcli writes; a line of a higher one stops a command (upgrade). */
export const RECORD_VERSION = 1;

/** The store a record belongs to: the API base URL's origin and the store id. */
export interface RecordStore {
  origin: string | null;
  storeId: string | null;
}

const Header = z.object({
  v: z.literal(1),
  type: z.literal('header'),
  record: z.literal('opcli claims'),
  origin: z.string().nullable(),
  storeId: z.string().nullable(),
  created: z.string(),
});

/** A claim about to be sent (durable before it leaves). */
const DiskIntent = z.object({
  v: z.literal(1),
  /** One id per filing, shared by its intent and outcome. */
  issuance: z.string(),
  /** The claim's content key (identity.ts: its robust content hashed, with its occurrence in its file). */
  key: z.string(),
  type: z.literal('intent'),
  at: z.string(),
  /** A batch's rows name their run (a `run` line), which says once who filed them, from where. */
  run: z.string().optional(),
  user: z.string().optional(),
  host: z.string().optional(),
  profile: z.string().optional(),
  /** Where the claim came from: the input file (absolute), `--data <file>`, or `prompt`. */
  source: z.string().optional(),
  line: z.number().int().optional(),
  /** The batch's journal: its request leaves only once both are durable, so an intent its journal lacks never left. */
  journal: z.string().optional(),
  /** recordSimilarity (identity.ts): the customer's e-mail and the item. */
  sim: z.string().optional(),
  email: z.string().optional(),
  item: z.string().optional(),
  forced: z.boolean().optional(),
});

/** A batch run: who filed its rows, with which profile, from which file and journal. */
const RunLine = z.object({
  v: z.literal(1),
  type: z.literal('run'),
  run: z.string(),
  at: z.string(),
  user: z.string(),
  host: z.string(),
  profile: z.string(),
  source: z.string(),
  journal: z.string().optional(),
});
type RunLine = z.infer<typeof RunLine>;

/** An intent with its run's details filled in. */
export type IntentLine = z.infer<typeof DiskIntent> & { user: string; host: string; profile: string; source: string };

/** What a command gives for an intent (the rest is filled in). */
export type NewIntent = Omit<z.infer<typeof DiskIntent>, 'v' | 'type' | 'at' | 'user' | 'host'>;

/** filed: created; rejected and not_sent: nothing was created; uncertain: sent, fate unknown. */
export const RecordStatus = z.enum(['filed', 'rejected', 'uncertain', 'not_sent']);
export type RecordStatus = z.infer<typeof RecordStatus>;

const OutcomeLine = z.object({
  v: z.literal(1),
  issuance: z.string(),
  key: z.string(),
  type: z.literal('outcome'),
  at: z.string(),
  status: RecordStatus,
  sourceOrderId: z.string().optional(),
  error: z.string().optional(),
});
export type OutcomeLine = z.infer<typeof OutcomeLine>;

const SetAsideLine = z.object({
  v: z.literal(1),
  issuance: z.string(),
  key: z.string(),
  type: z.literal('set-aside'),
  at: z.string(),
  user: z.string(),
  line: z.number().int().positive(),
  reason: z.string(),
});

/** A journal whose filed and uncertain rows were read into the record (once: a later run skips it). */
const ImportedLine = z.object({
  v: z.literal(1),
  type: z.literal('imported'),
  at: z.string(),
  journal: z.string(),
  entries: z.number().int().nonnegative(),
});

export const RecordLine = z.discriminatedUnion('type', [Header, DiskIntent, OutcomeLine, SetAsideLine, ImportedLine, RunLine]);
export type RecordLine = z.infer<typeof RecordLine>;

/** A line as the record's readers see it: an intent with its run's details filled in. */
export type ReadLine = Exclude<RecordLine, { type: 'intent' }> | IntentLine;

/** Parses a line of the record (undefined: not a record of this version). */
export const parseRecordLine = (value: unknown): RecordLine | undefined => RecordLine.safeParse(value).data;

// CHOICE (docs/spec-choices.md#record-of-claims): one append-only file per API origin and store id, beside the ledger.
/** The record's file name for a store: the origin and store id hashed (the header names them in full). */
export function recordFileName(store: RecordStore): string {
  const id = createHash('sha256')
    .update(`${store.origin ?? '-'}\n${store.storeId ?? '-'}`)
    .digest('hex')
    .slice(0, 16);
  return `claims-record-${id}.jsonl`;
}

/** Where a claim stands in the record: what a new filing of it is checked against. */
export type RecordState = 'sending' | RecordStatus | 'torn';
const STATES: readonly RecordState[] = ['sending', 'filed', 'rejected', 'uncertain', 'not_sent', 'torn'];

/** States under which the claim exists or may exist: the same claim (or a similar one) is held. */
export const MAY_EXIST: ReadonlySet<RecordState> = new Set(['sending', 'filed', 'uncertain', 'torn']);

/** What the record says of a key: its state and, when one was read, its intent and outcome. */
export interface RecordHit {
  state: RecordState;
  intent?: IntentLine;
  outcome?: OutcomeLine;
  /** The record's line of a torn or set-aside entry. */
  tornLine?: number;
}

const HEX64 = /^[0-9a-f]{16}/;

/** A record that cannot be read safely: nothing may be filed until it is repaired (exit 2). */
export class RecordDamagedError extends OpcliError {
  constructor(path: string, lines: DamagedLine[]) {
    super(
      `The record of claims ${path} cannot be read: ${describeDamaged(lines)}. Nothing was sent: a line opcli cannot read could be a claim already filed, and filing without it could file it twice.`,
      {
        exitCode: ExitCode.usage,
        hint:
          lines[0]?.kind === 'newer'
            ? 'Upgrade opcli to the version that wrote it (npm install -g opcli), or use that version on this computer.'
            : 'Run `opcli claims repair` to set the damaged line(s) aside (a copy of the file is kept; the claims they name are then held as uncertain), or follow "A damaged record" in docs/guides/batch-claims.md.',
        details: { record: path, lines: lines.map((d) => ({ line: d.line, kind: d.kind })) },
      },
    );
  }
}

/** How the record is opened: to file (under its lock), or to read (a dry run, history). */
export interface OpenRecord {
  place: RecordPlace;
  store: RecordStore;
  /** Take the lock (to file): how long to wait for another run holding it. */
  lock?: { waitMs: number };
  /** Read a damaged record without refusing it (history, repair: never to file). */
  tolerateDamage?: boolean;
}

/**
 * The record of one store, read into an index of byte offsets: the last state of each key, and for
 * each similarity fingerprint the intent of the last claim that may exist with it.
 */
export class ClaimRecord {
  readonly path: string;
  private readonly table = new KeyTable(256, (n) => ({
    state: new Uint8Array(n),
    offset: new Float64Array(n),
    outcome: new Float64Array(n),
    torn: new Uint32Array(n),
  }));
  private readonly sims = new KeyTable(256, (n) => ({ offset: new Float64Array(n) }));
  private fd: number | undefined;
  /** The file open to read (a record opened without its lock). */
  private readFd: number | undefined;
  private pending: string[] = [];
  /** Intents and outcomes written by this process, by key (read back without the file). */
  private readonly written = new Map<string, RecordHit>();

  private constructor(
    readonly place: RecordPlace,
    readonly store: RecordStore,
    private readonly lock: HeldLock | undefined,
  ) {
    this.path = join(place.dir, recordFileName(store));
  }

  /** The record's lock name in its folder. */
  static lockName(store: RecordStore): string {
    return recordFileName(store).replace(/\.jsonl$/, '');
  }

  /**
   * Opens and reads the record. With `lock`, the record's lock is held until `close()`, the file is
   * created with its header when missing, and a torn last line is set aside; a damaged line throws
   * RecordDamagedError before anything else.
   */
  static async open(options: OpenRecord): Promise<ClaimRecord> {
    ensureRecordDir(options.place);
    const lock = options.lock
      ? await acquireFileLock(options.place.dir, ClaimRecord.lockName(options.store), {
          waitMs: options.lock.waitMs,
          shared: !!options.place.shared,
          busy: (holder) =>
            new OpcliError(`Another opcli run is filing claims for this store (${holder}); nothing was sent.`, {
              exitCode: ExitCode.partial,
              hint: 'Let it finish, then run the same command again: what it filed is held, not filed twice. --lock-wait waits longer (a batch).',
            }),
        })
      : undefined;
    return ClaimRecord.build(options, lock);
  }

  /** Opens the record without its lock (a read: history, repair's look). */
  static openSync(options: OpenRecord): ClaimRecord {
    ensureRecordDir(options.place);
    return ClaimRecord.build({ ...options, lock: undefined }, undefined);
  }

  private static build(options: OpenRecord, lock: HeldLock | undefined): ClaimRecord {
    const record = new ClaimRecord(options.place, options.store, lock);
    try {
      record.load(!!lock, !!options.tolerateDamage && !lock);
    } catch (error) {
      record.close();
      throw error;
    }
    return record;
  }

  /** The lines that cannot be read (a record opened with `tolerateDamage`). */
  damaged: DamagedLine[] = [];

  private load(writing: boolean, tolerate: boolean): void {
    const flags = writing ? constants.O_RDWR | constants.O_CREAT | constants.O_APPEND : constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
    const fd = openPrivateFile(this.path, flags, 'record of claims', 0o600, this.place.shared);
    if (fd === undefined) return;
    if (writing) this.fd = fd;
    else this.readFd = fd;
    {
      const damaged = this.index(fd);
      this.damaged = damaged;
      const blocking = blockingDamage(damaged);
      if (blocking.length && !tolerate) throw new RecordDamagedError(this.path, blocking);
      if (!writing) return;
      const size = fstatSync(fd).size;
      if (size === 0)
        this.pending.push(
          `${JSON.stringify({ v: 1, type: 'header', record: 'opcli claims', origin: this.store.origin, storeId: this.store.storeId, created: new Date().toISOString() })}\n`,
        );
      const torn = damaged.find((d) => d.kind === 'torn' && d.line === this.lines);
      if (torn && this.unterminated) {
        // The last line was cut short: ended, and set aside by a line naming it, so it stays uncertain.
        const aside = {
          v: 1,
          issuance: torn.issuance,
          key: torn.key,
          type: 'set-aside',
          at: new Date().toISOString(),
          user: osUser(),
          line: torn.line,
          reason: 'was cut short by an interrupted write',
        };
        this.writeNow(`\n${JSON.stringify(aside)}\n`);
      }
      if (this.pending.length) this.writeNow('');
    }
  }

  private lines = 0;
  private unterminated = false;

  /** Reads every line into the index; returns the damaged ones. */
  private index(fd: number): DamagedLine[] {
    const damaged: DamagedLine[] = [];
    const setAside = new Set<number>();
    const chunk = Buffer.allocUnsafe(256 * 1024);
    let rest: Buffer = Buffer.alloc(0);
    let restOffset = 0;
    let position = 0;
    const take = (text: string, offset: number, last: boolean) => {
      this.lines++;
      if (!text.trim()) return;
      const read = readRecordLine(text, this.lines, last, RECORD_VERSION, parseRecordLine);
      if ('damaged' in read) {
        damaged.push(read.damaged);
        return;
      }
      const r = read.record;
      if (r.type === 'header') {
        if (this.lines !== 1 || r.origin !== this.store.origin || r.storeId !== this.store.storeId) {
          damaged.push({ line: this.lines, kind: 'garbage' });
        }
        return;
      }
      if (this.lines === 1) damaged.push({ line: 1, kind: 'garbage' });
      if (r.type === 'imported') {
        this.imported.add(r.journal);
        return;
      }
      if (r.type === 'run') {
        this.runs.set(r.run, r);
        return;
      }
      if (r.type === 'set-aside') setAside.add(r.line);
      this.note(r, offset);
    };
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, position);
      if (n === 0) break;
      position += n;
      const buffer = rest.length ? Buffer.concat([rest, chunk.subarray(0, n)]) : chunk.subarray(0, n);
      let start = 0;
      let nl = buffer.indexOf(10);
      while (nl !== -1) {
        take(buffer.toString('utf8', start, nl), restOffset + start, false);
        start = nl + 1;
        nl = buffer.indexOf(10, start);
      }
      rest = Buffer.from(buffer.subarray(start));
      restOffset += start;
    }
    if (rest.length) {
      this.unterminated = true;
      take(rest.toString('utf8'), restOffset, true);
    }
    settleSetAside(damaged, setAside);
    for (const d of damaged) if (d.kind === 'torn' && d.key && HEX64.test(d.key)) this.mark(d.key, 'torn', -1, d.line);
    return damaged;
  }

  private mark(key: string, state: RecordState, offset: number, tornLine = 0): void {
    const i = this.table.slot(key);
    const c = this.table.columns;
    c.state[i] = STATES.indexOf(state) + 1;
    if (offset >= 0 || state === 'torn') c.offset[i] = offset + 1;
    if (tornLine) c.torn[i] = tornLine;
  }

  /** The batch runs of the record, by id (a few per day: small). */
  private readonly runs = new Map<string, RunLine>();

  /** An intent as read, its run's details filled in. */
  private resolve(i: z.infer<typeof DiskIntent>): IntentLine {
    const run = i.run === undefined ? undefined : this.runs.get(i.run);
    return {
      ...i,
      user: i.user ?? run?.user ?? '?',
      host: i.host ?? run?.host ?? '?',
      profile: i.profile ?? run?.profile ?? '?',
      source: i.source ?? run?.source ?? '?',
      journal: i.journal ?? run?.journal,
    };
  }

  /** Starts a batch run: its `run` line is written before its first intents. */
  startRun(run: string, details: { profile: string; source: string; journal?: string }, now = Date.now()): void {
    const line: RunLine = { v: 1, type: 'run', run, at: this.stamp(now), user: osUser(), host: hostName(), ...details };
    this.runs.set(run, line);
    this.pending.push(`${JSON.stringify(line)}\n`);
  }

  /** Journals already read into the record (absolute paths). */
  readonly imported = new Set<string>();

  /**
   * Appends lines read from elsewhere (a journal of an earlier version) as they are, with their own
   * dates, and the `imported` line naming where they came from; durable before it returns.
   */
  importLines(lines: (IntentLine | OutcomeLine)[], done?: { journal: string; entries: number }, now = Date.now()): void {
    const marker = done ? `${JSON.stringify({ v: 1, type: 'imported', at: this.stamp(now), journal: done.journal, entries: done.entries })}\n` : '';
    this.writeNow(`${lines.map((l) => `${JSON.stringify(l)}\n`).join('')}${marker}`);
    fdatasyncSync(this.fd as number);
    if (done) this.imported.add(done.journal);
  }

  /** Whether the record holds anything for a key (no read of the file). */
  has(key: string): boolean {
    return this.table.find(key) >= 0;
  }

  private note(r: Exclude<RecordLine, { type: 'header' | 'imported' | 'run' }>, offset: number): void {
    if (!HEX64.test(r.key)) return;
    if (r.type === 'intent') {
      this.mark(r.key, 'sending', offset);
      if (r.sim && HEX64.test(r.sim)) this.sims.columns.offset[this.sims.slot(r.sim)] = offset + 1;
    } else if (r.type === 'outcome') {
      const i = this.table.find(r.key);
      if (i >= 0) {
        this.table.columns.state[i] = STATES.indexOf(r.status) + 1;
        this.table.columns.outcome[i] = offset + 1;
      }
    } else this.mark(r.key, 'torn', -1, r.line);
  }

  /** What the record holds for a content key (undefined: never filed from anywhere). */
  lookup(key: string): RecordHit | undefined {
    const mine = this.written.get(key);
    if (mine) return mine;
    const i = this.table.find(key);
    if (i < 0) return undefined;
    const c = this.table.columns;
    const state = STATES[(c.state[i] as number) - 1] as RecordState;
    const offset = (c.offset[i] as number) - 1;
    const outcomeAt = (c.outcome[i] as number) - 1;
    const intent = offset >= 0 ? (this.lineAt(offset) as IntentLine | undefined) : undefined;
    const outcome = state !== 'sending' && outcomeAt >= 0 ? (this.lineAt(outcomeAt) as OutcomeLine | undefined) : undefined;
    return { state, intent, tornLine: (c.torn[i] as number) || undefined, outcome };
  }

  /** The last claim that may exist with this similarity fingerprint and another key, or undefined. */
  similar(sim: string | undefined, key: string): RecordHit | undefined {
    if (!sim || !HEX64.test(sim)) return undefined;
    const i = this.sims.find(sim);
    if (i < 0) return undefined;
    const intent = this.lineAt((this.sims.columns.offset[i] as number) - 1) as IntentLine | undefined;
    if (!intent || intent.key === key) return undefined;
    const hit = this.lookup(intent.key);
    return hit && MAY_EXIST.has(hit.state) ? { ...hit, intent } : undefined;
  }

  /** Every readable line of the file, in order (for history, and the outcome of a hit). */
  *all(): Generator<ReadLine> {
    const fd = openPrivateFile(this.path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0), 'record of claims', 0o600, this.place.shared);
    if (fd === undefined) return;
    try {
      const text = readAllSync(fd);
      for (const line of text.split('\n')) {
        if (!line) continue;
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          continue;
        }
        const r = parseRecordLine(value);
        if (r?.type === 'run') this.runs.set(r.run, r);
        if (r) yield r.type === 'intent' ? this.resolve(r) : r;
      }
    } finally {
      closeSync(fd);
    }
  }

  private lineAt(offset: number): ReadLine | undefined {
    const fd = this.fd ?? this.readFd;
    if (fd === undefined) return undefined;
    {
      let size = 1024;
      for (;;) {
        const buffer = Buffer.alloc(size);
        const n = readSync(fd, buffer, 0, size, offset);
        const end = buffer.subarray(0, n).indexOf(10);
        if (end === -1 && n === size) {
          size *= 4;
          continue;
        }
        try {
          const r = parseRecordLine(JSON.parse(buffer.toString('utf8', 0, end === -1 ? n : end)));
          return r?.type === 'intent' ? this.resolve(r) : r;
        } catch {
          return undefined;
        }
      }
    }
  }

  /**
   * Appends intents in one write and makes them durable (fdatasync) before returning: only then
   * may their requests leave. Call while the record is open with its lock.
   */
  intents(lines: NewIntent[], now = Date.now()): void {
    this.writeIntents(lines, now, true);
    fdatasyncSync(this.fd as number);
  }

  /** `intents` for a batch: written at once, the fdatasync in the thread pool (the event loop goes on sending). */
  intentsDurable(lines: NewIntent[], now = Date.now()): Promise<void> {
    try {
      this.writeIntents(lines, now, false);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => fdatasync(this.fd as number, (error) => (error ? reject(error) : resolve())));
  }

  /** `remember`: kept for `lookup` (one claim; a batch's own rows are told apart by their occurrence, and a million would not fit). */
  private writeIntents(lines: NewIntent[], now: number, remember: boolean): void {
    const at = this.stamp(now);
    const user = (this.user ??= osUser());
    const host = (this.host ??= hostName());
    let text = '';
    for (const l of lines) {
      if (l.run !== undefined && !remember) {
        // A batch row (the fast path): its run line says who and from where; the text is written by hand, the free text quoted by JSON.stringify.
        text += `{"v":1,"issuance":${JSON.stringify(l.issuance)},"key":${JSON.stringify(l.key)},"type":"intent","at":"${at}","run":${JSON.stringify(l.run)}${l.line === undefined ? '' : `,"line":${l.line}`}${l.sim === undefined ? '' : `,"sim":${JSON.stringify(l.sim)}`}${l.email === undefined ? '' : `,"email":${JSON.stringify(l.email)}`}${l.item === undefined ? '' : `,"item":${JSON.stringify(l.item)}`}}\n`;
        continue;
      }
      const { issuance, key, ...rest } = l;
      // The id and key first: a line cut short still names its claim (src/record-lines.ts).
      const intent = { v: 1 as const, issuance, key, type: 'intent' as const, at, ...(rest.run === undefined ? { user, host } : {}), ...rest };
      text += `${JSON.stringify(intent)}\n`;
      if (remember) this.written.set(key, { state: 'sending', intent: this.resolve(intent) });
    }
    this.writeNow(text);
  }

  /** Queues an outcome (written with the next intents, or by `flush`/`close`). */
  outcome(o: Omit<OutcomeLine, 'v' | 'type' | 'at'>, now = Date.now()): void {
    const at = this.stamp(now);
    this.pending.push(
      `{"v":1,"issuance":${JSON.stringify(o.issuance)},"key":${JSON.stringify(o.key)},"type":"outcome","at":"${at}","status":"${o.status}"${o.sourceOrderId === undefined ? '' : `,"sourceOrderId":${JSON.stringify(o.sourceOrderId)}`}${o.error === undefined ? '' : `,"error":${JSON.stringify(o.error)}`}}\n`,
    );
    if (this.written.size === 0) return;
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

  private writeNow(text: string): void {
    const all = this.pending.join('') + text;
    this.pending = [];
    if (!all) return;
    const fd = this.fd as number;
    const bytes = Buffer.from(all, 'utf8');
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done);
  }

  /** Writes what is queued and makes it durable. */
  flush(): void {
    if (this.fd === undefined) return;
    this.writeNow('');
    fdatasyncSync(this.fd);
  }

  /** Releases the lock, keeping the file open to write outcomes (appended whole, O_APPEND: no lock needed for them). */
  releaseLock(): void {
    this.lock?.release();
  }

  /** Whether the lock was taken by another run meanwhile. */
  lost(): boolean {
    return this.lock?.lost() ?? false;
  }

  /** `close` with the last fdatasync in the thread pool (a batch's end, beside the journal's). */
  async closeDurable(): Promise<void> {
    try {
      if (this.fd !== undefined) {
        this.writeNow('');
        const fd = this.fd;
        this.fd = undefined;
        try {
          await new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
        } finally {
          closeSync(fd);
        }
      }
    } finally {
      this.close();
    }
  }

  /** Writes what is queued, closes the file and releases the lock. */
  close(): void {
    try {
      if (this.fd !== undefined) {
        this.flush();
        closeSync(this.fd);
      }
    } finally {
      if (this.readFd !== undefined) closeSync(this.readFd);
      this.fd = undefined;
      this.readFd = undefined;
      this.lock?.release();
    }
  }
}

function readAllSync(fd: number): string {
  const parts: Buffer[] = [];
  const chunk = Buffer.allocUnsafe(256 * 1024);
  let position = 0;
  for (;;) {
    const n = readSync(fd, chunk, 0, chunk.length, position);
    if (n === 0) break;
    parts.push(Buffer.from(chunk.subarray(0, n)));
    position += n;
  }
  return Buffer.concat(parts).toString('utf8');
}

/** A new id for one filing. */
export function newIssuance(): string {
  return randomBytes(9).toString('hex');
}

/** "from claims.csv line 4 on 2026-11-27 14:03 UTC (profile prod, user alice, sourceOrderId SO-1)": an earlier filing in words. */
export function describeHit(hit: RecordHit): string {
  const i = hit.intent;
  if (!i) return `(line ${hit.tornLine ?? '?'} of the record, cut short: its outcome is unknown)`;
  const from =
    i.source === 'prompt' ? 'at the prompt' : i.source.startsWith('--data ') ? `from ${i.source}` : `from ${i.source}${i.line ? ` line ${i.line}` : ''}`;
  const id = hit.outcome?.sourceOrderId ? `, sourceOrderId ${hit.outcome.sourceOrderId}` : '';
  return `${from} on ${i.at.slice(0, 16).replace('T', ' ')} UTC (profile ${i.profile}, user ${i.user}${id})`;
}

/** The words for a hit's state: "filed", "sent (outcome uncertain)". */
export function stateWords(state: RecordState): string {
  if (state === 'filed') return 'filed';
  if (state === 'torn' || state === 'uncertain' || state === 'sending') return 'sent (outcome uncertain)';
  return state === 'rejected' ? 'rejected' : 'not sent';
}

/** The record of a store as a file `claims repair` can set damaged lines aside in (src/record-repair.ts). */
export function recordRepairTarget(place: RecordPlace, store: RecordStore, now: () => number): RepairTarget {
  const path = join(place.dir, recordFileName(store));
  return {
    path,
    what: 'record of claims',
    command: 'opcli claims repair',
    shared: place.shared,
    withLock: async (fn) => {
      ensureRecordDir(place);
      const lock = await acquireFileLock(place.dir, ClaimRecord.lockName(store), { shared: !!place.shared });
      try {
        return await fn();
      } finally {
        lock.release();
      }
    },
    damaged: () => {
      // Read as a command that files reads it, without refusing: what it finds is what the repair sets aside.
      const probe = ClaimRecord.openSync({ place, store, tolerateDamage: true });
      probe.close();
      return probe.damaged;
    },
    parse: parseRecordLine,
    setAside: (d, reason, at) =>
      d.line === 1
        ? JSON.stringify({ v: 1, type: 'header', record: 'opcli claims', origin: store.origin, storeId: store.storeId, created: new Date(now()).toISOString() })
        : JSON.stringify({
            v: 1,
            issuance: d.issuance ?? `damaged-line-${d.line}`,
            key: d.key ?? 'unknown',
            type: 'set-aside',
            at,
            user: osUser(),
            line: d.line,
            reason,
          }),
  };
}
