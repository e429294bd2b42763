/**
 * The CSV reader of a batch: records pulled one chunk at a time (csv-records.ts; so memory stays
 * flat), the header checked against the claim's fields, each row built into a claim object.
 *
 * Fast path (docs/benchmarks.md, bench/claims-batch.mjs): `rows` runs for every claim row; each
 * column's place in the claim is worked out once, from the header.
 */
import type { Readable } from 'node:stream';
import { UsageError } from '../core/errors.js';
import type { FieldIssue } from '../schemas.js';
import { count } from '../text/count.js';
import { excerpt, quoteInput } from '../text/excerpt.js';
import { CsvGuard, type HeaderText, headerCellAt } from './csv-guard.js';
import { type CsvRecord, csvRecords } from './csv-records.js';
import { CLAIM_FIELDS, type ClaimField, coerceText, FIELD_BY_KEY } from './fields.js';
import { applyDefaults, type OpenOptions, type RowSource, type SourceRow } from './row-source.js';

export async function openCsv(input: Readable, options: OpenOptions): Promise<RowSource> {
  const guard = new CsvGuard(options.label);
  const it = csvRecords(input, options.label, guard);
  const first = await it.next();
  const batch: CsvRecord[] = first.done ? [] : first.value;
  const head = batch[0]?.record.map((h) => h.trim());
  if (!head) {
    throw new UsageError(
      `${options.label} is empty: expected a header row of field paths.`,
      'Run `opcli claims template --csv` for a header and an example row.',
    );
  }
  const header = head;
  const fields = checkHeader(header, options, guard.header);
  const keyIndex = options.keyColumn === undefined ? -1 : header.indexOf(options.keyColumn);
  // Each column's place in the claim, worked out once: the objects above the field and its name.
  const places = fields.map((field) => field && { field, parents: field.path.slice(0, -1), leaf: field.path[field.path.length - 1] as string });
  async function* rows(): AsyncGenerator<SourceRow> {
    let seq = 0;
    try {
      // The rows read with the header, then a chunk's rows at a time.
      for (let records = batch.slice(1); ; ) {
        for (const { record, line } of records) yield row(record, line, seq++);
        const next = await it.next();
        if (next.done) return;
        records = next.value;
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
    return { seq, line, cells: record, value, issues, userKey };
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
