/**
 * The CSV reader of a batch, on csv-parse: the file's text (input-text.ts: UTF-8 or UTF-16), its
 * separator told from the header (`,` `;` or tab, or `--delimiter`), its records streamed one chunk
 * at a time (memory stays flat) within the limits of a claims file, the header checked against the
 * claim's fields, each row built into a claim object.
 *
 * Fast path (docs/benchmarks.md, bench/claims-batch.mjs): `row` runs for every claim row; each
 * column's place in the claim is worked out once, from the header.
 */
import type { Readable } from 'node:stream';
import { parse as parseSync } from 'csv-parse/sync';
import { UsageError } from '../core/errors.js';
import type { FieldIssue } from '../schemas.js';
import { count } from '../text/count.js';
import { excerpt, quoteInput } from '../text/excerpt.js';
import { CLAIM_FIELDS, type ClaimField, coerceText, FIELD_BY_KEY } from './fields.js';
import { CsvReadError, csvError, csvRecords } from './csv-records.js';
import { decodeText } from './input-text.js';
import { applyDefaults, CSV_LIMITS, type OpenOptions, type RowSource, type SourceRow } from './row-source.js';

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
  // Each column's place in the claim, worked out once: the objects above the field and its name.
  const places = fields.map((field) => field && { field, parents: field.path.slice(0, -1), leaf: field.path[field.path.length - 1] as string });
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
    const n = Math.min(record.length, places.length);
    for (let i = 0; i < n; i++) {
      const place = places[i];
      if (!place) continue;
      const { value: v, issue } = coerceText(place.field, record[i] as string, coercion);
      if (issue) issues.push(issue);
      else if (v !== undefined) setIn(value, place.parents, place.leaf, v);
    }
    applyDefaults(value, options);
    const userKey = keyIndex >= 0 ? record[keyIndex]?.trim() || undefined : undefined;
    return { seq, line, cells: record, value, issues, userKey };
  }
  return { format: 'csv', header: names, delimiter, unit: 'line', rows: rows() };
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

/** The header's line as read before the parser starts: its text (cut at the limit when longer), line, first byte, and whether it is whole. */
interface HeadLine {
  text: string;
  bytes: Buffer;
  line: number;
  byte: number;
  complete: boolean;
}

/**
 * Reads the start of the text up to the end of the header, the first line that is not empty (no
 * header cell holds a line break), or until the header passes the length limit. Everything read is
 * kept in `read`, for the parser to read again from the file's first byte.
 */
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

/**
 * The header's cells and the byte where each begins (csv-parse's `bytes` when a cell ends, in a
 * cast), refused over the limits of a claims file: more columns, or longer, than a claims file has.
 */
function readHeader(head: HeadLine, delimiter: string, fileBytes: boolean, label: string): Header {
  let cells: string[] = [];
  try {
    cells = (parseSync(head.bytes, { delimiter, relax_column_count: true }) as string[][])[0] ?? [];
  } catch (error) {
    if (head.complete) throw csvError(error, { label, line: head.line - 1, crlf: 0, end: head.byte, empty: 0, fileBytes });
  }
  const starts = cellStarts(head.bytes, delimiter, Math.min(cells.length, CSV_LIMITS.columns + 1));
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

/** Where each of the first `n` cells of a header line begins: the byte after the one csv-parse's `bytes` names when the cell before it ends. */
function cellStarts(bytes: Buffer, delimiter: string, n: number): number[] {
  const starts = [0];
  const enough = new Error('enough');
  try {
    parseSync(bytes, {
      delimiter,
      relax_column_count: true,
      relax_quotes: true,
      cast: (value, context) => {
        if (starts.length >= n) throw enough;
        starts.push(context.bytes + Buffer.byteLength(delimiter));
        return value;
      },
    });
  } catch {
    // Stopped at the n-th cell, or at a break the parse of the cells reports.
  }
  return starts;
}

/** "column 3, byte 57" for a cell of the header (1-based column), the byte when the file's bytes are known. */
function headerCellAt(header: Header, column: number): string {
  const start = header.starts[column - 1];
  if (header.byte === undefined || start === undefined) return `column ${count(column)}`;
  return `column ${count(column)}, byte ${count(header.byte + start)}`;
}

/**
 * Every column must name a claim field (or be the --key column); required fields need a column
 * (storeId may come from the profile). The --key column, when not a claim field, maps to undefined.
 */
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
