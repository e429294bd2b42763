/**
 * The index beside a record of business actions: which lines hold a term (a key, a customer).
 *
 * A static hash file (Ramakrishnan & Gehrke, "Database Management Systems", 3rd ed., §11.1): BUCKETS
 * append-only bucket files of fixed-size entries (the term's SHA-256's first 32 bits, the line's byte
 * offset), chosen by the hash's first byte; a lookup keeps only the lines that really hold the term.
 * As SQLite's WAL index header names the frames it covers, a state file names how much of the record
 * the index covers (size, lines, the last line's hash, each bucket's length): a covered line that
 * changed (repaired, replaced, cut) or a bucket shorter than its state (a crash) rebuilds it.
 *
 * The index is each person's own (in their config folder, as the witness is): a teammate who can
 * write a shared record-dir cannot plant an index that hides a payment.
 */
import { createHash, hash } from 'node:crypto';
import { closeSync, constants, fdatasyncSync, fstatSync, mkdirSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openPrivateFile, readPrivateFile } from '../config/private-file.js';
import { syncFolder } from './log.js';

/** How many bucket files an index has. */
const BUCKETS = 256;
/** How many bytes of buckets one index keeps in memory between questions. */
const KEPT_BYTES = 32 * 1024 * 1024;
/** One entry: a 32-bit term hash and a 64-bit float offset. */
const ENTRY = 12;

/** How much of the record the index covers. */
export interface Covered {
  /** Bytes of the record covered (whole lines only). */
  size: number;
  /** Lines covered (the next line's number is lines + 1). */
  lines: number;
  /** The hash of the last line covered (src/record/chain.ts lineHash), or undefined when none. */
  last?: string;
  /** The chain has begun by the end of the covered part (a record of 0.2.0 before it has not): a read can go on from `last`. */
  chained: boolean;
}

interface State extends Covered {
  v: 1;
  record: string;
  buckets: number[];
}

/** A term as the index keys it: its hash's first 32 bits (the hex digest's first 8 digits cost less than a Buffer of it). */
export const termHash = (term: string): number => Number.parseInt(hash('sha256', term, 'hex').slice(0, 8), 16);

/** The index of one record file, kept in `home` (the config folder of the person reading it). */
export class TermIndex {
  private readonly dir: string;
  private state: State | undefined;

  /** `terms`: the client's terms and their version (another makes another index). */
  constructor(
    home: string,
    private readonly record: string,
    terms: string,
  ) {
    const id = createHash('sha256')
      .update(`${terms}\n${resolve(record)}`)
      .digest('hex')
      .slice(0, 24);
    this.dir = join(home, 'record-index', id);
    this.state = this.readState();
  }

  /** How much of the record the index covers (undefined: nothing yet, or an index that cannot be used). */
  get covered(): Covered | undefined {
    return this.state;
  }

  private readState(): State | undefined {
    try {
      const text = readPrivateFile(join(this.dir, 'state.json'), 'record index');
      const s = text === undefined ? undefined : (JSON.parse(text) as State);
      return s?.v === 1 && s.record === resolve(this.record) && s.buckets?.length === BUCKETS ? s : undefined;
    } catch {
      return undefined;
    }
  }

  /** The offsets of the lines indexed under `term`, in the record's order; undefined when a bucket is shorter than the state says (rebuild). */
  find(term: string): number[] | undefined {
    const state = this.state;
    if (!state) return undefined;
    const h = termHash(term);
    const b = h >>> 24;
    const length = state.buckets[b] as number;
    if (length === 0) return [];
    const bytes = this.bucket(b, length);
    if (bytes === undefined) return undefined;
    // A set only once an entry matches: most of a batch's questions are of new rows.
    let offsets: Set<number> | undefined;
    for (let at = 0; at + ENTRY <= length; at += ENTRY) if (bytes.readUInt32LE(at) === h) (offsets ??= new Set()).add(bytes.readDoubleLE(at + 4));
    return offsets ? [...offsets].sort((a, b) => a - b) : [];
  }

  /** Buckets read, kept for the next question (a batch asks of every row), up to KEPT_BYTES in all. */
  private readonly buckets = new Map<number, Buffer>();
  private keptBytes = 0;

  /** The first `length` bytes of bucket `b` (undefined: the bucket is shorter). */
  private bucket(b: number, length: number): Buffer | undefined {
    const kept = this.buckets.get(b);
    if (kept && kept.length === length) return kept;
    const fd = openPrivateFile(join(this.dir, bucketName(b)), constants.O_RDONLY, 'record index');
    if (fd === undefined) return undefined;
    try {
      const bytes = Buffer.alloc(length);
      let done = 0;
      for (let n = 1; done < length && n > 0; done += n) n = readSync(fd, bytes, done, length - done, done);
      if (done < length) return undefined;
      // Past the bound (a history asking of keys all over a record of millions), the kept buckets are let go.
      if (this.keptBytes + length > KEPT_BYTES) this.forget();
      this.keptBytes += length - (this.buckets.get(b)?.length ?? 0);
      this.buckets.set(b, bytes);
      return bytes;
    } finally {
      closeSync(fd);
    }
  }

  private forget(): void {
    this.buckets.clear();
    this.keptBytes = 0;
  }

  /** Bucket lengths written past the state (`write`), and the buckets to sync before the next state counts them. */
  private written: number[] | undefined;
  private readonly unsynced = new Set<number>();

  /** Writes the terms of lines read past the covered part to their buckets; no state counts them until `commit`. */
  write(entries: [term: string, offset: number][]): void {
    const lengths = (this.written ??= [...(this.state?.buckets ?? new Array(BUCKETS).fill(0))]);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const byBucket = new Map<number, Buffer[]>();
    for (const [term, offset] of entries) {
      const h = termHash(term);
      const entry = Buffer.alloc(ENTRY);
      entry.writeUInt32LE(h, 0);
      entry.writeDoubleLE(offset, 4);
      const list = byBucket.get(h >>> 24) ?? [];
      list.push(entry);
      byBucket.set(h >>> 24, list);
    }
    for (const [b, list] of byBucket) {
      lengths[b] = appendBucket(join(this.dir, bucketName(b)), lengths[b] as number, Buffer.concat(list));
      this.unsynced.add(b);
    }
  }

  /** Moves the covered part to `covered`: the buckets synced before the state that counts them (a crash leaves it behind, never ahead). */
  commit(covered: Covered): void {
    const buckets = this.written ?? this.state?.buckets ?? new Array(BUCKETS).fill(0);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    for (const b of this.unsynced) syncFile(join(this.dir, bucketName(b)));
    this.unsynced.clear();
    const next: State = { v: 1, record: resolve(this.record), ...covered, buckets: [...buckets] };
    const temp = join(this.dir, `state.json.${process.pid}`);
    const fd = openPrivateFile(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 'record index') as number;
    try {
      writeSync(fd, JSON.stringify(next));
    } finally {
      closeSync(fd);
    }
    renameSync(temp, join(this.dir, 'state.json'));
    if (!this.state) syncFolder(this.dir);
    this.state = next;
  }

  /** Forgets the index: the next read rebuilds it from the record. */
  reset(): void {
    this.state = undefined;
    this.forget();
    this.written = undefined;
    this.unsynced.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const bucketName = (b: number): string => `b${b.toString(16).padStart(2, '0')}`;

/** Writes `bytes` after the first `length` bytes of a bucket (over what a crash left past them); its new length. */
function appendBucket(path: string, length: number, bytes: Buffer): number {
  const fd = openPrivateFile(path, constants.O_RDWR | constants.O_CREAT, 'record index') as number;
  try {
    if (fstatSync(fd).size < length) throw new Error(`${path} is shorter than its index state`);
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, length + done);
    return length + bytes.length;
  } finally {
    closeSync(fd);
  }
}

function syncFile(path: string): void {
  const fd = openPrivateFile(path, constants.O_RDWR, 'record index') as number;
  try {
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
