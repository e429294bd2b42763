/**
 * The batch reader: CSV, JSONL or JSON rows turned into claim objects, one at a time and only as
 * fast as the caller pulls them (the CSV parser pauses the file stream), so memory stays flat.
 */
import { type Readable, Transform } from 'node:stream';
import { UsageError } from '../errors.js';
import type { FieldIssue } from '../schemas.js';
import { count } from '../text/count.js';
import { excerpt, jsonProblem, quoteInput } from '../text/excerpt.js';
import { CLAIM_FIELDS, type ClaimField, coerceText, FIELD_BY_KEY, getPath, setPath, spreadsheetDamage } from './fields.js';

/** The formats `claims file --from` reads (`--format`). */
export const INPUT_FORMATS = ['csv', 'jsonl', 'json'] as const;
export type InputFormat = (typeof INPUT_FORMATS)[number];

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
  /** What a position is called in messages: "line" or "item". */
  unit: 'line' | 'item';
  rows: AsyncGenerator<SourceRow>;
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

export interface OpenOptions {
  /** The profile's store id, used when a row leaves storeId out. */
  defaultStoreId?: string;
  /** `--key COLUMN`: the user's identifier column (a field path, or a column the API does not know: not sent). */
  keyColumn?: string;
  /** Name of the input in messages. */
  label: string;
}

/** Opens a row source over a stream; the CSV header is read and checked before this resolves. */
export async function openSource(input: Readable, format: InputFormat, options: OpenOptions): Promise<RowSource> {
  if (format === 'csv') return openCsv(input, options);
  if (format === 'jsonl') return { format, unit: 'line', rows: jsonlRows(input, options) };
  return { format, unit: 'item', rows: await jsonRows(input, options) };
}

/**
 * Limits of one CSV record (the header or a row). A claim row is a few hundred characters and about
 * 40 columns; past these the file is not a claims file (a 100 MB line with no newline, a million
 * columns), and it is refused as soon as the limit is reached, without reading the rest.
 */
export const CSV_LIMITS = { recordChars: 1_048_576, columns: 1_000 } as const;

/** Where the header (the first non-empty record) is, and its raw text, for the positions of its cells. */
interface HeaderText {
  text: string;
  line: number;
  byte: number;
}

/**
 * Watches the CSV text on its way to the parser: refuses a record over `CSV_LIMITS` the moment it
 * gets there, keeps the header's raw text, and turns CRLF into LF (csv-parse miscounts lines when
 * a quoted cell holds a CRLF, and the line numbers are what users look up; a CRLF inside a quoted
 * cell becomes a plain newline). Quotes toggle the quoted state, which `""` inside a quoted cell
 * leaves as it was, so commas and newlines in cells are not counted.
 */
class CsvGuard extends Transform {
  /** Set when a record broke a limit: the text before that record was passed on, nothing after. */
  failure: CsvReadError | undefined;
  header: HeaderText | undefined;
  private carry = '';
  private line = 1;
  private bytes = 0;
  private quoted = false;
  private recordLine = 1;
  private recordChars = 0;
  private columns = 1;
  // The header's text while it is read, and where its record began.
  private headerText = '';
  private headerByte = 0;

  constructor(private readonly label: string) {
    super({ decodeStrings: false });
  }

  override _transform(chunk: Buffer | string, _enc: BufferEncoding, done: (error?: Error | null, data?: string) => void): void {
    if (this.failure) {
      done();
      return;
    }
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    const { recordChars: maxChars, columns: maxColumns } = CSV_LIMITS;
    let recordStart = 0;
    let headerFrom = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10) {
        this.line++;
        if (!this.quoted) {
          if (!this.header) {
            this.headerText += text.slice(headerFrom, i);
            headerFrom = i + 1;
            if (this.recordChars > 0) this.header = { text: this.headerText, line: this.recordLine, byte: this.headerByte };
            else {
              this.headerText = '';
              this.headerByte = this.bytes + Buffer.byteLength(text.slice(0, i + 1));
            }
          }
          this.recordLine = this.line;
          this.recordChars = 0;
          this.columns = 1;
          recordStart = i + 1;
          continue;
        }
      } else if (c === 34) this.quoted = !this.quoted;
      else if (c === 44 && !this.quoted && ++this.columns > maxColumns) {
        this.fail(text, recordStart, i, 'columns', done);
        return;
      }
      // A CR before LF is not part of the record (an empty CRLF line stays empty).
      if (c !== 13 && ++this.recordChars > maxChars) {
        this.fail(text, recordStart, i, 'chars', done);
        return;
      }
    }
    if (!this.header) this.headerText += text.slice(headerFrom);
    this.bytes += Buffer.byteLength(text);
    done(null, this.crlf(text));
  }

  override _flush(done: (error?: Error | null, data?: string) => void): void {
    done(null, this.failure ? '' : this.carry);
  }

  /** CRLF to LF, with a CR at the end of a chunk held until the next one shows what follows it. */
  private crlf(chunk: string): string {
    let text = this.carry + chunk;
    this.carry = '';
    if (text.endsWith('\r')) {
      this.carry = '\r';
      text = text.slice(0, -1);
    }
    return text.replace(/\r\n/g, '\n');
  }

  /** Passes on the records before the one that broke a limit, and keeps the error for the reader. */
  private fail(text: string, recordStart: number, at: number, what: 'chars' | 'columns', done: (error?: Error | null, data?: string) => void): void {
    const byte = this.bytes + Buffer.byteLength(text.slice(0, at));
    const header = !this.header;
    const where = `line ${count(this.line)}, column ${count(this.columns)}, byte ${count(byte)}`;
    const record = header ? 'the header' : 'the row';
    const message =
      what === 'chars'
        ? `${this.label} line ${count(this.recordLine)}: ${record} is longer than ${count(CSV_LIMITS.recordChars)} characters, the limit for one row of a claims file (reached at ${where}).`
        : `${this.label} line ${count(this.recordLine)}: ${record} has more than ${count(CSV_LIMITS.columns)} ${header ? 'columns' : 'cells'}, the limit for a claims file (column ${count(this.columns)} starts at line ${count(this.line)}, byte ${count(byte + 1)}).`;
    const hint = header
      ? 'The header names the columns, one claim field each (`opcli claims template --csv` prints them): check that this is the claims file and that its lines end with newlines. Nothing was sent.'
      : 'A row holds one claim: check the file around that line (an unclosed quote runs on to the end of the file). Rows before it were read; fix it and run the same command again: rows already filed are skipped.';
    this.failure = new CsvReadError(message, this.recordLine, hint);
    done(null, this.crlf(text.slice(0, recordStart)));
  }
}

/** The 0-based character index where each cell of a raw CSV record begins. */
function cellStarts(text: string): number[] {
  const starts = [0];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) quoted = !quoted;
    else if (c === 44 && !quoted) starts.push(i + 1);
  }
  return starts;
}

/** "column 3, byte 57" for a cell of the header (1-based column), or just the column when the header's text is unknown. */
function headerCellAt(header: HeaderText | undefined, column: number): string {
  if (!header) return `column ${count(column)}`;
  const bom = header.text.startsWith('\ufeff') ? 1 : 0;
  const start = cellStarts(header.text.slice(bom))[column - 1];
  if (start === undefined) return `column ${count(column)}`;
  return `column ${count(column)}, byte ${count(header.byte + Buffer.byteLength(header.text.slice(0, bom + start)))}`;
}

interface CsvRecord {
  record: string[];
  /** The line the record ends on. */
  lines: number;
}

/**
 * The records of a CSV, pulled chunk by chunk. csv-parse hands each record to `on_record` as it is
 * parsed, and the records come out of this generator before any error that follows them: a stream
 * async iterator would drop the records still buffered when the parser fails (say, on an unclosed
 * quote near the end), and those rows would be neither sent nor reported. Only one chunk's records
 * are queued at a time, and the next chunk is read only once they are taken.
 */
async function* csvRecords(input: Readable, label: string, guard: CsvGuard): AsyncGenerator<CsvRecord> {
  const { parse } = await import('csv-parse');
  const queue: CsvRecord[] = [];
  let failure: unknown;
  let lastLine = 0;
  const parser = parse({
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    on_record: (record: string[], info: { lines: number }) => {
      queue.push({ record, lines: info.lines });
      return null;
    },
  });
  parser.on('error', (error) => {
    failure ??= error;
  });
  // Nothing is pushed to the parser's readable side; keep it flowing so writes complete.
  parser.resume();
  const write = (chunk?: string) =>
    new Promise<void>((resolve) => {
      const done = (error?: Error | null) => {
        if (error) failure ??= error;
        resolve();
      };
      if (parser.destroyed) return resolve();
      if (chunk === undefined) {
        parser.once('error', () => resolve());
        parser.end(() => resolve());
      } else parser.write(chunk, done);
    });
  const drain = function* () {
    for (const item of queue) {
      lastLine = item.lines;
      yield item;
    }
    queue.length = 0;
  };
  input.setEncoding('utf8');
  const text = input.pipe(guard);
  input.on('error', (error) => text.destroy(error));
  try {
    for await (const chunk of text as AsyncIterable<string>) {
      await write(chunk);
      yield* drain();
      if (failure || guard.failure) break;
    }
    if (!failure && !guard.failure) await write();
    yield* drain();
  } finally {
    // Stops reading the file: a record over the limits ends the run without reading the rest.
    input.unpipe(text);
    input.destroy();
    text.destroy();
    parser.destroy();
  }
  if (failure) throw csvError(failure, label, lastLine);
  if (guard.failure) throw guard.failure;
}

async function openCsv(input: Readable, options: OpenOptions): Promise<RowSource> {
  const guard = new CsvGuard(options.label);
  const it = csvRecords(input, options.label, guard);
  const first = await it.next();
  if (first.done) {
    throw new UsageError(
      `${options.label} is empty: expected a header row of field paths.`,
      'Run `opcli claims template --csv` for a header and an example row.',
    );
  }
  const header = first.value.record.map((h) => h.trim());
  const fields = checkHeader(header, options, guard.header);
  const keyIndex = options.keyColumn === undefined ? -1 : header.indexOf(options.keyColumn);
  // Each column's place in the claim, worked out once: the objects above the field and its name.
  const places = fields.map((field) => field && { field, parents: field.path.slice(0, -1), leaf: field.path[field.path.length - 1] as string });
  async function* rows(): AsyncGenerator<SourceRow> {
    let seq = 0;
    for await (const { record, lines } of it) {
      // `lines` is the record's last line; newlines inside its cells say where it began.
      let inner = 0;
      for (const cell of record) if (cell.includes('\n')) inner += cell.split('\n').length - 1;
      const line = lines - inner;
      const issues: FieldIssue[] = [];
      const value: Record<string, unknown> = {};
      if (record.length !== header.length) {
        issues.push({ path: '', message: `expected ${header.length} cells (one per column), got ${record.length}` });
      }
      const n = Math.min(record.length, places.length);
      for (let i = 0; i < n; i++) {
        const place = places[i];
        if (!place) continue;
        const { value: v, issue } = coerceText(place.field, record[i] as string);
        if (issue) issues.push(issue);
        else if (v !== undefined) setIn(value, place.parents, place.leaf, v);
      }
      applyDefaults(value, options);
      const userKey = keyIndex >= 0 ? record[keyIndex]?.trim() || undefined : undefined;
      yield { seq: seq++, line, cells: record, value, issues, userKey };
    }
  }
  return { format: 'csv', header, unit: 'line', rows: rows() };
}

/** Sets `parents.leaf` in `target`, creating the objects above it (setPath with the path split once). */
function setIn(target: Record<string, unknown>, parents: string[], leaf: string, value: unknown): void {
  let node = target;
  for (const part of parents) {
    const next = node[part];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[leaf] = value;
}

/** The line where the file breaks: for an unclosed quote, where the row that opened it begins. */
function csvError(error: unknown, label: string, lastRecordLine: number): Error {
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

/**
 * Every column must name a claim field (or be the --key column); required fields need a column
 * (storeId may come from the profile). The --key column, when not a claim field, maps to undefined.
 */
function checkHeader(header: string[], options: OpenOptions, raw?: HeaderText): (ClaimField | undefined)[] {
  const at = raw ? `${options.label} line ${count(raw.line)}` : options.label;
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
      'Run `opcli claims template --csv` to see every column.',
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

/** storeId defaults to the profile's store. */
function applyDefaults(value: Record<string, unknown>, options: OpenOptions): void {
  if ((value.storeId === undefined || value.storeId === '') && options.defaultStoreId) value.storeId = options.defaultStoreId;
}

/**
 * In JSON input, numbers and booleans written as strings are coerced like CSV cells, and a text
 * value a spreadsheet damaged is refused as it is in a CSV.
 */
export function coerceObject(value: Record<string, unknown>): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const field of CLAIM_FIELDS) {
    if (field.type === 'string') {
      const v = getPath(value, field.path);
      const damage = typeof v === 'string' ? spreadsheetDamage(field, v.trim()) : undefined;
      if (damage) issues.push({ path: field.key, message: damage });
      continue;
    }
    if (field.type !== 'number' && field.type !== 'boolean') continue;
    const v = getPath(value, field.path);
    if (typeof v !== 'string') continue;
    const { value: coerced, issue } = coerceText(field, v);
    if (issue) issues.push(issue);
    else if (coerced !== undefined) setPath(value, field.path, coerced);
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

/**
 * The lines of a JSONL stream with where each begins. A line over `CSV_LIMITS.recordChars` is
 * refused as soon as it gets there (a claim is a few hundred characters), without reading on.
 */
async function* jsonLines(input: Readable, label: string): AsyncGenerator<{ text: string; line: number; byte: number }> {
  const max = CSV_LIMITS.recordChars;
  input.setEncoding('utf8');
  let buffer = '';
  let line = 1;
  let byte = 0;
  try {
    for await (const chunk of input as AsyncIterable<string>) {
      buffer += chunk;
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
    yield objectRow(seq++, line, parsed, options);
  }
}

/** A .json file: an array of claims (or one claim). Read whole: JSON arrays are for small batches. */
async function jsonRows(input: Readable, options: OpenOptions): Promise<AsyncGenerator<SourceRow>> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  const text = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/^\ufeff/, '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${options.label} is not valid JSON: ${jsonProblem(error, text)}`,
      'Use a JSON array of claims, or JSONL (one claim per line) for large batches.',
    );
  }
  const items = Array.isArray(parsed) ? parsed : [parsed];
  async function* rows(): AsyncGenerator<SourceRow> {
    for (const [i, item] of items.entries()) {
      yield objectRow(i, i + 1, item, options);
    }
  }
  return rows();
}
