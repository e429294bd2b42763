/**
 * The records of a batch's CSV, streamed by csv-parse within the limits of a claims file (its
 * `max_record_size`, and the length of a row in the file, its number of cells), with the lines an
 * editor shows, and the error of a CSV that breaks at a line.
 *
 * Memory path (docs/benchmarks.md#figures-behind-the-code, bench/claims-batch.mjs: the peak RSS of
 * --validate-only over 1,000,000 rows): records are taken from the parser's 'data' event, not its
 * on_record, and a slice of text is parsed at a time.
 */
import { type CsvError, type Info, parse } from 'csv-parse';
import { UsageError } from '../core/errors.js';
import { count } from '../text/count.js';
import { excerpt } from '../text/excerpt.js';
import { CSV_LIMITS } from './row-source.js';

/** How much text is parsed before its rows are handed on. */
const SLICE = 8_192;

/** One record: its cells, the line it begins on and the line it ends on. */
export interface CsvRecord {
  record: string[];
  line: number;
  lines: number;
}

/** The CSV breaks at `line`: rows before it were read, nothing from it on. */
export class CsvReadError extends UsageError {
  constructor(
    message: string,
    readonly line: number | undefined,
    hint = 'Fix the file (an unclosed quote is the usual cause) and run the same command again; rows already filed are skipped.',
  ) {
    super(message, hint);
  }
}

const ROW_HINT =
  'A row holds one claim: check the file around that line (an unclosed quote runs on to the end of the file). Rows before it were read; fix it and run the same command again: rows already filed are skipped.';

/**
 * The records of the CSV, pulled chunk by chunk: each chunk's records come out together (one step
 * per chunk rather than per row), and before any error that follows them, so the rows before a
 * break are sent and reported. The first record, the header, was read before the parser started (reader-csv.ts) and is skipped here.
 * Line numbers are the file's: csv-parse counts the CR and the LF of a line end inside a quoted
 * cell as two lines, and such a CRLF is read as one line feed, as it is between records.
 */
export async function* csvRecords(first: Buffer[], chunks: AsyncGenerator<Buffer>, delimiter: string, read: Read): AsyncGenerator<CsvRecord[]> {
  const queue: CsvRecord[] = [];
  const parser = parse({
    bom: true,
    delimiter,
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: true,
    skip_empty_lines: true,
    max_record_size: CSV_LIMITS.recordChars,
  });
  let failure: unknown;
  parser.on('error', (error) => {
    failure ??= error;
  });
  // Each record is taken as csv-parse pushes it (flowing, nothing buffered: the 'data' event comes
  // within the push), so the parser's info is the record's. Its on_record would build an info object
  // a record, which lives long enough to grow the old generation of a long batch.
  const take = recordTaker(queue, read);
  parser.on('data', (record: string[]) => {
    if (failure) return;
    try {
      take(record, parser.info);
    } catch (error) {
      failure = error;
    }
  });
  let fed = 0;
  const write = (chunk?: Buffer) =>
    new Promise<void>((resolve) => {
      if (parser.destroyed || failure) return resolve();
      if (chunk === undefined) {
        parser.once('error', () => resolve());
        parser.end(() => resolve());
        return;
      }
      fed += chunk.length;
      parser.write(chunk, (error) => {
        if (error) failure ??= error;
        resolve();
      });
    });
  try {
    let pending = first;
    for (;;) {
      for (const chunk of pending) {
        // A slice at a time: the rows of a whole chunk, held while each is checked and sent, would
        // live long enough to reach the old generation, which would grow until a full GC.
        for (let at = 0; at < chunk.length && !failure; at += SLICE) {
          await write(chunk.subarray(at, at + SLICE));
          if (queue.length) yield queue.splice(0);
        }
      }
      if (failure) break;
      failure = runaway(fed, parser.info, read);
      if (failure) break;
      const next = await chunks.next();
      if (next.done) {
        await write();
        if (queue.length) yield queue.splice(0);
        break;
      }
      pending = [next.value];
    }
  } finally {
    // Stops reading the file: a break ends the run without reading the rest.
    parser.destroy();
    await chunks.return(undefined);
  }
  if (failure) throw csvError(failure, read);
}

/**
 * Takes each record with the parser's info as it is pushed: queued with the lines it spans, as the
 * file counts them; the first record, the header (read before the parser starts), skipped; a row
 * over the cell limit refused.
 */
function recordTaker(queue: CsvRecord[], read: Read): (record: string[], info: Info) => void {
  // csv-parse's count of lines at the last record's end, and whether the header is still to come.
  let parsedLines = 0;
  let header = true;
  return (record, info) => {
    let breaks = info.lines - parsedLines - 1 - (info.empty_lines - read.empty);
    if (breaks > 0) {
      // A cell spans lines: its CRLFs become line feeds, and are one line each.
      for (let i = 0; i < record.length; i++) {
        const cell = record[i] as string;
        if (!cell.includes('\r')) continue;
        const pairs = cell.split('\r\n').length - 1;
        read.crlf += pairs;
        breaks -= pairs;
        record[i] = cell.replace(/\r\n?/g, '\n');
      }
    }
    parsedLines = info.lines;
    const lines = info.lines - read.crlf;
    read.line = lines;
    read.end = info.bytes;
    read.empty = info.empty_lines;
    if (header) {
      header = false;
      return;
    }
    if (record.length > CSV_LIMITS.columns) {
      throw new CsvReadError(
        `${read.label} line ${count(lines - breaks)}: the row has more than ${count(CSV_LIMITS.columns)} cells, the limit for a claims file (it has ${count(record.length)}).`,
        lines - breaks,
        ROW_HINT,
      );
    }
    queue.push({ record, line: lines - breaks, lines });
  };
}

/**
 * A row whose text in the file passed twice the length limit: csv-parse's limit counts the text of
 * its cells, which a row of empty cells (commas) never passes, so its length is bounded here.
 */
function runaway(fed: number, info: Info, read: Read): CsvReadError | undefined {
  const empty = info.empty_lines - read.empty;
  if (fed - read.end - 2 * empty <= 2 * CSV_LIMITS.recordChars) return undefined;
  const line = read.line + 1 + empty;
  const byte = read.fileBytes ? `, from byte ${count(read.end)}` : '';
  return new CsvReadError(
    `${read.label} line ${count(line)}: the row is longer than ${count(CSV_LIMITS.recordChars)} characters, the limit for one row of a claims file (it runs on past ${count(2 * CSV_LIMITS.recordChars)} bytes${byte}).`,
    line,
    ROW_HINT,
  );
}

/** Where the records read so far ended, for the messages of a break. */
export interface Read {
  label: string;
  /** The last record's last line, as the file counts it, and the quoted CRLFs csv-parse counted twice before it. */
  line: number;
  crlf: number;
  /** The byte after the last record, and csv-parse's count of empty lines then. */
  end: number;
  empty: number;
  /** The parser's bytes are the file's (UTF-8). */
  fileBytes: boolean;
}

/**
 * A csv-parse error as the line where the file breaks: for an unclosed quote, where the row that
 * opened it begins; for a row over the length limit, where it passed it.
 */
export function csvError(error: unknown, read: Read): Error {
  if (error instanceof CsvReadError) return error;
  const e = error as CsvError & { lines?: number; index?: number; bytes?: number; empty_lines?: number };
  // csv-parse's codes start with CSV_, but for INVALID_OPENING_QUOTE.
  if (typeof e?.code !== 'string' || !/^(CSV_|INVALID_)/.test(e.code)) return error as Error;
  const { label } = read;
  const line = e.code === 'CSV_QUOTE_NOT_CLOSED' ? read.line + 1 : typeof e.lines === 'number' ? e.lines - read.crlf : undefined;
  if (e.code === 'CSV_MAX_RECORD_SIZE' && line !== undefined) {
    const start = read.line + 1 + (typeof e.empty_lines === 'number' ? e.empty_lines - read.empty : 0);
    const column = (e.index ?? 0) + 1;
    // The byte where the limit was passed, counted from where its cell began: exact for unquoted cells.
    const cellStart = column > 1 && typeof e.bytes === 'number' ? e.bytes + 1 : read.end;
    const before = Math.max(0, cellStart - read.end - (column - 1));
    const byte = read.fileBytes ? `, byte ${count(cellStart + Math.max(0, CSV_LIMITS.recordChars - before))}` : '';
    return new CsvReadError(
      `${label} line ${count(start)}: the row is longer than ${count(CSV_LIMITS.recordChars)} characters, the limit for one row of a claims file (reached at line ${count(line)}, column ${count(column)}${byte}).`,
      start,
      ROW_HINT,
    );
  }
  const column = e.code !== 'CSV_QUOTE_NOT_CLOSED' && typeof e.index === 'number' ? `, column ${count(e.index + 1)}` : '';
  // csv-parse quotes the whole cell in some messages: cut to a readable length.
  const what = e.code === 'CSV_QUOTE_NOT_CLOSED' ? 'a quote opened in the row starting here is never closed' : excerpt(e.message ?? e.code);
  return new CsvReadError(`${label}${line ? ` line ${count(line)}${column}` : ''}: the CSV cannot be read: ${what}`, line);
}
