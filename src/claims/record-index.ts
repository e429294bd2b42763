/**
 * The record of claims read into an index of byte offsets (key-table.ts tables): the last state of
 * each key with the offsets of its intent and outcome, and for each similarity fingerprint the
 * offset of the intent of the last claim sent with it. The lines themselves stay in the file and
 * are read back by offset (record.ts). Reading finds the damaged lines too (src/record/damage.ts):
 * what a command that files refuses, and what `claims repair` sets aside.
 *
 * Fast path (docs/benchmarks.md#the-record-of-claims, bench/claims-batch.mjs): a record of a
 * million claims is read at every batch's start.
 */
import { closeSync } from 'node:fs';
import { HEX64 } from '../record/fields.js';
import { type DamagedLine, DamagedRecordFileError, LineCheck } from '../record/damage.js';
import { readLog } from '../record/log.js';
import { authorName } from '../record/chain.js';
import { actOn, attemptHash, claimWeight, endAttempt, fromFlags, type Standing, standingFlags, startAttempt } from '../record/outcome.js';
import { eachLineSync } from '../record/file-lines.js';
import { KeyTable } from '../record/key-table.js';
import {
  type DiskIntent,
  type IntentLine,
  parseLineText,
  parseRecordLine,
  type ReadLine,
  RECORD_VERSION,
  type RecordLine,
  type RecordState,
  type RecordStore,
  type RunLine,
  STATES,
} from './record-format.js';

/** Where the index found a key: its state, and the offsets of its lines (-1: none). */
export interface IndexedKey {
  state: RecordState;
  /** The offset of its intent (-1: none; a torn line's claim has none). */
  intentAt: number;
  /** The offset of its outcome (-1: none yet). */
  outcomeAt: number;
  /** The record's line of a torn or set-aside entry (0: none). */
  tornLine: number;
}

/** The index of one record file, and what reading it found besides. */
export class RecordIndex {
  private readonly table = new KeyTable(256, (n) => ({
    state: new Uint8Array(n),
    offset: new Float64Array(n),
    outcome: new Float64Array(n),
    torn: new Uint32Array(n),
    /** standingFlags of the key (src/record/outcome.ts). */
    flags: new Uint8Array(n),
    /** attemptHash of its latest attempt's filing id. */
    attempt: new Uint32Array(n),
  }));
  private readonly sims = new KeyTable(256, (n) => ({ offset: new Float64Array(n) }));
  /** The batch runs of the record, by id (a few per day: small). */
  readonly runs = new Map<string, RunLine>();
  /** Journals already read into the record (absolute paths). */
  readonly imported = new Set<string>();
  /** Lines read. */
  lines = 0;
  /** The file does not end with a newline (its last line was cut short). */
  unterminated = false;

  constructor(private readonly store: RecordStore) {}

  /** Reads every line of the file open as `fd` into the index; returns the damaged ones. */
  read(fd: number): DamagedLine[] {
    const check = new LineCheck(RECORD_VERSION, parseRecordLine, (r) => (r.type === 'set-aside' ? r.line : undefined));
    const read = readLog(fd, check, (r, offset, line) => this.take(r, offset, line, check.damaged));
    this.lines = read.lines;
    this.unterminated = read.unterminated;
    for (const d of read.damaged) if (d.kind === 'torn' && d.key && HEX64.test(d.key)) this.mark(d.key, 'torn', d.issuance, -1, d.line);
    return read.damaged;
  }

  /** One line that was read: a header checked, runs and imports remembered, claims indexed. */
  private take(r: RecordLine, offset: number, line: number, damaged: DamagedLine[]): void {
    if (r.type === 'header') {
      if (line !== 1 || r.origin !== this.store.origin || r.storeId !== this.store.storeId) damaged.push({ line, byte: offset, kind: 'garbage' });
      return;
    }
    if (line === 1) damaged.push({ line: 1, byte: 0, kind: 'garbage' });
    if (r.type === 'imported') this.imported.add(r.journal);
    else if (r.type === 'run') this.runs.set(r.run, r);
    else this.note(r, offset);
  }

  /** The standing of the key in slot `i` (src/record/outcome.ts). */
  private standingAt(i: number): Standing<RecordState> {
    const c = this.table.columns;
    return { state: STATES[(c.state[i] as number) - 1] as RecordState, attempt: c.attempt[i] as number, ...fromFlags(c.flags[i] as number) };
  }

  private put(i: number, s: Standing<RecordState>): void {
    const c = this.table.columns;
    c.state[i] = STATES.indexOf(s.state) + 1;
    c.flags[i] = standingFlags(s);
    c.attempt[i] = s.attempt as number;
  }

  /** A new attempt of a key: its intent at `offset`, or a torn or set-aside line naming it (`tornLine`). */
  private mark(key: string, state: 'sending' | 'torn', filing: string | undefined, offset: number, tornLine = 0): void {
    const i = this.table.slot(key);
    const before = this.table.fresh ? undefined : this.standingAt(i);
    const after = startAttempt(before, state, attemptHash(filing ?? ''), claimWeight);
    if (after === before) return;
    this.put(i, after);
    const c = this.table.columns;
    if (offset >= 0 || state === 'torn') c.offset[i] = offset + 1;
    c.outcome[i] = 0;
    if (tornLine) c.torn[i] = tornLine;
  }

  /** Indexes a claim's line at `offset`: an intent, an outcome, or a line set aside. */
  note(r: Exclude<RecordLine, { type: 'header' | 'imported' | 'run' }>, offset: number): void {
    if (!HEX64.test(r.key)) return;
    if (r.type === 'intent') {
      this.mark(r.key, 'sending', r.issuance, offset);
      if (r.sim && HEX64.test(r.sim)) this.sims.columns.offset[this.sims.slot(r.sim)] = offset + 1;
    } else if (r.type === 'outcome') {
      const i = this.table.find(r.key);
      if (i < 0) return;
      const before = this.standingAt(i);
      const after = endAttempt(before, r.status, attemptHash(r.issuance), claimWeight) as Standing<RecordState>;
      if (after === before) return;
      this.put(i, after);
      if (after.state !== before.state) this.table.columns.outcome[i] = offset + 1;
    } else this.mark(r.key, 'torn', r.issuance, -1, r.line);
  }

  /** An intent as read, its run's details filled in. */
  resolve(i: DiskIntent): IntentLine {
    const run = i.run === undefined ? undefined : this.runs.get(i.run);
    return {
      ...i,
      // The author as the OS names the uid the line gives, never its own `user` text alone (src/record/chain.ts).
      user: authorName(i.uid ?? run?.uid, i.user ?? run?.user ?? '?'),
      host: i.host ?? run?.host ?? '?',
      profile: i.profile ?? run?.profile ?? '?',
      source: i.source ?? run?.source ?? '?',
      journal: i.journal ?? run?.journal,
      journalId: run?.journalId,
    };
  }

  /** Every readable line of the file open as `fd` (closed once read), in order, intents resolved; `run` lines are remembered on the way. */
  *readAll(fd: number): Generator<ReadLine> {
    const lines: string[] = [];
    try {
      eachLineSync(fd, (buffer, start, end, _offset, _complete, long) => {
        if (end > start && !long) lines.push(buffer.toString('utf8', start, end));
      });
    } finally {
      closeSync(fd);
    }
    for (const line of lines) {
      const r = parseLineText(line);
      if (r?.type === 'run') this.runs.set(r.run, r);
      if (r) yield r.type === 'intent' ? this.resolve(r) : r;
    }
  }

  /** Whether the index holds anything for a key. */
  has(key: string): boolean {
    return this.table.find(key) >= 0;
  }

  /** What the index holds for a key (undefined: nothing). */
  get(key: string): IndexedKey | undefined {
    const i = this.table.find(key);
    if (i < 0) return undefined;
    const c = this.table.columns;
    return {
      // An outcome belongs to its attempt (src/record/outcome.ts): filed is final, a later attempt's refusal leaves an earlier one uncertain.
      state: actOn(this.standingAt(i), 'uncertain', claimWeight),
      intentAt: (c.offset[i] as number) - 1,
      outcomeAt: (c.outcome[i] as number) - 1,
      tornLine: c.torn[i] as number,
    };
  }

  /** The offset of the intent of the last claim sent with a similarity fingerprint (-1: none). */
  similarAt(sim: string): number {
    const i = this.sims.find(sim);
    return i < 0 ? -1 : (this.sims.columns.offset[i] as number) - 1;
  }
}

/** A record of claims that cannot be read safely: nothing may be filed until it is repaired (exit 2). */
export class RecordDamagedError extends DamagedRecordFileError {
  constructor(path: string, lines: DamagedLine[]) {
    super(path, lines, {
      what: 'record of claims',
      risk: 'a line opcli cannot read could be a claim already filed, and filing without it could file it twice',
      repair:
        'Run `opcli claims repair` to set the damaged line(s) aside (a copy of the file is kept; the claims they name are then held as uncertain), or follow "A damaged record" in docs/guides/batch-claims.md.',
      detailsKey: 'record',
    });
  }
}
