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

/** What the journal remembers of a row from earlier runs (kept small: a million rows must fit). */
export interface PriorOutcome {
  status: JournalStatus;
  sourceOrderId?: string;
  reason?: string;
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
  private readonly prior: Map<string, PriorOutcome>;
  private readonly release: () => Promise<void>;
  private pending: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private failure: unknown;
  /** Number of entries read back from earlier runs. */
  readonly priorEntries: number;

  private constructor(path: string, handle: FileHandle, prior: Map<string, PriorOutcome>, priorEntries: number, release: () => Promise<void>) {
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
    await this.release().catch(() => {});
  }
}

/** Reads every complete line; the last outcome of each key wins. Unreadable lines are skipped. */
async function readJournal(path: string): Promise<{ prior: Map<string, PriorOutcome>; entries: number; endsWithNewline: boolean }> {
  const prior = new Map<string, PriorOutcome>();
  let entries = 0;
  let endsWithNewline = true;
  if (!existsSync(path)) return { prior, entries, endsWithNewline };
  const stream = createReadStream(path, { encoding: 'utf8' });
  let rest = '';
  const take = (line: string) => {
    if (!line.trim()) return;
    try {
      const e = JSON.parse(line) as JournalEntry;
      if (typeof e.key !== 'string' || typeof e.status !== 'string') return;
      prior.set(e.key, { status: e.status, sourceOrderId: e.sourceOrderId, reason: e.reason });
      entries++;
    } catch {
      // a torn line from a crash mid-write
    }
  };
  for await (const chunk of stream) {
    const text = rest + (chunk as string);
    const lines = text.split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) take(line);
  }
  if (rest !== '') {
    endsWithNewline = false;
    take(rest);
  }
  return { prior, entries, endsWithNewline };
}
