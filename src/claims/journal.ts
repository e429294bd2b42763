/**
 * The batch journal: an append-only JSONL file beside the input that records, for each row key, that
 * its request is about to be sent (made durable BEFORE the request leaves) and then its outcome.
 * Its lines are read under the one damage policy of a record of actions (journal-read.ts): a torn
 * last line (kill -9 mid-write) is passed over, and the next run ends it with a `set-aside` line
 * naming it (src/record/log.ts endTornLine). A lock file keeps two runs from using one journal at once.
 *
 * A journal is bound to the service and store its rows were filed with: each section starts with a
 * header line naming them (JournalHeader), and only the sections of this run's service and store
 * count as proof that a row was filed. The file itself is opened as batch-files.ts says (no link
 * followed, yours, writable by you alone).
 *
 * This file owns opening, locking and the reader/writer objects; the lines' format is
 * journal-format.ts, reading them back journal-read.ts (into journal-index.ts), and the group
 * commit that makes them durable journal-queue.ts.
 *
 * Fast path (docs/benchmarks.md, bench/claims-batch.mjs): `record` and `note` run for every claim
 * row of a batch.
 */
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { acquireFileLock, type HeldLock } from '../config/lock.js';
import { OpcliError, UsageError } from '../core/errors.js';
import { formatDuration } from '../core/flags.js';
import { claimMayExist } from '../record/outcome.js';
import { JOURNAL_ROLE, openBatchFile } from './batch-files.js';
import { lineAt } from '../record/file-lines.js';
import { endTornLine, setAsideLine } from '../record/log.js';
import type { RepairTarget } from '../record/repair.js';
import { openPrivateFile } from '../config/private-file.js';
import { closeSync, constants } from 'node:fs';
import { osUser } from '../config/user-name.js';
import { entryLine, headerLine, type JournalEntry, type JournalService, type NewEntry, NO_SERVICE, newJournalId } from './journal-format.js';
import type { PriorIndex, PriorOutcome, SimilarIndex } from './journal-index.js';
import { GroupCommit, type JournalIo, NotJournaled } from './journal-queue.js';
import { type JournalBinding, type ReadJournal, emptyRead, journalDamage, journalLine, readJournal, tellAbout } from './journal-read.js';

export {
  describeService,
  JOURNAL_HEADER,
  type JournalEntry,
  type JournalHeader,
  type JournalService,
  type JournalStatus,
  serviceOrigin,
} from './journal-format.js';
export { type PriorOutcome, PriorIndex, SimilarIndex } from './journal-index.js';
export { type JournalIo, NotJournaled } from './journal-queue.js';
export type { JournalBinding } from './journal-read.js';

/**
 * How long a second run waits for the journal before refusing, unless `claims file --lock-wait`
 * says otherwise. A run killed with kill -9 needs no wait: its lock names its process, and a dead
 * owner's lock is reclaimed at once.
 */
export const LOCK_WAIT_MS = 5_000;
/** How often, at most, `record` asks the file system whether the lock is still this run's. */
const LOST_CHECK_MS = 200;

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
  /** The file's id (journal-format.ts JournalHeader.id): a journal made again has another. */
  readonly id: string | undefined;

  protected constructor(path: string, source: FileHandle | undefined, read: ReadJournal) {
    this.path = path;
    this.source = source;
    this.prior = read.prior;
    this.similar = read.similar;
    this.priorEntries = read.entries;
    this.id = read.id;
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
    return prior && claimMayExist(prior.status) && prior.sendOffset >= 0 ? prior : undefined;
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
    const text = await lineAt(this.source, offset);
    try {
      return text === undefined ? undefined : (JSON.parse(text) as Partial<JournalEntry>);
    } catch {
      return undefined;
    }
  }

  /** Closes a snapshot's file. */
  async closeReader(): Promise<void> {
    await this.source?.close().catch(() => {});
  }
}

/** Takes the lock of the journal at `path` (beside it), waiting up to `lockWaitMs` for a run that holds it. */
function lockJournal(path: string, lockWaitMs: number): Promise<HeldLock> {
  return acquireFileLock(dirname(path), basename(path), {
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
}

/**
 * The journal at `path` as a file `claims repair --journal` sets damaged lines aside in
 * (src/record/repair.ts, as for every record of actions); a damaged first line becomes a header of
 * `service`, so the entries after it count for this store again.
 */
export function journalRepairTarget(path: string, service: JournalService, now: () => number): RepairTarget {
  return {
    path,
    what: 'journal',
    command: `opcli claims repair --journal ${path}`,
    withLock: async (fn) => {
      const lock = await lockJournal(path, 0);
      try {
        return await fn();
      } finally {
        lock.release();
      }
    },
    damaged: () => {
      const fd = openPrivateFile(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0), 'journal');
      if (fd === undefined) throw new UsageError(`There is no journal at ${path}.`, 'Pass the path the error named: --journal PATH.');
      try {
        return journalDamage(fd, path);
      } finally {
        closeSync(fd);
      }
    },
    parse: journalLine,
    setAside: (d, reason, at) => (d.line === 1 ? headerLine(service, new Date(now()).toISOString()).slice(0, -1) : setAsideLine(d, reason, at, osUser())),
  };
}

/** A journal open for a run: locked, read, and appended to through its group commit. */
export class Journal extends JournalReader {
  private readonly handle: FileHandle;
  private readonly lock: HeldLock;
  private lockLost = false;
  private lockCheckedAt = 0;
  private readonly lostController = new AbortController();
  private readonly lostPoll: NodeJS.Timeout;
  /** Aborted as soon as another run is seen to have taken the lock: no request may leave after. */
  readonly lostSignal: AbortSignal = this.lostController.signal;
  /** The group commit the entries go through. */
  private readonly queue: GroupCommit;
  /** The last millisecond formatted as an entry's `at`, and its text. */
  private atMs = 0;
  private atText = '';

  private constructor(path: string, handle: FileHandle, read: ReadJournal, lock: HeldLock, io: JournalIo) {
    super(path, handle, read);
    this.queue = new GroupCommit(handle, path, io);
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
    const lock = await lockJournal(path, lockWaitMs);
    try {
      const { handle, stats } = await openBatchFile(path, JOURNAL_ROLE, 'append');
      try {
        const read = await readJournal(handle, path, service);
        tellAbout(read, path, binding, stats, true);
        // A torn last line must not swallow the next line, nor read as damage once a newline ends it.
        let text = endTornLine({ ...read, unterminated: !read.endsWithNewline }, new Date().toISOString(), osUser());
        if (!read.lastIsOurs) {
          read.id ??= newJournalId();
          text += headerLine(service, new Date().toISOString(), read.id.startsWith('created ') ? undefined : read.id);
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
  record(entry: NewEntry, claimJson?: string): Promise<void> {
    if (this.queue.failure) return Promise.reject(new NotJournaled(this.queue.failure));
    // No row leaves once another run may be reading this journal: it could send the same row.
    if (entry.status === 'sending' && this.lost()) return Promise.reject(this.lostError());
    return this.queue.add(entryLine(entry, this.at(), claimJson), entry.status === 'sending');
  }

  /** Appends an outcome without a promise per row: written with the next group; a failure surfaces in `flushed()`. */
  note(entry: Omit<JournalEntry, 'at' | 'claim' | 'sim' | 'tag'>): void {
    if (this.queue.failure) return;
    this.queue.note(entryLine(entry, this.at()));
  }

  /** Now as an entry's `at`, formatted once per millisecond (a batch writes thousands of entries in one). */
  private at(): string {
    const now = Date.now();
    if (now !== this.atMs) {
      this.atMs = now;
      this.atText = new Date(now).toISOString();
    }
    return this.atText;
  }

  /** Writes the entries queued so far now (and starts their sync), not at the end of the turn. */
  commit(): void {
    this.queue.commit();
  }

  /** Resolves once every entry queued so far is written; rejects when the journal could not be written. */
  flushed(): Promise<void> {
    return this.queue.flushed();
  }

  /** The error a run stops with once its lock was taken. */
  lostError(): OpcliError {
    return new OpcliError(`The lock on the journal ${this.path} was taken by another run; this run stopped sending.`, {
      hint: 'Rows not yet sent were not sent. Let the other run finish, then run the same command again: filed rows are skipped.',
    });
  }

  /** Writes what is queued, closes the file and releases the lock. */
  async close(): Promise<void> {
    await this.queue.end();
    await this.handle.close().catch(() => {});
    clearInterval(this.lostPoll);
    this.lock.release();
  }
}
