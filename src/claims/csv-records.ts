/**
 * The records of a batch's CSV text (after csv-guard.ts: LF line ends), pulled chunk by chunk.
 * Plain records (cells split by commas, quoted cells with `""` for a quote, newlines inside quotes)
 * are split here by hand; from the first record that is anything else (a quote inside an unquoted
 * cell, text after a closing quote, a quote never closed, a lone CR), the rest of the text goes to
 * csv-parse, which reads it, and fails on it, exactly as it would have read the whole file.
 *
 * Fast path (docs/benchmarks.md#figures-behind-the-code, bench/claims-reader.mjs): this runs over
 * every character of a batch, and splitting plain records here costs a fraction of csv-parse's CPU.
 */
import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { count } from '../text/count.js';
import { excerpt } from '../text/excerpt.js';
import { type CsvGuard, CsvReadError } from './csv-guard.js';

export interface CsvRecord {
  record: string[];
  /** The line the record begins on. */
  line: number;
  /** The line the record ends on. */
  lines: number;
}

const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;

/**
 * Splits plain records off the text as it comes; `take` returns the text it leaves to csv-parse
 * (from the record where it stopped on) once it meets one that is not plain. csv-parse is given the
 * lines before that record as empty lines (which it skips and counts), so the line numbers in its
 * records and messages are the file's.
 */
export class PlainCsv {
  /** The start of a record not yet complete, kept for the next chunk (the file's start with its byte order mark, while nothing was taken). */
  private carry = '';
  /** The line `carry` begins on. */
  private line = 1;
  /** How many characters of `carry` are not text: the byte order mark opening the file (csv-parse's `bom: true`). */
  private skip = -1;

  constructor(private readonly queue: CsvRecord[]) {}

  /** Splits the records of `chunk` (the last one when `end`); the text left to csv-parse, when there is some. */
  take(chunk: string, end: boolean): string | undefined {
    const text = this.carry + chunk;
    if (this.skip < 0) {
      if (text === '' && !end) return undefined;
      this.skip = text.charCodeAt(0) === 0xfeff ? 1 : 0;
    }
    const n = text.length;
    let i = this.skip;
    let line = this.line;
    while (i < n) {
      // An empty line is skipped (csv-parse's skip_empty_lines).
      if (text.charCodeAt(i) === LF) {
        i++;
        line++;
        continue;
      }
      const next = this.record(text, i, line, end);
      if (next === -1) break;
      if (next === -2) {
        // Not plain: csv-parse reads on from this record (the whole text, when nothing was taken yet).
        this.carry = '';
        return line === 1 ? text : `${'\n'.repeat(line - 1)}${text.slice(i)}`;
      }
      line = (this.queue[this.queue.length - 1] as CsvRecord).lines + 1;
      i = next;
    }
    if (i === this.skip) this.carry = text;
    else {
      this.carry = text.slice(i);
      this.skip = 0;
    }
    this.line = line;
    return undefined;
  }

  /**
   * One record from `start`: queued, and the index after its line end returned; -1 when the text
   * ends before it does (not `end`), -2 when it is not plain.
   */
  private record(text: string, start: number, line: number, end: boolean): number {
    const n = text.length;
    const cells: string[] = [];
    let inner = 0;
    let i = start;
    for (;;) {
      let c = text.charCodeAt(i);
      if (c === QUOTE) {
        // A quoted cell: up to the quote not followed by another; `""` is one quote.
        let value = '';
        let from = i + 1;
        for (let j = from; ; j++) {
          if (j >= n) return end ? -2 : -1;
          c = text.charCodeAt(j);
          if (c === LF) inner++;
          else if (c === CR) return -2;
          else if (c === QUOTE) {
            if (j + 1 >= n && !end) return -1;
            if (text.charCodeAt(j + 1) === QUOTE) {
              value += text.slice(from, j + 1);
              from = j + 2;
              j++;
              continue;
            }
            cells.push(value + text.slice(from, j));
            i = j + 1;
            break;
          }
        }
        if (i >= n) return this.done(cells, line, inner, n);
        c = text.charCodeAt(i);
        if (c !== COMMA && c !== LF) return -2;
      } else {
        let j = i;
        for (; j < n; j++) {
          c = text.charCodeAt(j);
          if (c === COMMA || c === LF) break;
          if (c === QUOTE || c === CR) return -2;
        }
        if (j >= n && !end) return -1;
        cells.push(text.slice(i, j));
        i = j;
        if (j >= n) return this.done(cells, line, inner, n);
      }
      // `c` is the comma or line end after the cell.
      i++;
      if (c === LF) return this.done(cells, line, inner, i);
      if (i >= n && !end) return -1;
    }
  }

  private done(record: string[], line: number, inner: number, next: number): number {
    this.queue.push({ record, line, lines: line + inner });
    return next;
  }
}

/**
 * csv-parse with the batch's options, its records queued as they are parsed; `write` resolves once
 * a chunk is parsed, `end` once the text ends. The first error is kept in `failure`.
 */
export function csvParser(queue: CsvRecord[]) {
  const state: { failure: unknown } = { failure: undefined };
  const parser = parse({
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    on_record: (record: string[], info: { lines: number }) => {
      // `lines` is the record's last line; newlines inside its cells say where it began.
      let inner = 0;
      for (const cell of record) if (cell.includes('\n')) inner += cell.split('\n').length - 1;
      queue.push({ record, line: info.lines - inner, lines: info.lines });
      return null;
    },
  });
  parser.on('error', (error) => {
    state.failure ??= error;
  });
  // Nothing is pushed to the parser's readable side; keep it flowing so writes complete.
  parser.resume();
  const write = (chunk?: string) =>
    new Promise<void>((resolve) => {
      const done = (error?: Error | null) => {
        if (error) state.failure ??= error;
        resolve();
      };
      if (parser.destroyed) return resolve();
      if (chunk === undefined) {
        parser.once('error', () => resolve());
        parser.end(() => resolve());
      } else parser.write(chunk, done);
    });
  return { state, write, destroy: () => parser.destroy() };
}

/**
 * The records of a CSV, pulled chunk by chunk: each chunk's records come out of this generator
 * together (one step of an async generator per chunk rather than per row), and before any error that
 * follows them: a stream async iterator would drop the records still buffered when the parser fails
 * (say, on an unclosed quote near the end), and those rows would be neither sent nor reported. Only
 * one chunk's records are held at a time, and the next chunk is read only once they are taken.
 */
export async function* csvRecords(input: Readable, label: string, guard: CsvGuard): AsyncGenerator<CsvRecord[]> {
  const queue: CsvRecord[] = [];
  const plain = new PlainCsv(queue);
  // csv-parse, from the first record that is not plain on.
  let parser: ReturnType<typeof csvParser> | undefined;
  let lastLine = 0;
  const feed = async (chunk: string | undefined) => {
    if (parser) return parser.write(chunk);
    const rest = plain.take(chunk ?? '', chunk === undefined);
    if (rest === undefined) return;
    parser = csvParser(queue);
    await parser.write(rest);
    if (chunk === undefined && !parser.state.failure) await parser.write();
  };
  const drain = function* () {
    if (queue.length === 0) return;
    lastLine = (queue[queue.length - 1] as CsvRecord).lines;
    yield queue.splice(0);
  };
  input.setEncoding('utf8');
  const text = input.pipe(guard);
  input.on('error', (error) => text.destroy(error));
  try {
    for await (const chunk of text as AsyncIterable<string>) {
      await feed(chunk);
      yield* drain();
      if (parser?.state.failure || guard.failure) break;
    }
    if (!parser?.state.failure && !guard.failure) await feed(undefined);
    yield* drain();
  } finally {
    // Stops reading the file: a record over the limits ends the run without reading the rest.
    input.unpipe(text);
    input.destroy();
    text.destroy();
    parser?.destroy();
  }
  if (parser?.state.failure) throw csvError(parser.state.failure, label, lastLine);
  if (guard.failure) throw guard.failure;
}

/** The line where the file breaks: for an unclosed quote, where the row that opened it begins. */
export function csvError(error: unknown, label: string, lastRecordLine: number): Error {
  const e = error as { code?: string; message?: string; lines?: number; index?: number };
  // csv-parse's codes start with CSV_, but for INVALID_OPENING_QUOTE.
  if (typeof e?.code === 'string' && /^(CSV_|INVALID_)/.test(e.code)) {
    const line = e.code === 'CSV_QUOTE_NOT_CLOSED' ? lastRecordLine + 1 : e.lines;
    const column = e.code !== 'CSV_QUOTE_NOT_CLOSED' && typeof e.index === 'number' ? `, column ${count(e.index + 1)}` : '';
    // csv-parse quotes the whole cell in some messages: cut to a readable length.
    const what = e.code === 'CSV_QUOTE_NOT_CLOSED' ? 'a quote opened in the row starting here is never closed' : excerpt(e.message ?? e.code);
    return new CsvReadError(`${label}${line ? ` line ${count(line)}${column}` : ''}: the CSV cannot be read: ${what}`, line);
  }
  return error as Error;
}
