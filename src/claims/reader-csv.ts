/**
 * The CSV reader of a batch: records pulled from csv-parse one chunk at a time (so memory stays
 * flat), the header checked against the claim's fields, each row built into a claim object.
 *
 * Fast path (docs/benchmarks.md, bench/claims-batch.mjs): `rows` runs for every claim row; each
 * column's place in the claim is worked out once, from the header.
 */
import type { Readable } from 'node:stream';
// A static import: `claims file --validate-only` over a 5-row CSV took a median 230 ms of CPU with it and
// 240 ms with csv-parse imported on first use (40 runs each, /usr/bin/time's 10 ms steps): no start-up need.
import { parse } from 'csv-parse';
import { UsageError } from '../core/errors.js';
import type { FieldIssue } from '../schemas.js';
import { count } from '../text/count.js';
import { excerpt, quoteInput } from '../text/excerpt.js';
import { CsvGuard, CsvReadError, type HeaderText, headerCellAt } from './csv-guard.js';
import { CLAIM_FIELDS, type ClaimField, coerceText, FIELD_BY_KEY } from './fields.js';
import { applyDefaults, type OpenOptions, type RowSource, type SourceRow } from './row-source.js';

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

export async function openCsv(input: Readable, options: OpenOptions): Promise<RowSource> {
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
