/**
 * A record of business actions as a file, for every client (ARCHITECTURE.md, "The record of business actions").
 *
 * Before the request a line announces leaves, its data is synced (fdatasync) and, the first time the
 * file is written, its name in its folder (fsync(2): a file's own sync does not promise the entry that
 * names it), so a rerun after a power cut or an OS crash finds the attempt and does not pay again.
 */
import { closeSync, constants, fdatasync, fdatasyncSync, fstatSync, fsyncSync, openSync, type Stats, writeSync } from 'node:fs';
import { join } from 'node:path';
import { acquireFileLock, type HeldLock, withFileLock } from '../config/lock.js';
import type { OpcliError } from '../core/errors.js';
import type { Timers } from '../core/timers.js';
import { openPrivateFile } from '../config/private-file.js';
import { ensureRecordDir, type RecordPlace } from '../config/record-dir.js';
import { readAt, sealText, tailHash } from './chain.js';
import * as z from 'zod';
import { ACTION_START, type DamagedLine, LineCheck, type LineSchema, type RecordWords, TORN_REASON } from './damage.js';
import { eachLine } from './file-lines.js';
import { keepWitnessOf } from './witness.js';

/** What a client of the record gives: its lines' schema (damage.ts LineSchema) and the terms a line is found by (store.ts). */
export interface RecordClient<T> extends LineSchema<T> {
  /** The name and version of the terms (a change of either rebuilds the index): "ledger-1". */
  terms: string;
  termsOf(record: T): string[];
}

/** A client's record as a file of its place: its name, lock, words (damage.ts: its refusal's), and the header a repair writes on line 1. */
export interface RecordFile<T> extends RecordClient<T> {
  name: string;
  lock: string;
  /** The error when another run holds the lock past the wait (lockRecord; default: src/config/lock.ts's). */
  busy?(holder: string): OpcliError;
  words: RecordWords;
  header?(at: string): string;
}

/** Opens a place's record file `name` to append (created 0600) or to read (undefined: no file yet); `what` names it in a refusal. */
export function openLog(place: RecordPlace, name: string, what: string, writing: boolean): number | undefined {
  const flags = writing ? constants.O_RDWR | constants.O_CREAT | constants.O_APPEND : constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
  return openPrivateFile(join(place.dir, name), flags, what, 0o600, place.shared);
}

/** Reads every line of the record open as `fd` under the damage policy, each record handed to `take`: the lines that cannot be read. */
export function readLog<T>(fd: number, client: LineSchema<T>, take: (record: T) => void): { damaged: DamagedLine[] } {
  const check = new LineCheck(client);
  let line = 0;
  eachLine(fd, (buffer, start, end, byte, complete, long) => {
    const record = check.take(long ? '' : buffer.toString('utf8', start, end), ++line, byte, complete, long);
    if (record !== undefined) take(record);
  });
  return { damaged: check.end() };
}

/** Reads a client's record file in `place` whole under the damage policy, each record handed to `take`: the lines that cannot be read (none: no file yet). */
export function readRecordFile<T>(place: RecordPlace, file: RecordFile<T>, take: (record: T) => void): DamagedLine[] {
  ensureRecordDir(place);
  const fd = openLog(place, file.name, file.words.what, false);
  if (fd === undefined) return [];
  try {
    return readLog(fd, file, take).damaged;
  } finally {
    closeSync(fd);
  }
}

/**
 * The writer of one record: the hash of the last line it wrote and where the file then ended, so the next append reads
 * nothing back while the file is as it left it (another process's append changes the size, a repair's rename the inode).
 */
export class LogWriter {
  private left: { dev: number; ino: number; size: number; last: string } | undefined;

  /** Appends whole lines to the record open as `fd` (O_APPEND, under its lock), each sealed into the chain after the file's last line. */
  append(fd: number, text: string, stat: Stats = fstatSync(fd)): void {
    const left = this.left;
    this.left = undefined;
    const same = left?.size === stat.size && left.ino === stat.ino && left.dev === stat.dev;
    const sealed = sealText(text, same ? left.last : tailHash(fd, stat.size));
    const bytes = Buffer.from(sealed.text, 'utf8');
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done);
    this.left = { dev: stat.dev, ino: stat.ino, size: stat.size + bytes.length, last: sealed.last };
  }
}

/** Takes a record's lock for a whole run, waiting `waitMs` on `timers` for another run, then the file's `busy` error. */
export function lockRecord<T>(place: RecordPlace, file: RecordFile<T>, wait: { waitMs: number; timers?: Timers }): Promise<HeldLock> {
  ensureRecordDir(place);
  return acquireFileLock(place.dir, file.lock, { ...wait, shared: !!place.shared, busy: file.busy });
}

/** Runs `fn` holding the lock `lock` of a record's place (src/config/lock.ts; a shared record-dir's lock is everyone's). */
export function withRecordLock<T>(place: RecordPlace, lock: string, fn: () => Promise<T>): Promise<T> {
  ensureRecordDir(place);
  return withFileLock(place.dir, lock, fn, { shared: !!place.shared });
}

/**
 * The group commit of one record open to append (DeWitt et al., "Implementation techniques for main
 * memory database systems", SIGMOD 1984): lines queued in a turn are written together at its end or
 * before the next durable write, which is one fdatasync for the group before any of its requests
 * leaves. An outcome is written unsynced: a power cut that drops it leaves its attempt uncertain, never resent.
 */
export class LogGroup {
  private pending: string[] = [];
  /** Why the lines written at the end of a turn could not be (thrown by the next write or the close). */
  private failure: unknown;
  private soon = false;

  /**
   * A client's record in `place`, opened as `fd` to append under its lock (closed by `close`, witnessed then: witness.ts):
   * a new file gets its header and its name synced in its folder; a last line cut short (no newline ends the file) a
   * newline and, when the damage policy read it as torn (`damaged`, asked only then), the set-aside line naming it, so it
   * stays an uncertain action, not mid-file garbage.
   */
  constructor(
    private fd: number | undefined,
    private readonly place: RecordPlace,
    file: Pick<RecordFile<unknown>, 'name' | 'header'>,
    damaged: () => readonly DamagedLine[],
    by: { at: string; user: string },
    private readonly writer = new LogWriter(),
  ) {
    this.path = join(place.dir, file.name);
    const stat = fstatSync(fd as number);
    if (stat.size === 0 && file.header) this.queue(`${file.header(by.at)}\n`);
    else if (!endsWithNewline(fd as number, stat.size)) {
      const last = damaged().at(-1);
      // The damaged line read last is the torn one only when no newline follows its start (an earlier line set aside is not).
      const torn = last?.kind === 'torn' && last.byte !== undefined && !newlineFrom(fd as number, last.byte, stat.size) ? last : undefined;
      this.queue(torn ? `\n${setAsideLine(torn, TORN_REASON, by.at, by.user)}\n` : '\n');
    }
    this.write('', stat);
    if (stat.size === 0) syncFolder(place.dir);
  }

  private readonly path: string;

  /** Queues whole lines, written with the next write. */
  queue(line: string): void {
    this.pending.push(line);
  }

  /** Queues whole lines, written at the end of this turn with the others queued in it. */
  later(line: string): void {
    this.pending.push(line);
    if (this.soon || this.fd === undefined) return;
    this.soon = true;
    setImmediate(() => {
      this.soon = false;
      if (this.fd === undefined || this.failure !== undefined) return;
      try {
        this.write();
      } catch (error) {
        this.failure = error;
      }
    });
  }

  /** Writes what is queued, then `text` (whole lines), not synced. `stat`: the file's, when just taken. */
  write(text = '', stat?: Stats): void {
    if (this.failure !== undefined) throw this.failure;
    const all = this.pending.join('') + text;
    this.pending = [];
    // Each line names the hash of the line before it, kept by the writer or read back under the lock.
    if (all) this.writer.append(this.fd as number, all, stat);
  }

  /** Writes what is queued and `text`, durable when it returns. */
  sync(text = ''): void {
    this.write(text);
    fdatasyncSync(this.fd as number);
  }

  /** `sync` with the fdatasync in the thread pool (the event loop goes on sending meanwhile). */
  async syncInPool(text = ''): Promise<void> {
    this.write(text);
    await datasyncInPool(this.fd as number);
  }

  /** Writes what is queued and `text`, makes it durable, witnesses it when `witness`, closes it. */
  close(witness: boolean, text = ''): void {
    const fd = this.fd;
    if (fd === undefined) return;
    try {
      this.write(text);
      fdatasyncSync(fd);
      if (witness) keepWitnessOf(this.place.configDir, this.path, fd);
    } finally {
      this.fd = undefined;
      closeSync(fd);
    }
  }

  /** `close` with the last fdatasync in the thread pool (a batch's end). */
  async closeInPool(witness: boolean): Promise<void> {
    const fd = this.fd;
    if (fd === undefined) return;
    try {
      this.write();
      this.fd = undefined;
      await datasyncInPool(fd);
      if (witness) keepWitnessOf(this.place.configDir, this.path, fd);
    } finally {
      this.fd = undefined;
      closeSync(fd);
    }
  }
}

/**
 * fdatasync in the thread pool: the event loop goes on (sending the requests of a group already durable).
 * Looked up at each call, not bound once by promisify: a full disk is tested by failing node:fs's fdatasync.
 */
function datasyncInPool(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}

/** Appends whole lines to a client's record file (under its lock), durable when it returns: a group of one (LogGroup). */
export function appendDurable<T>(place: RecordPlace, file: RecordFile<T>, text: string, by: { at: string; user: string }, writer = new LogWriter()): void {
  ensureRecordDir(place);
  const fd = openLog(place, file.name, file.words.what, true) as number;
  let group: LogGroup;
  try {
    group = new LogGroup(fd, place, file, () => readLog(fd, file, () => {}).damaged, by, writer);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  group.close(true, text);
}

/** A `set-aside` line: line `line` was damaged (torn, or set aside by `repair`) and why; the action its key and id name stays `uncertain`. */
export const SET_ASIDE = {
  ...ACTION_START,
  type: z.literal('set-aside'),
  user: z.string(),
  line: z.number().int().positive(),
  reason: z.string(),
};

/** A `set-aside` line (SET_ASIDE; JSON, no newline). The id and key come first, as in every line (damage.ts). */
export function setAsideLine(d: Pick<DamagedLine, 'line' | 'key' | 'issuance'>, reason: string, at: string, user: string): string {
  const issuance = d.issuance ?? `damaged-line-${d.line}`;
  return JSON.stringify({ v: 1, issuance, key: d.key ?? 'unknown', type: 'set-aside', at, user, line: d.line, reason });
}

/** Whether the file open as `fd`, `size` bytes long, ends with a newline (or is empty): its last write was whole. */
function endsWithNewline(fd: number, size: number): boolean {
  return size === 0 || readAt(fd, size - 1, 1)[0] === 0x0a;
}

/** Whether a newline follows byte `from` of the file open as `fd`, `size` bytes long (a torn line is shorter than MAX_LINE_BYTES). */
function newlineFrom(fd: number, from: number, size: number): boolean {
  const rest = readAt(fd, from, size - from);
  return rest.length !== size - from || rest.includes(0x0a);
}

/**
 * Syncs a folder's entries (a file just created in it). As SQLite does (os_unix.c, unixSync with
 * DIRSYNC), a folder that cannot be opened or synced is passed over: Windows opens no folder as a
 * file (NTFS journals the name itself), and some file systems refuse fsync on a folder.
 */
export function syncFolder(dir: string): void {
  if (process.platform === 'win32') return;
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0));
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // EINVAL on a file system that cannot sync a folder: nothing more can be done for its entry.
  } finally {
    closeSync(fd);
  }
}
