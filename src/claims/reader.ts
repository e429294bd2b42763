/**
 * The batch reader: the rows of a CSV, JSONL or JSON file (or standard input) made claim objects,
 * one at a time and only as fast as the caller pulls them (the CSV parser pauses the file stream),
 * so memory stays flat.
 */
import type { FieldIssue } from '../schemas.js';
import { isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { UsageError } from '../core/errors.js';
import { count } from '../text/count.js';
import { type CsvError, type Info, parse } from 'csv-parse';
import { excerpt, quoteInput, jsonProblem } from '../text/excerpt.js';
import { parse as parseSync } from 'csv-parse/sync';
import { CLAIM_FIELDS, type ClaimField, coerceText, FIELD_BY_KEY, getPath, setPath, spreadsheetDamage } from './fields.js';
import { inexactNumber, MAX_JSON_DEPTH, nestsTooDeep } from '../core/json-text.js';

/** The formats `claims file --from` reads (`--format`). */
export const INPUT_FORMATS = ['csv', 'jsonl', 'json'] as const;
type InputFormat = (typeof INPUT_FORMATS)[number];

/** One data row of the input, before schema validation. */
export interface SourceRow {
  /** 0-based position among data rows, for keeping output in input order. */
  seq: number;
  /** Line of the file where the row starts (JSON: the element's number, 1-based). */
  line: number;
  /** The value of the `--key` column, as read (undefined without --key, or when the cell is empty). */
  userKey?: string;
  /** The CSV cells as read (for `--out`). */
  cells?: string[];
  /** The claim object built from the row (not yet validated). */
  value: unknown;
  /** Problems found while reading or coercing the row; a row with issues is not sent. */
  issues: FieldIssue[];
}

export interface RowSource {
  format: InputFormat;
  /** The CSV header; undefined for JSONL and JSON. */
  header?: string[];
  /** The CSV's separator (told from its header, or `--delimiter`): the results file (`--out`) uses it too. */
  delimiter?: string;
  /** What a position is called in messages: "line" or "item". */
  unit: 'line' | 'item';
  rows: AsyncGenerator<SourceRow>;
}

interface OpenOptions {
  /** The profile's store id, used when a row leaves storeId out. */
  defaultStoreId?: string;
  /** `--key COLUMN`: the user's identifier column (a field path, or a column the API does not know: not sent). */
  keyColumn?: string;
  /** Name of the input in messages. */
  label: string;
  /** `--delimiter`: the CSV's separator; told from the header when not given. */
  delimiter?: string;
}

/** Limits of one record: a claim row is a few hundred characters and ~40 columns; past these the file is refused without reading on. */
export const CSV_LIMITS = { recordChars: 1_048_576, columns: 1_000 } as const;

/** storeId defaults to the profile's store. */
function applyDefaults(value: Record<string, unknown>, options: OpenOptions): void {
  if ((value.storeId === undefined || value.storeId === '') && options.defaultStoreId) value.storeId = options.defaultStoreId;
}

/** Picks the format from the flag or the file name; a usage error when neither tells. */
export function detectFormat(from: string, flag: string | undefined): InputFormat {
  if (flag) {
    const f = flag.toLowerCase();
    if (f === 'csv' || f === 'jsonl' || f === 'json') return f;
    if (f === 'ndjson') return 'jsonl';
    throw new UsageError(`Unknown --format "${flag}".`, 'Use --format csv, jsonl or json.');
  }
  if (from === '-') throw new UsageError('Reading claims from standard input needs --format.', 'Pass --format csv, jsonl or json.');
  const lower = from.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson')) return 'jsonl';
  if (lower.endsWith('.json')) return 'json';
  throw new UsageError(`Cannot tell the format of "${from}" from its name.`, 'Name it .csv, .jsonl or .json, or pass --format csv|jsonl|json.');
}

/** Opens a row source over a stream; the CSV header is read and checked before this resolves. */
export async function openSource(input: Readable, format: InputFormat, options: OpenOptions): Promise<RowSource> {
  if (format === 'csv') return openCsv(input, options);
  if (format === 'jsonl') return { format, unit: 'line', rows: jsonlRows(input, options) };
  return { format, unit: 'item', rows: await jsonRows(input, options) };
}

// The text of a batch file: UTF-8 (checked by `isUtf8`) or UTF-16 told by its byte order mark
// (PowerShell 5.1's `>` and Excel's "Unicode Text" write UTF-16LE), decoded by TextDecoder. A byte
// that is not part of a character is refused, never made U+FFFD; another encoding is refused naming
// it. A file is checked whole before its first row (`checkFileText`), standard input as read.
/** The encodings opcli reads, as TextDecoder names them. */
type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be';

/** What to do about a file in an encoding opcli does not read. */
const SAVE_AS_UTF8 =
  'Save it as UTF-8 and run again: in Excel, File > Save As > "CSV UTF-8 (Comma delimited) (*.csv)"; in Numbers or LibreOffice, export it as CSV with the character set Unicode (UTF-8). Nothing was sent.';

/** The encoding a file's first bytes name, and its name in messages. */
interface Sniffed {
  encoding: TextEncoding;
  name: string;
}

/** The encoding a file's first bytes (its first chunk, at least 4 bytes unless the file is shorter) name; a refusal for one opcli does not read. */
function sniff(head: Buffer, label: string): Sniffed {
  const at = (i: number, ...bytes: number[]) => bytes.every((b, j) => head[i + j] === b);
  const refuse = (name: string) => new UsageError(`${label} is in ${name}, an encoding opcli does not read: save it as UTF-8.`, SAVE_AS_UTF8);
  if (at(0, 0xff, 0xfe, 0, 0)) throw refuse('UTF-32LE');
  if (at(0, 0, 0, 0xfe, 0xff)) throw refuse('UTF-32BE');
  if (at(0, 0xff, 0xfe)) return { encoding: 'utf-16le', name: 'UTF-16LE' };
  if (at(0, 0xfe, 0xff)) return { encoding: 'utf-16be', name: 'UTF-16BE' };
  // Text never holds NUL: zero bytes among the first are the other half of UTF-16 (or UTF-32) characters.
  const zero = head.subarray(0, 512).indexOf(0);
  if (zero !== -1) throw refuse(`UTF-16${zero % 2 === 1 ? 'LE' : 'BE'} or UTF-32 without a byte order mark (byte ${count(zero)} is zero)`);
  return UTF8;
}

const UTF8: Sniffed = { encoding: 'utf-8', name: 'UTF-8' };

/** A file's text as UTF-8, chunk by chunk, and whether the CSV parser's byte positions are the file's. */
interface TextChunks {
  /** UTF-8 bytes of whole characters: a chunk never ends inside one. */
  chunks: AsyncGenerator<Buffer>;
  /** False for UTF-16: the text is handed on as UTF-8, whose byte offsets are not the file's. */
  fileBytes: boolean;
}

/** The text of `input` as UTF-8: UTF-8 as read, its byte order mark kept (csv-parse's `bom` counts its bytes); UTF-16 decoded. */
async function decodeText(input: Readable, label: string): Promise<TextChunks> {
  const source = input[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const first: Buffer[] = [];
  let size = 0;
  let ended = false;
  while (size < 4) {
    const next = await source.next();
    if (next.done) {
      ended = true;
      break;
    }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    first.push(chunk);
    size += chunk.length;
  }
  const head = Buffer.concat(first);
  let sniffed: Sniffed;
  try {
    sniffed = sniff(head, label);
  } catch (error) {
    input.destroy();
    throw error;
  }
  async function* chunks(): AsyncGenerator<Buffer> {
    const where = { bytes: 0, lines: 1 };
    const take = takerFor(sniffed, where, label);
    try {
      let chunk: Buffer = head;
      let end = ended;
      for (;;) {
        const text = take(chunk, end);
        if (text.length) yield text;
        if (end) return;
        const next = await source.next();
        chunk = next.done ? Buffer.alloc(0) : typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
        end = next.done === true;
      }
    } finally {
      input.destroy();
    }
  }
  return { chunks: chunks(), fileBytes: sniffed.encoding === 'utf-8' };
}

/** Where the text read so far ends: its bytes in the file, and the line the next byte is on. */
interface Where {
  bytes: number;
  lines: number;
}

/** Takes a chunk of the file (`end`: its last) and hands on the UTF-8 of its whole characters; refuses one that does not decode. */
type Take = (chunk: Buffer, end: boolean) => Buffer;

function takerFor(sniffed: Sniffed, where: Where, label: string): Take {
  return sniffed.encoding === 'utf-8' ? utf8Text(where, label) : utf16Text(sniffed, where, label);
}

/** UTF-8 checked without decoding it: the chunk up to its last whole character (lead bytes: RFC 3629), the rest kept for the next. */
function utf8Text(where: Where, label: string): Take {
  let carry: Buffer | undefined;
  return (chunk, end) => {
    const data = carry?.length ? Buffer.concat([carry, chunk]) : chunk;
    let cut = data.length;
    for (let i = data.length - 1; !end && i >= Math.max(0, data.length - 3); i--) {
      const b = data[i] as number;
      if ((b & 0xc0) === 0x80) continue;
      if (i + (b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1) > data.length) cut = i;
      break;
    }
    const text = data.subarray(0, cut);
    // A copy: the chunk's buffer may be read into again.
    carry = Buffer.from(data.subarray(cut));
    if (!isUtf8(text)) throw notDecodable(text, where, UTF8, label);
    where.bytes += text.length;
    where.lines += lineEnds(text, 'utf-8');
    return text;
  };
}

/** UTF-16 decoded by TextDecoder (fatal: an unpaired surrogate is refused), handed on as UTF-8. */
function utf16Text(sniffed: Sniffed, where: Where, label: string): Take {
  const decoder = new TextDecoder(sniffed.encoding, { fatal: true });
  return (chunk, end) => {
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: !end });
    } catch {
      throw notDecodable(chunk, where, sniffed, label);
    }
    where.bytes += chunk.length;
    where.lines += lineEnds(chunk, sniffed.encoding);
    return Buffer.from(text);
  };
}

/** The line feeds of a chunk (in UTF-16, a 0x0A byte may be half of another character: counted when aligned). */
export function lineEnds(chunk: Buffer, encoding: TextEncoding): number {
  let n = 0;
  for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
    if (encoding === 'utf-8' || chunk[i + (encoding === 'utf-16le' ? 1 : -1)] === 0) n++;
  }
  return n;
}

/** The refusal of a chunk that does not decode: its first bad byte, the first U+FFFD of a non-fatal decode the file does not hold. */
function notDecodable(chunk: Buffer, where: Where, sniffed: Sniffed, label: string): UsageError {
  // UTF-8 comes here in whole characters; a UTF-16 chunk may begin with the second byte of one.
  const skip = sniffed.encoding === 'utf-8' ? 0 : where.bytes % 2;
  const text = new TextDecoder(sniffed.encoding, { ignoreBOM: true }).decode(chunk.subarray(skip));
  const genuine = Buffer.from('\ufffd', sniffed.encoding === 'utf-8' ? 'utf8' : 'utf16le');
  if (sniffed.encoding === 'utf-16be') genuine.swap16();
  let offset = 0;
  for (let i = text.indexOf('\ufffd'); i !== -1; i = text.indexOf('\ufffd', i + 1)) {
    offset = skip + (sniffed.encoding === 'utf-8' ? Buffer.byteLength(text.slice(0, i)) : 2 * i);
    if (!chunk.subarray(offset, offset + genuine.length).equals(genuine)) break;
  }
  const line = where.lines + lineEnds(chunk.subarray(0, offset), sniffed.encoding);
  const byte = where.bytes + offset;
  const legacy = sniffed.encoding === 'utf-8' ? ' (a legacy encoding such as Windows-1252, which Excel\'s "CSV (Comma delimited)" writes, or Mac Roman)' : '';
  return new UsageError(
    `${label} line ${count(line)}: byte ${count(byte)} (0x${(chunk[offset] ?? 0).toString(16).toUpperCase().padStart(2, '0')}) is not part of a ${sniffed.name} character: the file is not ${sniffed.name}${legacy}.`,
    SAVE_AS_UTF8,
  );
}

/** Reads a whole file before any row is, so one opcli cannot decode sends nothing wherever its bad byte is; one buffer, reused. */
export async function checkFileText(path: string, label: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(64 * 1024);
    let take: Take | undefined;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      const chunk = buffer.subarray(0, bytesRead);
      // The first read holds the byte order mark unless the file is shorter than 4 bytes: it is then whole.
      take ??= takerFor(sniff(chunk, label), { bytes: 0, lines: 1 }, label);
      take(chunk, bytesRead === 0);
      if (bytesRead === 0) return;
    }
  } finally {
    await handle.close();
  }
}

// The records of a batch's CSV, streamed by csv-parse within the limits of a claims file, with the
// lines an editor shows. Memory path (bench/claims-batch.mjs): records are taken from the parser's
// 'data' event, not on_record, a slice at a time.
/** How much text is parsed before its rows are handed on. */
const SLICE = 8_192;

/** One record: its cells, the line it begins on and the line it ends on. */
interface CsvRecord {
  record: string[];
  line: number;
  lines: number;
}

/** The CSV breaks at `line`: rows before it were read, nothing from it on. */
class CsvReadError extends UsageError {
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
 * The records of the CSV, a chunk's together and before any error after them, so the rows before a
 * break are sent. The header (readHead) is skipped. Line numbers are the file's: csv-parse counts a
 * quoted CRLF as two lines; it is read as one line feed.
 */
async function* csvRecords(first: Buffer[], chunks: AsyncGenerator<Buffer>, delimiter: string, read: Read): AsyncGenerator<CsvRecord[]> {
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

/** Takes each record as it is pushed, with the lines it spans as the file counts them; skips the header; refuses too many cells. */
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

/** A row past twice the length limit in the file: csv-parse counts only cells' text, which a row of commas never passes. */
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
interface Read {
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

/** A csv-parse error as the line where the file breaks (an unclosed quote: where its row begins; a long row: where it passed). */
function csvError(error: unknown, read: Read): Error {
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

// The CSV reader: separator told from the header (or --delimiter), header checked, each row built.
// Fast path (bench/claims-batch.mjs): `row` runs for every claim row; each column's place in the
// claim is worked out once, from the header.
/** The separators told from a header, in the order a tie is settled. */
const SEPARATORS = [',', ';', '\t'] as const;
/** How a separator is named in messages. */
const SEPARATOR_NAMES: Record<string, string> = { ',': 'comma (,)', ';': 'semicolon (;)', '\t': 'tab' };

/** The header: its cells, where it is (its line, and its first byte when the parser's bytes are the file's), and where each cell begins. */
interface Header {
  cells: string[];
  line: number;
  byte: number | undefined;
  starts: number[];
}

const HEADER_HINT =
  'The header names the columns, one claim field each (`opcli claims template --csv` prints them): check that this is the claims file and that its lines end with newlines. Nothing was sent.';

/** Opens a CSV batch: its text decoded, its header read and checked before this resolves; the rows are read as they are pulled. */
export async function openCsv(input: Readable, options: OpenOptions): Promise<RowSource> {
  const { chunks, fileBytes } = await decodeText(input, options.label);
  const head = await readHead(chunks);
  if (!head.header) {
    await chunks.return(undefined);
    throw new UsageError(
      `${options.label} is empty: expected a header row of field paths.`,
      'Run `opcli claims template --csv` for a header and an example row.',
    );
  }
  let delimiter: string;
  let names: string[];
  let fields: (ClaimField | undefined)[];
  try {
    delimiter = options.delimiter ?? detectSeparator(head.header.text, options);
    const header = readHeader(head.header, delimiter, fileBytes, options.label);
    names = header.cells.map((h) => h.trim());
    fields = checkHeader(names, options, header, delimiter);
  } catch (error) {
    // Stops reading the file.
    await chunks.return(undefined);
    throw error;
  }
  const keyIndex = options.keyColumn === undefined ? -1 : names.indexOf(options.keyColumn);
  const coercion = { decimalComma: delimiter === ';' };
  const it = csvRecords(head.read, chunks, delimiter, { label: options.label, line: 0, crlf: 0, end: 0, empty: 0, fileBytes });
  async function* rows(): AsyncGenerator<SourceRow> {
    let seq = 0;
    try {
      for (;;) {
        const next = await it.next();
        if (next.done) return;
        for (const { record, line } of next.value) yield row(record, line, seq++);
      }
    } finally {
      // Stops reading the file when the rows are not all taken.
      await it.return(undefined);
    }
  }
  /** A record made a row: its claim built from its cells. */
  function row(record: string[], line: number, seq: number): SourceRow {
    const issues: FieldIssue[] = [];
    const value: Record<string, unknown> = {};
    if (record.length !== names.length) {
      issues.push({ path: '', message: `expected ${names.length} cells (one per column), got ${record.length}` });
    }
    const n = Math.min(record.length, fields.length);
    for (let i = 0; i < n; i++) {
      const field = fields[i];
      if (!field) continue;
      const { value: v, issue } = coerceText(field, record[i] as string, coercion);
      if (issue) issues.push(issue);
      else if (v !== undefined) setPath(value, field.path, v);
    }
    applyDefaults(value, options);
    const userKey = keyIndex >= 0 ? record[keyIndex]?.trim() || undefined : undefined;
    return { seq, line, cells: record, value, issues, userKey };
  }
  return { format: 'csv', header: names, delimiter, unit: 'line', rows: rows() };
}

/** The header's line as read before the parser starts: its text (cut at the limit when longer), line, first byte, and whether it is whole. */
interface HeadLine {
  text: string;
  bytes: Buffer;
  line: number;
  byte: number;
  complete: boolean;
}

/** Reads up to the end of the header (the first line not empty) or the length limit; `read` keeps it all for the parser. */
async function readHead(chunks: AsyncGenerator<Buffer>): Promise<{ read: Buffer[]; header?: HeadLine }> {
  const read: Buffer[] = [];
  let text: Buffer = Buffer.alloc(0);
  let start = -1;
  let line = 1;
  let i = 0;
  for (;;) {
    const next = await chunks.next();
    if (!next.done) {
      const chunk = next.value;
      read.push(chunk);
      text = text.length ? Buffer.concat([text, chunk]) : chunk;
    }
    if (start === -1) {
      // A byte order mark, then line ends (CRLF, LF or CR), before the header.
      if (i === 0 && text[0] === 0xef && text[1] === 0xbb && text[2] === 0xbf) i = 3;
      for (; i < text.length && (text[i] === 10 || text[i] === 13); i++) {
        if (text[i] === 13 && i + 1 === text.length && !next.done) break;
        if (text[i] === 10 || text[i + 1] !== 10) line++;
      }
      if (i < text.length && text[i] !== 13) start = i;
    }
    if (start !== -1) {
      const lf = text.indexOf(10, start);
      const cr = text.indexOf(13, start);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      const over = (end === -1 ? text.length : end) - start > CSV_LIMITS.recordChars;
      if (end !== -1 || next.done || over) {
        const bytes = text.subarray(start, Math.min(end === -1 ? text.length : end, start + CSV_LIMITS.recordChars));
        return { read, header: { text: bytes.toString('utf8'), bytes, line, byte: start, complete: !over } };
      }
    }
    if (next.done) return { read };
  }
}

/**
 * CHOICE (docs/spec-choices.md#csv-separators): the separator of a file is told from its header:
 * of comma, semicolon and tab, the one that splits it into the most claim field names (or the --key
 * column); of those tied, the one the header holds; none: comma (a header of one column). Two held
 * and tied cannot be told apart: refused, naming them.
 */
function detectSeparator(header: string, options: OpenOptions): string {
  const known = (cell: string) => FIELD_BY_KEY.has(cell.trim()) || cell.trim() === options.keyColumn;
  // A header of claim fields is a few hundred characters: a longer one is told by its start.
  const start = header.slice(0, 65_536);
  const splits = SEPARATORS.map((separator) => {
    const cells = splitHeader(start, separator);
    return { separator, cells: cells.length, known: cells.filter(known).length };
  });
  const best = Math.max(...splits.map((s) => s.known));
  const held = splits.filter((s) => s.known === best && s.cells > 1);
  if (held.length === 1) return (held[0] as (typeof splits)[number]).separator;
  if (held.length === 0) return ',';
  throw new UsageError(
    `${options.label}: the separator between the header's columns cannot be told: it holds ${held.map((s) => `${SEPARATOR_NAMES[s.separator]} (${count(s.cells - 1)})`).join(' and ')}, and neither splits it into more claim field names.`,
    `Pass the separator with --delimiter (for example --delimiter ';' or --delimiter tab); the header's columns are claim field paths such as customer.email (\`opcli claims template --csv\`). Nothing was sent.`,
  );
}

/** The cells of a header line split on `separator` by csv-parse (none when it cannot be read so). */
function splitHeader(text: string, separator: string): string[] {
  try {
    return (parseSync(text, { delimiter: separator, relax_quotes: true, relax_column_count: true, bom: true }) as string[][])[0] ?? [];
  } catch {
    return [];
  }
}

/** The header's cells and the byte each begins at (from csv-parse's `bytes` in a cast), refused over the limits of a claims file. */
function readHeader(head: HeadLine, delimiter: string, fileBytes: boolean, label: string): Header {
  let cells: string[] = [];
  const starts = [0];
  const cast = (value: string, context: { bytes: number }) => {
    if (starts.length <= CSV_LIMITS.columns) starts.push(context.bytes + Buffer.byteLength(delimiter));
    return value;
  };
  try {
    cells = (parseSync(head.bytes, { delimiter, relax_column_count: true, cast }) as string[][])[0] ?? [];
  } catch (error) {
    if (head.complete) throw csvError(error, { label, line: head.line - 1, crlf: 0, end: head.byte, empty: 0, fileBytes });
  }
  const header: Header = { cells, line: head.line, byte: fileBytes ? head.byte : undefined, starts };
  const at = (column: number) => `line ${count(head.line)}${header.byte === undefined ? '' : `, byte ${count(header.byte + (starts[column - 1] ?? 0))}`}`;
  if (cells.length > CSV_LIMITS.columns) {
    throw new CsvReadError(
      `${label} line ${count(head.line)}: the header has more than ${count(CSV_LIMITS.columns)} columns, the limit for a claims file (column ${count(CSV_LIMITS.columns + 1)} starts at ${at(CSV_LIMITS.columns + 1)}).`,
      head.line,
      HEADER_HINT,
    );
  }
  if (!head.complete && head.bytes.length >= CSV_LIMITS.recordChars) {
    const byte = header.byte === undefined ? '' : `, byte ${count(header.byte + CSV_LIMITS.recordChars)}`;
    throw new CsvReadError(
      `${label} line ${count(head.line)}: the header is longer than ${count(CSV_LIMITS.recordChars)} characters, the limit for one row of a claims file (reached at line ${count(head.line)}, column ${count(Math.max(1, cells.length))}${byte}).`,
      head.line,
      HEADER_HINT,
    );
  }
  return header;
}

/** "column 3, byte 57" for a cell of the header (1-based column), the byte when the file's bytes are known. */
function headerCellAt(header: Header, column: number): string {
  const start = header.starts[column - 1];
  if (header.byte === undefined || start === undefined) return `column ${count(column)}`;
  return `column ${count(column)}, byte ${count(header.byte + start)}`;
}

/** Every column names a claim field or the --key column (mapped to undefined); required fields need one (storeId: the profile's). */
function checkHeader(header: string[], options: OpenOptions, raw: Header, delimiter: string): (ClaimField | undefined)[] {
  const at = `${options.label} line ${count(raw.line)}`;
  if (options.keyColumn !== undefined && !header.includes(options.keyColumn)) {
    throw new UsageError(
      `${at}: there is no column ${quoteInput(options.keyColumn)} for --key.`,
      `Columns are: ${listCut(header.map((h) => excerpt(h, 60)))}.`,
    );
  }
  const unknown: number[] = [];
  for (let i = 0; i < header.length; i++) {
    const h = header[i] as string;
    if (!FIELD_BY_KEY.has(h) && h !== options.keyColumn) unknown.push(i);
  }
  if (unknown.length) {
    const named = listCut(unknown.map((i) => `${quoteInput(header[i], 60)} (${headerCellAt(raw, i + 1)})`));
    throw new UsageError(
      `${at}: unknown column${unknown.length > 1 ? 's' : ''} ${named}; columns are claim field paths such as customer.email or item.price.`,
      `The columns were split on the ${SEPARATOR_NAMES[delimiter] ?? JSON.stringify(delimiter)}${options.delimiter === undefined ? ', told from the header; --delimiter gives another separator' : ''}. Run \`opcli claims template --csv\` to see every column.`,
    );
  }
  const seen = new Map<string, number>();
  for (let i = 0; i < header.length; i++) {
    const h = header[i] as string;
    const first = seen.get(h);
    if (first !== undefined) {
      throw new UsageError(`${at}: the column ${quoteInput(h)} appears twice (${headerCellAt(raw, first + 1)}, and ${headerCellAt(raw, i + 1)}).`);
    }
    seen.set(h, i);
  }
  const missing = CLAIM_FIELDS.filter((f) => f.required && !seen.has(f.key) && !(f.key === 'storeId' && options.defaultStoreId));
  if (missing.length) {
    throw new UsageError(
      `${at}: missing required column${missing.length > 1 ? 's' : ''} ${missing.map((m) => m.key).join(', ')}.`,
      missing.some((m) => m.key === 'storeId')
        ? "Add the columns, or set the profile's store with `opcli config set store-id …` to default storeId."
        : 'Add the columns; `opcli claims template --csv` prints them all.',
    );
  }
  return header.map((h) => FIELD_BY_KEY.get(h));
}

/** Items joined with ", " up to about 200 characters, then "and N more". */
function listCut(items: string[], max = 200): string {
  let text = '';
  let i = 0;
  for (; i < items.length; i++) {
    const next = `${text ? ', ' : ''}${items[i]}`;
    if (text && text.length + next.length > max) break;
    text += next;
  }
  return i < items.length ? `${text} and ${count(items.length - i)} more` : text;
}

// The JSONL reader (streamed, a line per claim) and the JSON reader (an array read whole: small batches).
/** Strings in JSON input are coerced and checked as CSV cells are (numbers, booleans, dates, spreadsheet damage). */
function coerceObject(value: Record<string, unknown>): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const field of CLAIM_FIELDS) {
    const coerces = field.type === 'number' || field.type === 'boolean' || field.format === 'datetime';
    if (!coerces && field.type !== 'string') continue;
    const v = getPath(value, field.path);
    if (typeof v !== 'string') continue;
    if (!coerces) {
      const damage = spreadsheetDamage(field, v.trim());
      if (damage) issues.push({ path: field.key, message: damage });
      continue;
    }
    // A date alone, or a day-month form, as a CSV cell's; a date-time already written so is left as written.
    const { value: coerced, issue } = coerceText(field, v);
    if (issue) issues.push(issue);
    else if (coerced !== undefined && (field.type !== 'string' || coerced !== v.trim())) setPath(value, field.path, coerced);
  }
  return issues;
}

function removePath(value: Record<string, unknown>, path: string[]): void {
  const parent = getPath(value, path.slice(0, -1));
  if (parent && typeof parent === 'object') delete (parent as Record<string, unknown>)[path[path.length - 1] as string];
}

function objectRow(seq: number, line: number, parsed: unknown, options: OpenOptions): SourceRow {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { seq, line, value: parsed, issues: [{ path: '', message: 'expected a JSON object (one claim)' }] };
  }
  const value = parsed as Record<string, unknown>;
  let userKey: string | undefined;
  if (options.keyColumn !== undefined) {
    const path = options.keyColumn.split('.');
    const raw = getPath(value, path);
    if (typeof raw === 'string' || typeof raw === 'number') userKey = String(raw).trim() || undefined;
    // A key the API does not know is the user's own: it is not sent.
    if (!FIELD_BY_KEY.has(options.keyColumn)) removePath(value, path);
  }
  const issues = coerceObject(value);
  applyDefaults(value, options);
  return { seq, line, value, issues, userKey };
}

/** The lines of a JSONL stream with where each begins; a line over `CSV_LIMITS.recordChars` is refused without reading on. */
async function* jsonLines(input: Readable, label: string): AsyncGenerator<{ text: string; line: number; byte: number }> {
  const max = CSV_LIMITS.recordChars;
  const { chunks } = await decodeText(input, label);
  let buffer = '';
  let line = 1;
  let byte = 0;
  try {
    for await (const chunk of chunks) {
      // Whole characters: each chunk reads alone.
      buffer += chunk.toString('utf8');
      let from = 0;
      for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n', from)) {
        const text = buffer.slice(from, nl);
        if (text.length > max + 1) break;
        yield { text: text.endsWith('\r') ? text.slice(0, -1) : text, line, byte };
        byte += Buffer.byteLength(text) + 1;
        line++;
        from = nl + 1;
      }
      buffer = buffer.slice(from);
      const open = buffer.indexOf('\n');
      if ((open === -1 ? buffer.length : open) > max + 1) {
        throw new UsageError(
          `${label} line ${count(line)}: the line is longer than ${count(max)} characters, the limit for one claim (reached at line ${count(line)}, column ${count(max + 1)}, byte ${count(byte + Buffer.byteLength(buffer.slice(0, max)))}).`,
          'Each line holds one claim as a JSON object: check that this is the claims file and that its lines end with newlines. Lines before it were read; fix it and run the same command again: rows already filed are skipped.',
        );
      }
    }
    if (buffer !== '') yield { text: buffer.endsWith('\r') ? buffer.slice(0, -1) : buffer, line, byte };
  } finally {
    input.destroy();
  }
}

async function* jsonlRows(input: Readable, options: OpenOptions): AsyncGenerator<SourceRow> {
  let seq = 0;
  for await (const { text, line, byte } of jsonLines(input, options.label)) {
    const trimmed = text.trim();
    if (trimmed === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (error) {
      const lead = text.length - text.trimStart().length;
      const where = { line: line - 1, column: lead, byte: byte + Buffer.byteLength(text.slice(0, lead)) };
      yield { seq: seq++, line, value: undefined, issues: [{ path: '', message: `not valid JSON: ${jsonProblem(error, trimmed, where)}` }] };
      continue;
    }
    const refused = numberIssue(trimmed) ?? depthIssue(parsed);
    yield refused ? { seq: seq++, line, value: undefined, issues: [refused] } : objectRow(seq++, line, parsed, options);
  }
}

/** A number JSON.parse rounded (19.999999999999999999 read as 20): refused, never sent rounded. */
function numberIssue(text: string): FieldIssue | undefined {
  const inexact = inexactNumber(text);
  if (inexact === undefined) return undefined;
  return {
    path: '',
    message: `the number ${inexact.literal} has more digits than a number holds exactly (at most 15 significant digits), and would be sent as ${inexact.sent}`,
  };
}

/** A claim nested deeper than any claim is: every walk after the parse would overflow the stack. */
function depthIssue(parsed: unknown): FieldIssue | undefined {
  if (!nestsTooDeep(parsed)) return undefined;
  return { path: '', message: `nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep, the most opcli reads` };
}

/** A .json file: an array of claims (or one claim). Read whole: JSON arrays are for small batches. */
async function jsonRows(input: Readable, options: OpenOptions): Promise<AsyncGenerator<SourceRow>> {
  const parts: string[] = [];
  for await (const chunk of (await decodeText(input, options.label)).chunks) parts.push(chunk.toString('utf8'));
  const text = parts.join('').replace(/^\ufeff/, '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${options.label} is not valid JSON: ${jsonProblem(error, text)}`,
      'Use a JSON array of claims, or JSONL (one claim per line) for large batches.',
    );
  }
  const refused = numberIssue(text);
  if (refused) throw new UsageError(`${options.label}: ${refused.message}.`, 'Write the number as it should be sent; nothing was sent.');
  const items = Array.isArray(parsed) ? parsed : [parsed];
  async function* rows(): AsyncGenerator<SourceRow> {
    for (const [i, item] of items.entries()) {
      const deep = depthIssue(item);
      yield deep ? { seq: i, line: i + 1, value: undefined, issues: [deep] } : objectRow(i, i + 1, item, options);
    }
  }
  return rows();
}
