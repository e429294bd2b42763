/**
 * The batch journal: an append-only JSONL file beside the input that records, for each row key, that
 * its request is about to be sent (made durable BEFORE the request leaves) and then its outcome.
 * Appends are grouped: every entry queued while one fsync runs is written and synced by the next,
 * so "recorded before sent" holds without one fsync per row. A torn last line (kill -9 mid-write)
 * is ignored on read. A lock file keeps two runs from using one journal at once.
 */
import { createReadStream, existsSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { OpcliError } from '../errors.js';
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
}

/** What the journal remembers of a row from earlier runs. */
export interface PriorOutcome {
  status: JournalStatus;
  /** Byte offset of the entry in the journal, where `priorDetail` reads its sourceOrderId and reason. */
  offset: number;
}

const STATUS_CODES: readonly JournalStatus[] = ['sending', 'filed', 'rejected', 'uncertain', 'not_sent'];
const STATUS_CODE = new Map(STATUS_CODES.map((s, i) => [s, i + 1]));
const HEX64 = /^[0-9a-f]{16}/;

/**
 * The last outcome of each key of earlier runs, in typed arrays: 17 bytes a slot (two 32-bit halves
 * of the key's first 64 bits, a status byte, the entry's byte offset), open addressing with linear
 * probing, grown at 70% load. A million rows take ~34 MB where a Map of strings took ~260 MB. The
 * key is a SHA-256 prefix, so two rows agreeing on 64 bits is practically impossible (about 1 in
 * 18 million that any of a million rows meets any of a million journaled ones).
 */
export class PriorIndex {
  private hi = new Uint32Array(1024);
  private lo = new Uint32Array(1024);
  /** 0: empty slot; else 1 + the index in STATUS_CODES. */
  private status = new Uint8Array(1024);
  private offset = new Float64Array(1024);
  private mask = 1023;
  size = 0;

  /** Records the outcome of a key (a later entry replaces an earlier one). */
  set(key: string, status: JournalStatus, offset: number): void {
    const code = STATUS_CODE.get(status);
    if (code === undefined || !HEX64.test(key)) return;
    if ((this.size + 1) * 10 > (this.mask + 1) * 7) this.grow();
    this.put(Number.parseInt(key.slice(0, 8), 16), Number.parseInt(key.slice(8, 16), 16), code, offset);
  }

  /** The last outcome recorded for a key. */
  get(key: string): PriorOutcome | undefined {
    if (this.size === 0 || !HEX64.test(key)) return undefined;
    const hi = Number.parseInt(key.slice(0, 8), 16);
    const lo = Number.parseInt(key.slice(8, 16), 16);
    for (let i = lo & this.mask; this.status[i] !== 0; i = (i + 1) & this.mask) {
      if (this.lo[i] === lo && this.hi[i] === hi) {
        return { status: STATUS_CODES[(this.status[i] as number) - 1] as JournalStatus, offset: this.offset[i] as number };
      }
    }
    return undefined;
  }

  private put(hi: number, lo: number, code: number, offset: number): void {
    let i = lo & this.mask;
    while (this.status[i] !== 0 && !(this.lo[i] === lo && this.hi[i] === hi)) i = (i + 1) & this.mask;
    if (this.status[i] === 0) this.size++;
    this.hi[i] = hi;
    this.lo[i] = lo;
    this.status[i] = code;
    this.offset[i] = offset;
  }

  private grow(): void {
    const { hi, lo, status, offset } = this;
    const capacity = (this.mask + 1) * 2;
    this.hi = new Uint32Array(capacity);
    this.lo = new Uint32Array(capacity);
    this.status = new Uint8Array(capacity);
    this.offset = new Float64Array(capacity);
    this.mask = capacity - 1;
    this.size = 0;
    for (let i = 0; i < status.length; i++) {
      if (status[i] !== 0) this.put(hi[i] as number, lo[i] as number, status[i] as number, offset[i] as number);
    }
  }
}

interface Pending {
  text: string;
  durable: boolean;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** The holder refreshes the lock every second; one untouched for 2 s (proper-lockfile's minimum) belongs to a dead run. */
const LOCK_STALE_MS = 2_000;

export class Journal {
  readonly path: string;
  private readonly handle: FileHandle;
  private readonly prior: PriorIndex;
  /** Opened on the first `priorDetail`, to read earlier entries back. */
  private reader?: Promise<FileHandle>;
  private readonly release: () => Promise<void>;
  private pending: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private failure: unknown;
  /** Number of entries read back from earlier runs. */
  readonly priorEntries: number;

  private constructor(path: string, handle: FileHandle, prior: PriorIndex, priorEntries: number, release: () => Promise<void>) {
    this.path = path;
    this.handle = handle;
    this.prior = prior;
    this.priorEntries = priorEntries;
    this.release = release;
  }

  /** Locks the journal, reads what earlier runs recorded, and opens it for appending. */
  static async open(path: string): Promise<Journal> {
    const { default: lockfile } = await import('proper-lockfile');
    // The lock target must exist; the journal itself is it.
    await (await open(path, 'a', 0o600)).close();
    let release: () => Promise<void>;
    try {
      release = await lockfile.lock(path, {
        realpath: false,
        lockfilePath: `${path}.lock`,
        stale: LOCK_STALE_MS,
        update: LOCK_STALE_MS / 2,
        // Long enough to reclaim the lock of a run killed with kill -9 (stale after 2 s).
        retries: { retries: 25, factor: 1, minTimeout: 200, maxTimeout: 200 },
      });
    } catch (error) {
      throw new OpcliError(`Another \`opcli claims file\` run is using the journal ${path}.`, {
        hint: 'Wait for it to finish. Two runs on one journal could file a row twice, so opcli refuses.',
        cause: error,
      });
    }
    try {
      const { prior, entries, endsWithNewline } = await readJournal(path);
      const handle = await open(path, 'a', 0o600);
      // A torn last line must not swallow the first entry of this run.
      if (!endsWithNewline) await handle.write('\n');
      return new Journal(path, handle, prior, entries, release);
    } catch (error) {
      await release().catch(() => {});
      throw error;
    }
  }

  /** The last outcome an earlier run recorded for a key. */
  priorOutcome(key: string): PriorOutcome | undefined {
    return this.prior.get(key);
  }

  /**
   * The sourceOrderId and reason of an earlier outcome, read back from the journal at its offset:
   * the index keeps only the status, so a rerun over a million filed rows does not hold a million
   * ids. Only results printed per row (--jsonl, --out) need them.
   */
  async priorDetail(prior: PriorOutcome): Promise<{ sourceOrderId?: string; reason?: string }> {
    this.reader ??= open(this.path, 'r');
    const handle = await this.reader;
    let size = 1024;
    for (;;) {
      const buffer = Buffer.alloc(size);
      const { bytesRead } = await handle.read(buffer, 0, size, prior.offset);
      const end = buffer.subarray(0, bytesRead).indexOf(10);
      if (end === -1 && bytesRead === size) {
        size *= 4;
        continue;
      }
      try {
        const e = JSON.parse(buffer.toString('utf8', 0, end === -1 ? bytesRead : end)) as Partial<JournalEntry>;
        return { sourceOrderId: e.sourceOrderId, reason: e.reason };
      } catch {
        return {};
      }
    }
  }

  /**
   * Appends an entry. A `sending` entry resolves once it is fsync'd (with whatever else was queued):
   * it must be durable before its request leaves. An outcome resolves once it is written: a process
   * crash keeps written data, the next fsync (or close) makes it durable, and if a power loss ever
   * dropped it the row would read as `sending`, that is uncertain, never resent silently. Syncing
   * every outcome too doubled the fsyncs for no safety gained.
   */
  record(entry: Omit<JournalEntry, 'at'>): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const text = `${JSON.stringify({ ...entry, at: new Date().toISOString() })}\n`;
    return new Promise((resolve, reject) => {
      this.pending.push({ text, durable: entry.status === 'sending', resolve, reject });
      this.flushing ??= this.flushLoop();
    });
  }

  private async flushLoop(): Promise<void> {
    while (this.pending.length) {
      const batch = this.pending;
      this.pending = [];
      try {
        await this.handle.write(batch.map((p) => p.text).join(''));
        if (batch.some((p) => p.durable)) await this.handle.datasync();
        for (const p of batch) p.resolve();
      } catch (error) {
        this.failure = new OpcliError(`Cannot write the journal ${this.path}: ${(error as Error).message}`, {
          hint: 'Free disk space or pass --journal with a writable path; rows after this one were not sent.',
          cause: error,
        });
        for (const p of batch) p.reject(this.failure);
      }
    }
    this.flushing = null;
  }

  /** Writes what is queued, closes the file and releases the lock. */
  async close(): Promise<void> {
    while (this.flushing) await this.flushing;
    await this.handle.datasync().catch(() => {});
    await this.handle.close().catch(() => {});
    if (this.reader) await (await this.reader.catch(() => undefined))?.close().catch(() => {});
    await this.release().catch(() => {});
  }
}

/**
 * Reads every complete line; the last outcome of each key wins. Unreadable lines are skipped. Lines
 * are split on bytes, so each entry's offset is known for `priorDetail`.
 */
async function readJournal(path: string): Promise<{ prior: PriorIndex; entries: number; endsWithNewline: boolean }> {
  const prior = new PriorIndex();
  let entries = 0;
  let endsWithNewline = true;
  if (!existsSync(path)) return { prior, entries, endsWithNewline };
  const take = (buffer: Buffer, start: number, end: number, offset: number) => {
    if (end <= start) return;
    try {
      const e = JSON.parse(buffer.toString('utf8', start, end)) as JournalEntry;
      if (typeof e.key !== 'string' || typeof e.status !== 'string') return;
      prior.set(e.key, e.status, offset);
      entries++;
    } catch {
      // a torn line from a crash mid-write
    }
  };
  let rest: Buffer = Buffer.alloc(0);
  /** File offset of `rest`'s first byte. */
  let restOffset = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    const buffer = rest.length ? Buffer.concat([rest, chunk]) : chunk;
    const base = restOffset;
    let start = 0;
    let nl = buffer.indexOf(10);
    while (nl !== -1) {
      take(buffer, start, nl, base + start);
      start = nl + 1;
      nl = buffer.indexOf(10, start);
    }
    rest = buffer.subarray(start);
    restOffset = base + start;
  }
  if (rest.length) {
    endsWithNewline = false;
    take(rest, 0, rest.length, restOffset);
  }
  return { prior, entries, endsWithNewline };
}
