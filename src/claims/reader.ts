/**
 * The batch reader: CSV, JSONL or JSON rows turned into claim objects, one at a time and only as
 * fast as the caller pulls them (the CSV parser pauses the file stream), so memory stays flat.
 */
import { type Readable, Transform } from 'node:stream';
import { UsageError } from '../errors.js';
import type { FieldIssue } from '../schemas.js';
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
 * CRLF to LF before parsing: csv-parse miscounts lines when a quoted cell holds a CRLF, and the
 * line numbers are what users look up. A CRLF inside a quoted cell becomes a plain newline.
 */
function normalizeNewlines(): Transform {
  let carry = '';
  return new Transform({
    decodeStrings: false,
    transform(chunk: Buffer | string, _enc, done) {
      let text = carry + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
      carry = '';
      if (text.endsWith('\r')) {
        carry = '\r';
        text = text.slice(0, -1);
      }
      done(null, text.replace(/\r\n/g, '\n'));
    },
    flush(done) {
      done(null, carry);
    },
  });
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
async function* csvRecords(input: Readable, label: string): AsyncGenerator<CsvRecord> {
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
  const text = input.pipe(normalizeNewlines());
  input.on('error', (error) => text.destroy(error));
  try {
    for await (const chunk of text as AsyncIterable<string>) {
      await write(chunk);
      yield* drain();
      if (failure) break;
    }
    if (!failure) await write();
    yield* drain();
  } finally {
    text.destroy();
    parser.destroy();
  }
  if (failure) throw csvError(failure, label, lastLine);
}

async function openCsv(input: Readable, options: OpenOptions): Promise<RowSource> {
  const it = csvRecords(input, options.label);
  const first = await it.next();
  if (first.done) {
    throw new UsageError(
      `${options.label} is empty: expected a header row of field paths.`,
      'Run `opcli claims template --csv` for a header and an example row.',
    );
  }
  const header = first.value.record.map((h) => h.trim());
  const fields = checkHeader(header, options);
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
  const e = error as { code?: string; message?: string; lines?: number };
  if (typeof e?.code === 'string' && e.code.startsWith('CSV_')) {
    const line = e.code === 'CSV_QUOTE_NOT_CLOSED' ? lastRecordLine + 1 : e.lines;
    const what = e.code === 'CSV_QUOTE_NOT_CLOSED' ? 'a quote opened in the row starting here is never closed' : e.message;
    return new CsvReadError(`${label}${line ? ` line ${line}` : ''}: the CSV cannot be read: ${what}`, line);
  }
  return error as Error;
}

/** The CSV breaks at `line`: rows before it were read, nothing from it on. */
export class CsvReadError extends UsageError {
  constructor(
    message: string,
    readonly line: number | undefined,
  ) {
    super(message, 'Fix the file (an unclosed quote is the usual cause) and run the same command again; rows already filed are skipped.');
  }
}

/**
 * Every column must name a claim field (or be the --key column); required fields need a column
 * (storeId may come from the profile). The --key column, when not a claim field, maps to undefined.
 */
function checkHeader(header: string[], options: OpenOptions): (ClaimField | undefined)[] {
  if (options.keyColumn !== undefined && !header.includes(options.keyColumn)) {
    throw new UsageError(`${options.label}: there is no column "${options.keyColumn}" for --key.`, `Columns are: ${header.join(', ')}.`);
  }
  const unknown = header.filter((h) => !FIELD_BY_KEY.has(h) && h !== options.keyColumn);
  if (unknown.length) {
    throw new UsageError(
      `${options.label}: unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u}"`).join(', ')}; columns are claim field paths such as customer.email or item.price.`,
      'Run `opcli claims template --csv` to see every column.',
    );
  }
  const seen = new Set<string>();
  for (const h of header) {
    if (seen.has(h)) throw new UsageError(`${options.label}: the column "${h}" appears twice.`);
    seen.add(h);
  }
  const missing = CLAIM_FIELDS.filter((f) => f.required && !seen.has(f.key) && !(f.key === 'storeId' && options.defaultStoreId));
  if (missing.length) {
    throw new UsageError(
      `${options.label}: missing required column${missing.length > 1 ? 's' : ''} ${missing.map((m) => m.key).join(', ')}.`,
      missing.some((m) => m.key === 'storeId')
        ? "Add the columns, or set the profile's store with `opcli config set store-id …` to default storeId."
        : 'Add the columns; `opcli claims template --csv` prints them all.',
    );
  }
  return header.map((h) => FIELD_BY_KEY.get(h));
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

async function* jsonlRows(input: Readable, options: OpenOptions): AsyncGenerator<SourceRow> {
  const { createInterface } = await import('node:readline');
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  let seq = 0;
  for await (const text of lines) {
    line++;
    const trimmed = text.trim();
    if (trimmed === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (error) {
      yield { seq: seq++, line, value: undefined, issues: [{ path: '', message: `not valid JSON: ${(error as Error).message}` }] };
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
      `${options.label} is not valid JSON: ${(error as Error).message}`,
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
