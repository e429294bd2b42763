/**
 * The batch journal: an append-only JSONL file beside the input that records, for each row key, that
 * its request is about to be sent (made durable BEFORE the request leaves) and then its outcome.
 * Appends are grouped: every entry queued while one fsync runs is written and synced by the next,
 * so "recorded before sent" holds without one fsync per row. A torn last line (kill -9 mid-write)
 * is ignored on read. A lock file keeps two runs from using one journal at once.
 *
 * A journal is bound to the service and store its rows were filed with: each section starts with a
 * header line naming them (JournalHeader), and only the sections of this run's service and store
 * count as proof that a row was filed. The file itself is opened as batch-files.ts says (no link
 * followed, yours, writable by you alone).
 */
import { type Stats, writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { acquireFileLock, type HeldLock } from '../config/lock.js';
import { JOURNAL_ROLE, openBatchFile } from './batch-files.js';
import { OpcliError, UsageError } from '../errors.js';
import { formatDuration } from '../flags.js';
import { half, KeyTable } from './key-table.js';
import type { FieldIssue } from '../schemas.js';

/**
 * sending: the request may be on its way (a crash leaves this, which reads as uncertain);
 * filed: created, with its sourceOrderId; rejected: refused by the API (nothing created);
 * uncertain: sent, fate unknown; not_sent: provably never created (sent again on the next run).
 */
export type JournalStatus = 'sending' | 'filed' | 'rejected' | 'uncertain' | 'not_sent';

export interface JournalEntry {
  key: string;
  line: number;
  status: JournalStatus;
  at: string;
  sourceOrderId?: string;
  reason?: string;
  errors?: FieldIssue[];
  /** `sending` only: the "looks like" fingerprint (identity.ts `similarity`). */
  sim?: string;
  /** `sending` only: the 32-bit tag of the row's content hash (tells a changed row under one `--key`). */
  tag?: number;
  /** `sending` only: the claim in its robust form (identity.ts), to show what differs when a similar row turns up. */
  claim?: unknown;
}

/** What a journal's header line starts with: what wrote it and in which format. */
export const JOURNAL_HEADER = { journal: 'opcli claims', version: 3 } as const;
/** The format before the service was recorded (opcli 0.2 to 0.x): still read, see LEGACY_VERSION's rule in readJournal. */
const LEGACY_VERSION = 2;

/** The service and store a journal section's rows were filed with. */
export interface JournalService {
  /** The API base URL's origin (scheme://host:port), or null when none was set. */
  origin: string | null;
  /** The store the profile files for, or null when the rows carry it. */
  storeId: string | null;
  /** The profile's name: for the person reading the file, never compared. */
  profile?: string;
}

/**
 * A header line (docs/guides/batch-claims.md#the-journals-header): the first line of a journal, and
 * again wherever a run with another service or store starts appending. Entries below it belong to it.
 * `{"journal":"opcli claims","version":3,"created":"…","service":{"origin":"https://…","storeId":"…","profile":"…"}}`
 */
export interface JournalHeader {
  journal: typeof JOURNAL_HEADER.journal;
  version: typeof JOURNAL_HEADER.version;
  created: string;
  service: JournalService;
}

/** The service of a run without a profile (tests of the journal alone). */
const NO_SERVICE: JournalService = { origin: null, storeId: null };

/** The base URL's origin, as a header records it (null when there is none or it is not a URL). */
export function serviceOrigin(baseUrl: string | undefined): string | null {
  if (!baseUrl) return null;
  try {
    return new URL(baseUrl).origin;
  } catch {
    return null;
  }
}

const sameService = (a: JournalService, b: JournalService) => a.origin === b.origin && a.storeId === b.storeId;

/** "https://api.example.com, store store_1 (profile prod)". */
export function describeService(s: JournalService): string {
  return `${s.origin ?? '(no base URL)'}, store ${s.storeId ?? '(none: rows carry it)'}${s.profile ? ` (profile ${s.profile})` : ''}`;
}

/** What a journal is opened with: the run's service, and where its notices go. */
export interface JournalBinding {
  service?: JournalService;
  notice?: (text: string) => void;
}

/** What the journal remembers of a row from earlier runs. */
export interface PriorOutcome {
  status: JournalStatus;
  /** Byte offset of the last entry of the key, where `priorDetail` reads its sourceOrderId and reason. */
  offset: number;
  /** Byte offset of its last `sending` entry (-1 when none): its line, date, content tag and claim. */
  sendOffset: number;
  /** The content tag of that entry (0 when none). */
  tag: number;
}

const STATUS_CODES: readonly JournalStatus[] = ['sending', 'filed', 'rejected', 'uncertain', 'not_sent'];
const STATUS_CODE = new Map(STATUS_CODES.map((s, i) => [s, i + 1]));
const HEX64 = /^[0-9a-f]{16}/;

/** The last outcome of each key of earlier runs (a key-table.ts table: 30 bytes a slot). */
export class PriorIndex {
  private readonly table = new KeyTable(1024, (n) => ({
    /** 1 + the index in STATUS_CODES. */
    status: new Uint8Array(n),
    /** Byte offset of the key's last entry. */
    offset: new Float64Array(n),
    /** 1 + the byte offset of its last `sending` entry (0: none). */
    sendOffset: new Float64Array(n),
    tag: new Uint32Array(n),
  }));

  get size(): number {
    return this.table.size;
  }

  /** Records the outcome of a key (a later entry replaces an earlier one; a `sending` entry also sets the content). */
  set(key: string, status: JournalStatus, offset: number, tag?: number): void {
    const code = STATUS_CODE.get(status);
    if (code === undefined || !HEX64.test(key)) return;
    const i = this.table.slot(key);
    const c = this.table.columns;
    c.status[i] = code;
    c.offset[i] = offset;
    if (status === 'sending') {
      c.sendOffset[i] = offset + 1;
      c.tag[i] = (tag ?? 0) >>> 0;
    }
  }

  /** The last outcome recorded for a key. */
  get(key: string): PriorOutcome | undefined {
    if (!HEX64.test(key)) return undefined;
    const i = this.table.find(key);
    if (i < 0) return undefined;
    const c = this.table.columns;
    return {
      status: STATUS_CODES[(c.status[i] as number) - 1] as JournalStatus,
      offset: c.offset[i] as number,
      sendOffset: (c.sendOffset[i] as number) - 1,
      tag: c.tag[i] as number,
    };
  }
}

/**
 * The "looks like" index: for each similarity fingerprint of earlier runs, the key of the last row
 * sent with it (preferring one whose claim exists or may exist).
 */
export class SimilarIndex {
  private readonly table = new KeyTable(256, (n) => ({ khi: new Uint32Array(n), klo: new Uint32Array(n) }));

  /** Remembers `key` for `sim`, unless `keep(existing key)` says the one already there is better. */
  set(sim: string, key: string, keep: (existing: string) => boolean): void {
    if (!HEX64.test(sim) || !HEX64.test(key)) return;
    const i = this.table.slot(sim);
    if (!this.table.fresh && keep(this.keyAt(i))) return;
    this.table.columns.khi[i] = half(key, 0);
    this.table.columns.klo[i] = half(key, 8);
  }

  /** The key (its first 64 bits, enough for `PriorIndex.get`) of the row remembered for `sim`. */
  get(sim: string): string | undefined {
    if (!HEX64.test(sim)) return undefined;
    const i = this.table.find(sim);
    return i < 0 ? undefined : this.keyAt(i);
  }

  private keyAt(i: number): string {
    const c = this.table.columns;
    return `${(c.khi[i] as number).toString(16).padStart(8, '0')}${(c.klo[i] as number).toString(16).padStart(8, '0')}`;
  }
}

/** What a journal's group writes and syncs go through (tests replace them to inject faults). */
export interface JournalIo {
  /** A clock in milliseconds, to time each write. */
  now?: () => number;
  /** fs.writeSync: the bytes written, or a throw. */
  writeSync?: (fd: number, buffer: Buffer) => number;
  /** FileHandle.write, in the thread pool (once a write was slow): the bytes written, or a rejection. */
  write?: (handle: FileHandle, buffer: Buffer) => Promise<{ bytesWritten: number }>;
  /** FileHandle.datasync: a group made durable, or a rejection. */
  datasync?: (handle: FileHandle) => Promise<void>;
}

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * How long a second run waits for the journal before refusing, unless `claims file --lock-wait`
 * says otherwise. A run killed with kill -9 needs no wait: its lock names its process, and a dead
 * owner's lock is reclaimed at once.
 */
export const LOCK_WAIT_MS = 5_000;
/** How often, at most, `record` asks the file system whether the lock is still this run's. */
const LOST_CHECK_MS = 200;

/** An entry refused because the journal had already failed (`failure`): its line was never written. */
export class NotJournaled extends Error {
  constructor(readonly failure: unknown) {
    super((failure as Error).message);
  }
}

/**
 * What earlier runs recorded, read from a journal: the outcomes of this service's sections and the
 * entries behind them. A dry run reads it alone (`snapshot`); a run reads it through `Journal`.
 */
export class JournalReader {
  readonly path: string;
  private readonly prior: PriorIndex;
  private readonly similar: SimilarIndex;
  /** The journal, read by offset (undefined: no journal yet). */
  protected readonly source: FileHandle | undefined;
  /** Number of entries read back from earlier runs (of this service's sections). */
  readonly priorEntries: number;

  protected constructor(path: string, source: FileHandle | undefined, read: ReadJournal) {
    this.path = path;
    this.source = source;
    this.prior = read.prior;
    this.similar = read.similar;
    this.priorEntries = read.entries;
  }

  /**
   * Reads the journal at `path` without writing or locking it (a dry run: nothing is sent). A
   * missing journal reads as empty; one that is a link, another user's or others can write is
   * refused, like for a run.
   */
  static async snapshot(path: string, binding: JournalBinding = {}): Promise<JournalReader> {
    const opened = await openBatchFile(path, JOURNAL_ROLE, 'read');
    if (!opened) return new JournalReader(path, undefined, emptyRead());
    try {
      const read = await readJournal(opened.handle, path, binding.service ?? NO_SERVICE);
      tellAbout(read, path, binding, opened.stats, false);
      return new JournalReader(path, opened.handle, read);
    } catch (error) {
      await opened.handle.close().catch(() => {});
      throw error;
    }
  }

  /** The last outcome an earlier run recorded for a key. */
  priorOutcome(key: string): PriorOutcome | undefined {
    return this.prior.get(key);
  }

  /**
   * The earlier row that `sim` looks like and whose claim exists or may exist (filed, uncertain, or
   * sent with no answer recorded), with its outcome; undefined when there is none.
   */
  similarTo(sim: string | undefined): PriorOutcome | undefined {
    if (!sim) return undefined;
    const key = this.similar.get(sim);
    const prior = key ? this.prior.get(key) : undefined;
    return prior && CLAIM_MAY_EXIST.has(prior.status) && prior.sendOffset >= 0 ? prior : undefined;
  }

  /**
   * The sourceOrderId and reason of an earlier outcome, read back from the journal at its offset:
   * the index keeps only the status, so a rerun over a million filed rows does not hold a million
   * ids. Only results printed per row (--jsonl, --out) need them.
   */
  async priorDetail(prior: PriorOutcome): Promise<{ sourceOrderId?: string; reason?: string }> {
    const e = await this.entryAt(prior.offset);
    return { sourceOrderId: e?.sourceOrderId, reason: e?.reason };
  }

  /** The entry that starts at a byte offset of the journal (undefined when it cannot be read). */
  async entryAt(offset: number): Promise<Partial<JournalEntry> | undefined> {
    if (offset < 0 || !this.source) return undefined;
    const handle = this.source;
    let size = 1024;
    for (;;) {
      const buffer = Buffer.alloc(size);
      const { bytesRead } = await handle.read(buffer, 0, size, offset);
      const end = buffer.subarray(0, bytesRead).indexOf(10);
      if (end === -1 && bytesRead === size) {
        size *= 4;
        continue;
      }
      try {
        return JSON.parse(buffer.toString('utf8', 0, end === -1 ? bytesRead : end)) as Partial<JournalEntry>;
      } catch {
        return undefined;
      }
    }
  }

  /** Closes a snapshot's file. */
  async closeReader(): Promise<void> {
    await this.source?.close().catch(() => {});
  }
}

/**
 * The notices of a journal read: sections of another service (while this service has none after
 * them: once a run has appended its own, later runs say nothing), and entries of the older format.
 * `run`: a run that writes (not a dry run).
 */
function tellAbout(read: ReadJournal, path: string, binding: JournalBinding, stats: Stats, run: boolean): void {
  const notice = binding.notice;
  if (!notice) return;
  const ours = describeService(binding.service ?? NO_SERVICE);
  const appending = run && !read.empty && !read.lastIsOurs;
  for (const f of read.lastIsOurs ? [] : read.foreign.slice(0, 3)) {
    notice(
      `Notice: the journal ${path} holds ${f.entries} entr${f.entries === 1 ? 'y' : 'ies'} recorded against ${describeService(f.service)}, not ${ours}: they are no proof that a row was filed here, so a row only they record is sent as new${appending ? "; this run's entries go under a header of their own" : ''}.\n`,
    );
  }
  // Said once: the header this run writes after them takes them on for this service.
  if (read.legacyEntries > 0 && !read.legacyOwner) {
    notice(
      `Notice: the journal ${path} holds ${read.legacyEntries} entr${read.legacyEntries === 1 ? 'y' : 'ies'} of an older opcli, which did not record the service: as the file is yours and only you can write it (mode 0${(stats.mode & 0o777).toString(8)}), they are taken as filed against ${ours}, as before${appending ? ', and recorded so from now on' : ''}. If they were filed elsewhere (a trial against a sandbox), those rows were not filed here: move the journal aside and run again.\n`,
    );
  }
}

export class Journal extends JournalReader {
  private readonly handle: FileHandle;
  private readonly lock: HeldLock;
  private lockLost = false;
  private lockCheckedAt = 0;
  private readonly lostController = new AbortController();
  private readonly lostPoll: NodeJS.Timeout;
  /** Aborted as soon as another run is seen to have taken the lock: no request may leave after. */
  readonly lostSignal: AbortSignal = this.lostController.signal;
  /** Lines queued for the next write, and who waits for them to be written or synced. */
  private pending: string[] = [];
  private waitingSync: Waiter[] = [];
  private waitingWrite: Waiter[] = [];
  private atMs = 0;
  private atText = '';
  private flushing: Promise<void> | null = null;
  /** The fdatasyncs in flight, chained: settles once the last one started has (never rejects). */
  private synced: Promise<void> = Promise.resolve();
  private syncsInFlight = 0;
  private failure: unknown;

  /** Group writes are made on the main thread until one is slow (see writeGroup). */
  private writeInline = true;
  private readonly io: Required<JournalIo>;

  private constructor(path: string, handle: FileHandle, read: ReadJournal, lock: HeldLock, io: JournalIo) {
    super(path, handle, read);
    this.io = {
      now: io.now ?? (() => performance.now()),
      writeSync: io.writeSync ?? writeSync,
      write: io.write ?? ((file, buffer) => file.write(buffer)),
      datasync: io.datasync ?? ((file) => file.datasync()),
    };
    this.handle = handle;
    this.lock = lock;
    // Checked on a timer too, so a row waiting for the limiter (a long 429 pause) is stopped as well.
    this.lostPoll = setInterval(() => this.lost(), LOST_CHECK_MS);
    this.lostPoll.unref();
  }

  /**
   * Locks the journal, reads what earlier runs recorded, and opens it for appending. `path` is the
   * journal itself (paths.ts: never a link), and the lock is taken beside it. A journal in another
   * format or with a damaged line is refused (exit 2), and so is one that is a link, another user's,
   * or writable by others (batch-files.ts). Entries recorded against another service or store
   * (`binding.service`) are not taken as filed, and this run's entries get a header of their own.
   * A run holding the lock is waited for up to `lockWaitMs` (0: refused at once). `io` replaces the
   * clock, the writes and the syncs of a group (tests).
   */
  static async open(path: string, lockWaitMs: number = LOCK_WAIT_MS, io: JournalIo = {}, binding: JournalBinding = {}): Promise<Journal> {
    const service = binding.service ?? NO_SERVICE;
    // Created (exclusively, 0600) or checked before its lock is taken, so the lock sits beside a real file of yours.
    await (await openBatchFile(path, JOURNAL_ROLE, 'append')).handle.close();
    const lock = await acquireFileLock(dirname(path), basename(path), {
      waitMs: lockWaitMs,
      busy: (holder) =>
        new OpcliError(`Another \`opcli claims file\` run is using the journal ${path}. Its lock is held by ${holder}.`, {
          hint: `${
            lockWaitMs === 0
              ? 'This run does not wait (--lock-wait 0s): run it again once the other has finished, or pass --lock-wait 10m to wait for it.'
              : `This run waited ${formatDuration(lockWaitMs)} (--lock-wait): wait for the other to finish, or pass a longer --lock-wait such as 10m.`
          } Two runs on one journal could file a row twice, so opcli refuses.`,
        }),
    });
    try {
      const { handle, stats } = await openBatchFile(path, JOURNAL_ROLE, 'append');
      try {
        const read = await readJournal(handle, path, service);
        tellAbout(read, path, binding, stats, true);
        // A torn last line must not swallow the next line.
        let text = read.endsWithNewline ? '' : '\n';
        if (!read.lastIsOurs) {
          const header: JournalHeader = { ...JOURNAL_HEADER, created: new Date().toISOString(), service };
          text += `${JSON.stringify(header)}\n`;
        }
        if (text) await handle.write(text);
        return new Journal(path, handle, read, lock, io);
      } catch (error) {
        await handle.close().catch(() => {});
        throw error;
      }
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  /**
   * Whether another run took the journal's lock from this one (its lock was removed or replaced).
   * Asked of the file system at most every LOST_CHECK_MS; once lost, always lost.
   */
  lost(): boolean {
    if (this.lockLost) return true;
    const now = Date.now();
    if (now - this.lockCheckedAt >= LOST_CHECK_MS) {
      this.lockCheckedAt = now;
      this.lockLost = this.lock.lost();
      if (this.lockLost) this.lostController.abort();
    }
    return this.lockLost;
  }

  /**
   * Appends an entry. A `sending` entry resolves once it is fsync'd (with whatever else was queued):
   * it must be durable before its request leaves. An outcome resolves once it is written: a process
   * crash keeps written data, the next fsync (or close) makes it durable, and if a power loss ever
   * dropped it the row would read as `sending`, that is uncertain, never resent silently. Syncing
   * every outcome too doubled the fsyncs for no safety gained.
   */
  record(entry: Omit<JournalEntry, 'at' | 'claim'>, claimJson?: string): Promise<void> {
    if (this.failure) return Promise.reject(new NotJournaled(this.failure));
    // No row leaves once another run may be reading this journal: it could send the same row.
    if (entry.status === 'sending' && this.lost()) return Promise.reject(this.lostError());
    this.pending.push(this.line(entry, claimJson));
    return new Promise((resolve, reject) => {
      (entry.status === 'sending' ? this.waitingSync : this.waitingWrite).push({ resolve, reject });
      this.flushing ??= this.flushLoop();
    });
  }

  /** Appends an outcome without a promise per row: written with the next group; a failure surfaces in `flushed()`. */
  note(entry: Omit<JournalEntry, 'at' | 'claim' | 'sim' | 'tag'>): void {
    if (this.failure) return;
    this.pending.push(this.line(entry));
    this.flushing ??= this.flushLoop();
  }

  private line(entry: Omit<JournalEntry, 'at' | 'claim'>, claimJson?: string): string {
    const now = Date.now();
    if (now !== this.atMs) {
      this.atMs = now;
      this.atText = new Date(now).toISOString();
    }
    // `at` (an ISO date, nothing to escape) and the claim, already JSON text (its robust form), are
    // spliced in rather than serialised again.
    const json = JSON.stringify(entry);
    return `${json.slice(0, -1)},"at":"${this.atText}"${claimJson ? `,"claim":${claimJson}` : ''}}\n`;
  }

  /**
   * The group commit: what the current turn queued is written in one write(); when `sending`
   * entries are among it, one fdatasync follows, and everything queued meanwhile forms the next
   * group. Writes run one after another (a line is never interleaved with another), but the next
   * group's write does not wait for the last group's fdatasync: up to MAX_SYNCS run at once, each
   * covering what was written before it started, and their waiters are released in order. A row
   * is thus ready about one write and one fdatasync after it was queued, not up to two of each
   * (one after another, a row waited 3.8 ms on average from queued to durable on a busy 2-core
   * machine, of which its own fdatasync was 1.0 ms). Syncs run off the main thread, so the batch
   * plans and sends while they last; the write is the main thread's (writeGroup).
   */
  private async flushLoop(): Promise<void> {
    // Let this turn queue its entries first: one write for all of them.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.pending.length && !this.failure) {
      const text = this.pending.length === 1 ? (this.pending[0] as string) : this.pending.join('');
      const synced = this.waitingSync;
      const written = this.waitingWrite;
      this.pending = [];
      this.waitingSync = [];
      this.waitingWrite = [];
      try {
        await this.writeGroup(Buffer.from(text, 'utf8'));
      } catch (error) {
        this.fail(error, [...written, ...synced]);
        break;
      }
      for (const w of written) w.resolve();
      if (!synced.length) continue;
      // Started after this group's write returned, so it covers it; released after every earlier sync.
      const own = this.io.datasync(this.handle);
      this.syncsInFlight++;
      this.synced = Promise.all([this.synced, own]).then(
        () => {
          this.syncsInFlight--;
          // An earlier group failed: nothing after it counts as durable.
          if (this.failure) for (const w of synced) w.reject(this.failure);
          else for (const w of synced) w.resolve();
        },
        (error) => {
          this.syncsInFlight--;
          this.fail(error, synced);
        },
      );
      if (this.syncsInFlight >= MAX_SYNCS) await this.synced;
    }
    this.flushing = null;
  }

  /**
   * Appends one group. A short write (the kernel may stop part way on a full disk) is continued,
   * never left torn. The write is made on the main thread: it copies a few kilobytes into the page
   * cache, and handing it to the thread pool cost more than the copy (a wake-up of a pool thread and
   * one of the event loop per group, ~1,400 groups a 10,000-row batch): 8 % of the wall time and
   * 12 % of the CPU of a batch (docs/benchmarks.md). The fdatasync stays in the pool. When the
   * kernel throttles writers (another program filling the page cache with dirty pages), a write
   * can block for a long time, and the main thread would stop reading answers meanwhile: the first
   * write that takes over SLOW_WRITE_MS moves every later write to the thread pool for the run.
   */
  private async writeGroup(bytes: Buffer): Promise<void> {
    let rest = bytes;
    while (rest.length > 0) {
      if (this.writeInline) {
        const started = this.io.now();
        const written = this.io.writeSync(this.handle.fd, rest);
        if (this.io.now() - started > SLOW_WRITE_MS) this.writeInline = false;
        rest = rest.subarray(written);
      } else rest = rest.subarray((await this.io.write(this.handle, rest)).bytesWritten);
    }
  }

  /** The journal cannot be written: `waiters` and everything queued are refused, and so is every later entry. */
  private fail(error: unknown, waiters: Waiter[]): void {
    this.failure ??= new OpcliError(`Cannot write the journal ${this.path}: ${(error as Error).message}`, {
      hint: 'Free disk space or pass --journal with a writable path; rows after this one were not sent.',
      cause: error,
    });
    for (const w of waiters) w.reject(this.failure);
    // Queued after the failed group: their lines were never written.
    const unwritten = new NotJournaled(this.failure);
    for (const w of [...this.waitingSync, ...this.waitingWrite]) w.reject(unwritten);
    this.pending = [];
    this.waitingSync = [];
    this.waitingWrite = [];
  }

  /** Resolves once every entry queued so far is written; rejects when the journal could not be written. */
  async flushed(): Promise<void> {
    while (this.flushing) await this.flushing;
    await this.synced;
    if (this.failure) throw this.failure;
  }

  /** The error a run stops with once its lock was taken. */
  lostError(): OpcliError {
    return new OpcliError(`The lock on the journal ${this.path} was taken by another run; this run stopped sending.`, {
      hint: 'Rows not yet sent were not sent. Let the other run finish, then run the same command again: filed rows are skipped.',
    });
  }

  /** Writes what is queued, closes the file and releases the lock. */
  async close(): Promise<void> {
    while (this.flushing) await this.flushing;
    await this.synced;
    await this.io.datasync(this.handle).catch(() => {});
    await this.handle.close().catch(() => {});
    clearInterval(this.lostPoll);
    this.lock.release();
  }
}

/** fdatasyncs of successive groups that may run at once. */
const MAX_SYNCS = 4;
/** A group write on the main thread slower than this moves the journal's writes to the thread pool. */
const SLOW_WRITE_MS = 5;

/** Outcomes under which a claim exists or may exist: a row that looks like one of these is held. */
const CLAIM_MAY_EXIST: ReadonlySet<JournalStatus> = new Set(['filed', 'uncertain', 'sending']);

interface ReadJournal {
  prior: PriorIndex;
  similar: SimilarIndex;
  /** Entries of this service's sections. */
  entries: number;
  endsWithNewline: boolean;
  /** No byte yet: a new journal (its header is written on open). */
  empty: boolean;
  /** The last section is this service's (v3 header): a run appends without a new header. */
  lastIsOurs: boolean;
  /** Sections of other services or stores, by service, with their entry counts (not taken as filed). */
  foreign: { service: JournalService; entries: number }[];
  /** Entries of a section of the older format (no service recorded), taken as this service's. */
  legacyEntries: number;
  /** The service of the first header after the older format's section: the run that took it on. */
  legacyOwner?: JournalService;
}

const emptyRead = (): ReadJournal => ({
  prior: new PriorIndex(),
  similar: new SimilarIndex(),
  entries: 0,
  endsWithNewline: true,
  empty: true,
  lastIsOurs: false,
  foreign: [],
  legacyEntries: 0,
});

const HINT_DAMAGED = 'opcli does not guess which rows a damaged journal filed. Restore it from a backup or fix the line named above; nothing was sent.';

/** A header's service, when it is one (origin and storeId: a string or null each). */
function readService(value: unknown): JournalService | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const ok = (x: unknown) => x === null || typeof x === 'string';
  if (!ok(v.origin) || !ok(v.storeId)) return undefined;
  return { origin: v.origin as string | null, storeId: v.storeId as string | null, profile: typeof v.profile === 'string' ? v.profile : undefined };
}

/** How much of the journal one read takes. */
const READ_CHUNK = 256 * 1024;

/**
 * Reads every complete line of the journal open as `handle`; the last outcome of each key wins.
 * The first line must be a header: of this format, whose sections each start with a header naming
 * their service and store (only entries of sections of `service` count: a journal of a sandbox
 * trial is no proof that the rows were filed in production), or of the older format (version 2, no
 * service: its entries count for any service, as before, since the file passed the checks of
 * batch-files.ts: yours, writable by you alone; a notice says so).
 * A journal of opcli 0.1.0 (keys that depended on line numbers) or any line that cannot be read is
 * refused, never taken for "nothing filed yet". Only a torn last line (a crash mid-write, no newline
 * after it) is skipped. Lines are split on bytes, so each entry's offset is known for `priorDetail`.
 */
async function readJournal(handle: FileHandle, path: string, service: JournalService): Promise<ReadJournal> {
  const read = await readSections(handle, path, service);
  // The older format's entries belong to the service of the first run of this format that used the
  // journal (its header follows them): when that is another service, they are read again as foreign.
  if (read.legacyOwner && read.legacyEntries > 0 && !sameService(read.legacyOwner, service)) return readSections(handle, path, service, read.legacyOwner);
  return read;
}

async function readSections(handle: FileHandle, path: string, service: JournalService, legacyOwner?: JournalService): Promise<ReadJournal> {
  const read = emptyRead();
  const { prior, similar } = read;
  let lineNo = 0;
  /** The current section: undefined before the first header; `counts` says whether its entries count. */
  let section: { counts: boolean; legacy: boolean; foreign?: { service: JournalService; entries: number } } | undefined;
  const damaged = (why: string) => new UsageError(`The journal ${path} cannot be read: line ${lineNo} ${why}.`, HINT_DAMAGED);
  const foreignOf = (theirs: JournalService) => {
    let foreign = read.foreign.find((f) => sameService(f.service, theirs));
    if (!foreign) read.foreign.push((foreign = { service: theirs, entries: 0 }));
    return foreign;
  };
  const startSection = (header: { version?: unknown; service?: unknown }) => {
    // CHOICE (docs/spec-choices.md#journals-without-a-service): an older journal that is yours alone still protects its rows.
    if (header.version === LEGACY_VERSION) {
      if (lineNo !== 1) throw damaged('is a header of the older format after the first line');
      section = legacyOwner ? { counts: false, legacy: true, foreign: foreignOf(legacyOwner) } : { counts: true, legacy: true };
      read.lastIsOurs = false;
      return;
    }
    const theirs = readService(header.service);
    if (!theirs) throw damaged('is a header without its service (origin and storeId)');
    if (section?.legacy && !read.legacyOwner) read.legacyOwner = theirs;
    const counts = sameService(theirs, service);
    section = { counts, legacy: false, foreign: counts ? undefined : foreignOf(theirs) };
    read.lastIsOurs = counts;
  };
  const take = (buffer: Buffer, start: number, end: number, offset: number, complete: boolean) => {
    lineNo++;
    if (end <= start) {
      if (complete && lineNo > 1) throw damaged('is empty');
      return;
    }
    let e: JournalEntry & { journal?: unknown; version?: unknown; service?: unknown };
    try {
      e = JSON.parse(buffer.toString('utf8', start, end));
    } catch {
      if (!complete) return; // a torn last line from a crash mid-write
      throw damaged('is not JSON');
    }
    if (e?.journal === JOURNAL_HEADER.journal) {
      if (!complete) return;
      if (e.version !== JOURNAL_HEADER.version && e.version !== LEGACY_VERSION) {
        throw new UsageError(
          `The journal ${path} is in format version ${String(e.version)}, which this opcli does not read.`,
          'Use the opcli version that wrote it.',
        );
      }
      startSection(e);
      return;
    }
    if (!section) {
      if (typeof e?.key === 'string' && typeof e.status === 'string' && typeof e.line === 'number') {
        throw new UsageError(
          `The journal ${path} was written by opcli 0.1.0, whose row keys depended on line numbers; this version cannot tell from it which rows were filed.`,
          "Nothing was sent. Each of its lines gives a row's line, status and sourceOrderId: remove the rows it shows filed (or uncertain) from the input, move the old journal aside, then run again.",
        );
      }
      throw damaged('is not the header of an opcli claims journal');
    }
    if (typeof e?.key !== 'string' || !HEX64.test(e.key) || !STATUS_CODE.has(e.status) || typeof e.line !== 'number') {
      if (!complete) return;
      throw damaged('is not a journal entry');
    }
    if (!section.counts) {
      if (section.foreign) section.foreign.entries++;
      return;
    }
    if (section.legacy) read.legacyEntries++;
    prior.set(e.key, e.status, offset, e.tag);
    if (e.status === 'sending' && typeof e.sim === 'string') {
      similar.set(e.sim, e.key, (existing) => {
        const p = prior.get(existing);
        return p !== undefined && CLAIM_MAY_EXIST.has(p.status) && existing !== e.key.slice(0, 16);
      });
    }
    read.entries++;
  };
  let rest: Buffer = Buffer.alloc(0);
  /** File offset of `rest`'s first byte. */
  let restOffset = 0;
  let size = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(READ_CHUNK);
    const { bytesRead } = await handle.read(chunk, 0, READ_CHUNK, size);
    if (bytesRead === 0) break;
    size += bytesRead;
    const got = chunk.subarray(0, bytesRead);
    const buffer = rest.length ? Buffer.concat([rest, got]) : got;
    const base = restOffset;
    let start = 0;
    let nl = buffer.indexOf(10);
    while (nl !== -1) {
      take(buffer, start, nl, base + start, true);
      start = nl + 1;
      nl = buffer.indexOf(10, start);
    }
    rest = buffer.subarray(start);
    restOffset = base + start;
  }
  if (rest.length) {
    read.endsWithNewline = false;
    take(rest, 0, rest.length, restOffset, false);
  }
  if (size > 0 && !section) {
    lineNo = 1;
    throw damaged('is not the header of an opcli claims journal');
  }
  read.empty = size === 0;
  return read;
}
