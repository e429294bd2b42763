/**
 * A record file's questions answered from its index (index-file.ts), as a `WHERE term = $1` on an
 * indexed column would be in PostgreSQL, never by reading every line. The part the index covers was
 * read and checked before (by this person: the index is theirs); the lines after it are read now
 * under the one damage policy, chained on from the last covered line, and indexed when they read
 * cleanly. A file the index no longer matches is read whole and indexed again.
 */
import { closeSync, fstatSync } from 'node:fs';
import { join } from 'node:path';
import { ensureRecordDir, type RecordPlace } from '../config/record-dir.js';
import { lineHash, readAt } from './chain.js';
import { blockingDamage, type DamagedLine, DamagedRecordFileError, LineCheck, parseText } from './damage.js';
import { eachLine, lineAt } from './file-lines.js';
import { openLog, type RecordClient, type RecordFile } from './log.js';
import { type Covered, TermIndex, termHash } from './index-file.js';
import { checkWitnessOf, fdReader, lineHashBefore } from './witness.js';

export type { RecordClient, RecordFile } from './log.js';

/** A record file open as `fd`, its index brought up to date: questions by term read only the lines that answer them. */
export class IndexedRecord<T> {
  /** The blocking damage found when the record, changed under its index, was read whole again. */
  private broken: DamagedLine[] = [];

  private constructor(
    private readonly fd: number,
    private readonly where: { path: string; home: string | undefined },
    private readonly client: RecordClient<T>,
    private index: TermLookup,
    public damaged: DamagedLine[],
    private readonly changed: (blocking: DamagedLine[]) => void,
  ) {}

  /**
   * The record open as `fd` (the caller closes it), its index (in `home`; none: read whole) brought up to date. A
   * question whose line is not the one indexed (a line before it was removed or rewritten) reads the record whole and
   * asks again; blocking damage found then goes to `changed` at every later question (a command that files throws).
   */
  static open<T>(
    fd: number,
    path: string,
    home: string | undefined,
    client: RecordClient<T>,
    changed: (blocking: DamagedLine[]) => void = () => {},
  ): IndexedRecord<T> {
    const { index, damaged } = IndexedRecord.read(fd, path, home, client);
    return new IndexedRecord(fd, { path, home }, client, index, damaged, changed);
  }

  /** Brings the index up to the file again (lines written since it was opened); damage found by a rebuild still stands. */
  reopen(): void {
    ({ index: this.index, damaged: this.damaged } = IndexedRecord.read(this.fd, this.where.path, this.where.home, this.client));
  }

  /** The index brought up to date, or (no config folder of the reader's to keep one in) the lines read whole. */
  private static read<T>(fd: number, path: string, home: string | undefined, client: RecordClient<T>): { index: TermLookup; damaged: DamagedLine[] } {
    if (home !== undefined) return IndexedRecord.brought(fd, path, home, client);
    const whole = readTail(fd, client, undefined);
    return { index: inMemory(whole.entries), damaged: whole.damaged };
  }

  /** Reads what the index does not cover yet, and indexes it when it reads cleanly. */
  private static brought<T>(fd: number, path: string, home: string, client: RecordClient<T>): { index: TermLookup; damaged: DamagedLine[] } {
    const index = new TermIndex(home, path, client.terms);
    const size = fstatSync(fd).size;
    let from = index.covered;
    if (from && !(from.chained && from.size <= size && lineHashBefore(fdReader(fd), from.size) === from.last)) {
      // Repaired, replaced, cut or of 0.2.0's lines only: read whole and indexed again.
      index.reset();
      from = undefined;
    }
    // A long read hands its terms to the index as it goes (FLUSH_ENTRIES); the state counts them up to the last clean line.
    let unwritable = false;
    let clean: Covered | undefined;
    const write = (entries: [string, number][], covered?: Covered): boolean => {
      if (unwritable) return false;
      try {
        index.write(entries);
        if (covered) clean = covered;
        return true;
      } catch {
        unwritable = true;
        return false;
      }
    };
    const tail = readTail(fd, client, from, write);
    const commit = (covered: Covered): boolean => {
      if (unwritable) return false;
      try {
        if (!from || covered.size !== from.size) index.commit(covered);
        return true;
      } catch {
        unwritable = true;
        return false;
      }
    };
    if (blockingDamage(tail.damaged).length > 0) {
      if (clean) commit(clean);
      return { index, damaged: tail.damaged };
    }
    if (write(tail.entries) && commit(tail.covered)) return { index, damaged: tail.damaged };
    // An index that cannot be written (a read-only folder): the record read whole, its lines held in memory for this answer.
    const whole = readTail(fd, client, undefined);
    return { index: inMemory(whole.entries), damaged: whole.damaged };
  }

  /** The lines that hold any of `terms`, in the record's order; asked again of the record read whole when its index no longer matches it. */
  find(...terms: string[]): T[] {
    if (this.broken.length) this.changed(this.broken);
    try {
      return this.lookup(terms);
    } catch (error) {
      if (!(error instanceof IndexMismatch) || this.where.home === undefined) throw error;
    }
    const { path, home } = this.where;
    new TermIndex(home, path, this.client.terms).reset();
    ({ index: this.index, damaged: this.damaged } = IndexedRecord.brought(this.fd, path, home, this.client));
    this.broken = blockingDamage(this.damaged);
    if (this.broken.length) this.changed(this.broken);
    try {
      return this.lookup(terms);
    } catch (error) {
      // The index covers the record up to its damage only: what it covers is the answer.
      if (!(error instanceof IndexMismatch) || !this.broken.length) throw error;
      return [];
    }
  }

  /** The lines the index names for `terms` (IndexMismatch: one is not the line it indexed). */
  private lookup(terms: string[]): T[] {
    let byOffset: Map<number, string> | undefined;
    for (const term of terms) for (const offset of this.index.find(term) ?? mismatch()) (byOffset ??= new Map()).set(offset, term);
    // Most of a batch's questions find nothing (a new row): no map, no sort, no array of lines.
    if (byOffset === undefined) return [];
    const records: T[] = [];
    for (const [offset, term] of [...byOffset].sort((a, b) => a[0] - b[0])) {
      const record = this.lineAt(offset);
      const held = record === undefined ? [] : this.client.termsOf(record);
      // The line holds a term of the entry's hash (another term may share it), or the record changed under the index.
      if (!held.some((t) => termHash(t) === termHash(term))) mismatch();
      if (held.some((t) => terms.includes(t))) records.push(record as T);
    }
    return records;
  }

  /** The record whose line starts at `offset` (undefined: no line starts there, or it does not parse). */
  private lineAt(offset: number): T | undefined {
    if (offset > 0 && readAt(this.fd, offset - 1, 1)[0] !== 0x0a) return undefined;
    return parseText((v) => this.client.parse(v), lineAt(this.fd, offset));
  }
}

/** A client's record opened to ask (openRecord); `intact`: only then is what this person leaves witnessed. */
export interface OpenedRecord<T> {
  fd: number;
  q: IndexedRecord<T>;
  damaged: DamagedLine[];
  intact: boolean;
}

/**
 * Opens a client's record in `place` (to append, or to read: undefined when missing), its index up to date. Blocking
 * damage, now or found later under the index, refuses it (DamagedRecordFileError in the file's words, exit 2), as does a record that shrank, changed
 * or vanished since this person wrote it (witness.ts); `tolerate` only keeps the damage (history: never to file or pay).
 */
export function openRecord<T>(place: RecordPlace, file: RecordFile<T>, writing: boolean, tolerate = false): OpenedRecord<T> | undefined {
  ensureRecordDir(place);
  const path = join(place.dir, file.name);
  const fd = openLog(place, file.name, file.words.what, writing);
  if (fd === undefined) {
    if (!tolerate) checkWitnessOf(place.configDir, path, undefined, file.words);
    return undefined;
  }
  try {
    const damaged: DamagedLine[] = [];
    const q = IndexedRecord.open(fd, path, place.configDir, file, (blocking) => {
      // The record changed under its index and, read whole again, has damage: it stops a command that files or pays.
      opened.intact = false;
      if (!tolerate) throw new DamagedRecordFileError(path, blocking, file.words);
      damaged.push(...blocking.filter((d) => !damaged.includes(d)));
    });
    const opened: OpenedRecord<T> = { fd, q, damaged, intact: !tolerate };
    damaged.push(...q.damaged);
    const blocking = blockingDamage(damaged);
    if (blocking.length && !tolerate) throw new DamagedRecordFileError(path, blocking, file.words);
    if (!tolerate) checkWitnessOf(place.configDir, path, fd, file.words);
    return opened;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** The index names a line that is not the one it indexed: IndexedRecord.find reads the record whole and asks again. */
class IndexMismatch extends Error {}

const mismatch = (): never => {
  throw new IndexMismatch('the record changed under its index');
};

/** Where a term's lines are: the index, or (when it cannot be written) the lines just read, in memory. */
interface TermLookup {
  find(term: string): number[] | undefined;
}

/** The lines read, by term: the answer when the index could not be written. */
function inMemory(entries: [string, number][]): TermLookup {
  const byTerm = new Map<string, number[]>();
  for (const [term, offset] of entries) byTerm.set(term, [...(byTerm.get(term) ?? []), offset]);
  return { find: (term) => byTerm.get(term) ?? [] };
}

/** How many terms a long read holds before it hands them to the index. */
const FLUSH_ENTRIES = 100_000;

/** The lines of the record after `from` (the whole file without it): their terms, damage, and how far they read cleanly. */
function readTail<T>(
  fd: number,
  client: RecordClient<T>,
  from: Covered | undefined,
  flush?: (entries: [string, number][], covered: Covered) => boolean,
): { entries: [string, number][]; damaged: DamagedLine[]; covered: Covered } {
  const check = new LineCheck(client, from?.last);
  const entries: [string, number][] = [];
  const covered: Covered = from ? { ...from } : { size: 0, lines: 0, chained: false };
  let line = covered.lines;
  eachLine(
    fd,
    (buffer, start, end, offset, complete, long) => {
      line++;
      const text = long ? '' : buffer.toString('utf8', start, end);
      const record = check.take(text, line, offset, complete, long);
      if (!complete) return;
      if (record !== undefined) for (const term of client.termsOf(record)) entries.push([term, offset]);
      covered.size = offset + (end - start) + 1;
      covered.lines = line;
      if (text.trim()) covered.last = lineHash(text);
      covered.chained = check.chain.begun;
      if (flush && entries.length >= FLUSH_ENTRIES && check.damaged.length === 0 && flush(entries, { ...covered })) entries.length = 0;
    },
    covered.size,
  );
  return { entries, damaged: check.end(), covered };
}
