/**
 * The batch journal's durable-write queue: the group commit. Lines queued in one turn of the event
 * loop form a group, written in one write(); when `sending` entries are among them, one fdatasync
 * follows, and everything queued meanwhile forms the next group, so "recorded before sent" holds
 * without one fdatasync per row. A failed write or sync refuses every later line.
 *
 * Fast path (docs/benchmarks.md, bench/claims-batch.mjs): a group shares one promise per kind of
 * wait (written, durable), so a row costs its line and no promise of its own; the fdatasync runs in
 * the thread pool and the write on the main thread (see `writeGroup`).
 */
import { writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { OpcliError } from '../core/errors.js';

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

/** An entry refused because the journal had already failed (`failure`): its line was never written. */
export class NotJournaled extends Error {
  constructor(readonly failure: unknown) {
    super((failure as Error).message);
  }
}

/** A promise settled from outside; `promise` is created only when someone waits. */
class Wait {
  private settle: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  private made: Promise<void> | undefined;

  get promise(): Promise<void> {
    this.made ??= new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    return this.made;
  }

  resolve(): void {
    this.settle?.resolve();
  }

  reject(error: unknown): void {
    this.settle?.reject(error);
  }
}

/** Lines queued together, and who waits for them to be written (`written`) or made durable (`synced`). */
interface Group {
  lines: string[];
  written: Wait | undefined;
  synced: Wait | undefined;
}

const newGroup = (): Group => ({ lines: [], written: undefined, synced: undefined });

/** fdatasyncs of successive groups that may run at once. */
const MAX_SYNCS = 4;
/** A group write on the main thread slower than this moves the journal's writes to the thread pool. */
const SLOW_WRITE_MS = 5;

/** The group commit of one journal file, open as `handle`. */
export class GroupCommit {
  private group = newGroup();
  private flushing: Promise<void> | null = null;
  /** The fdatasyncs in flight, chained: settles once the last one started has (never rejects). */
  private synced: Promise<void> = Promise.resolve();
  private syncsInFlight = 0;
  /** Why the journal cannot be written (an OpcliError), once a write or sync failed. */
  failure: unknown;
  /** Group writes are made on the main thread until one is slow (see writeGroup). */
  private writeInline = true;
  private readonly io: Required<JournalIo>;

  constructor(
    private readonly handle: FileHandle,
    private readonly path: string,
    io: JournalIo,
  ) {
    this.io = {
      now: io.now ?? (() => performance.now()),
      writeSync: io.writeSync ?? writeSync,
      write: io.write ?? ((file, buffer) => file.write(buffer)),
      datasync: io.datasync ?? ((file) => file.datasync()),
    };
  }

  /**
   * Queues a line (with its newline). `durable`: resolves once it is fsync'd; otherwise once it is
   * written. Rejects when the journal could not be written (NotJournaled: the line never was).
   */
  add(line: string, durable: boolean): Promise<void> {
    if (this.failure) return Promise.reject(new NotJournaled(this.failure));
    const group = this.group;
    group.lines.push(line);
    this.flushing ??= this.flushLoop();
    const wait = durable ? (group.synced ??= new Wait()) : (group.written ??= new Wait());
    return wait.promise;
  }

  /** Queues a line no one waits for: written with the next group; a failure surfaces in `flushed()`. */
  note(line: string): void {
    if (this.failure) return;
    this.group.lines.push(line);
    this.flushing ??= this.flushLoop();
  }

  /**
   * Writes what is queued now rather than at the end of the turn (the caller queued a whole group);
   * when a flush is under way the lines join it.
   */
  commit(): void {
    if (this.flushing || this.failure || this.group.lines.length === 0) return;
    this.flushing = this.flushLoop(false);
  }

  /**
   * What the current turn queued is written in one write() (`wait`: at the end of the turn; else
   * now); when `sending` entries are among it, one fdatasync follows, and everything queued
   * meanwhile forms the next group. Writes run one after another (a line is never interleaved with
   * another), but the next group's write does not
   * wait for the last group's fdatasync: up to MAX_SYNCS run at once, each covering what was
   * written before it started, and their waiters are released in order. A row is thus ready about
   * one write and one fdatasync after it was queued, not up to two of each
   * (docs/benchmarks.md#figures-behind-the-code). Syncs run off the main thread, so the batch plans
   * and sends while they last; the write is the main thread's (writeGroup).
   */
  private async flushLoop(wait = true): Promise<void> {
    // Let this turn queue its entries first: one write for all of them.
    if (wait) await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.group.lines.length && !this.failure) {
      const group = this.group;
      this.group = newGroup();
      const text = group.lines.length === 1 ? (group.lines[0] as string) : group.lines.join('');
      try {
        await this.writeGroup(Buffer.from(text, 'utf8'));
      } catch (error) {
        this.fail(error, group);
        break;
      }
      group.written?.resolve();
      if (group.synced) this.sync(group.synced);
      if (this.syncsInFlight >= MAX_SYNCS) await this.synced;
    }
    this.flushing = null;
  }

  /** Starts the fdatasync that makes the group just written durable; `wait` is released after every earlier sync. */
  private sync(wait: Wait): void {
    const own = this.io.datasync(this.handle);
    this.syncsInFlight++;
    this.synced = Promise.all([this.synced, own]).then(
      () => {
        this.syncsInFlight--;
        // An earlier group failed: nothing after it counts as durable.
        if (this.failure) wait.reject(this.failure);
        else wait.resolve();
      },
      (error) => {
        this.syncsInFlight--;
        this.fail(error, undefined, wait);
      },
    );
  }

  /**
   * Appends one group. A short write (the kernel may stop part way on a full disk) is continued,
   * never left torn. The write is made on the main thread: it copies a few kilobytes into the page
   * cache, and handing it to the thread pool cost more than the copy (a wake-up of a pool thread and
   * one of the event loop per group; docs/benchmarks.md#figures-behind-the-code). The fdatasync
   * stays in the pool. When the kernel throttles writers (another program filling the page cache
   * with dirty pages), a write can block for a long time, and the main thread would stop reading
   * answers meanwhile: the first write that takes over SLOW_WRITE_MS moves every later write to the
   * thread pool for the run.
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

  /**
   * The journal cannot be written: the failed group's waiters (`group`, or the one sync `wait`) and
   * everything queued are refused, and so is every later entry.
   */
  private fail(error: unknown, group?: Group, wait?: Wait): void {
    this.failure ??= new OpcliError(`Cannot write the journal ${this.path}: ${(error as Error).message}`, {
      hint: 'Free disk space or pass --journal with a writable path; rows after this one were not sent.',
      cause: error,
    });
    group?.written?.reject(this.failure);
    group?.synced?.reject(this.failure);
    wait?.reject(this.failure);
    // Queued after the failed group: their lines were never written.
    const unwritten = new NotJournaled(this.failure);
    this.group.written?.reject(unwritten);
    this.group.synced?.reject(unwritten);
    this.group = newGroup();
  }

  /** Resolves once every line queued so far is written (and every sync started has ended); rejects when the journal could not be written. */
  async flushed(): Promise<void> {
    while (this.flushing) await this.flushing;
    await this.synced;
    if (this.failure) throw this.failure;
  }

  /** Writes what is queued and makes it durable (errors of this last sync are ignored: `flushed` reports failures). */
  async end(): Promise<void> {
    while (this.flushing) await this.flushing;
    await this.synced;
    await this.io.datasync(this.handle).catch(() => {});
  }
}
