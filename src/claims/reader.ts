/**
 * The batch reader: CSV, JSONL or JSON rows turned into claim objects, one at a time and only as
 * fast as the caller pulls them (the CSV parser pauses the file stream), so memory stays flat.
 * This file picks the reader of a format: reader-csv.ts, reader-json.ts; what they hand on is
 * row-source.ts.
 */
import type { Readable } from 'node:stream';
import { UsageError } from '../core/errors.js';
import { openCsv } from './reader-csv.js';
import { jsonlRows, jsonRows } from './reader-json.js';
import type { InputFormat, OpenOptions, RowSource } from './row-source.js';

export { CsvReadError } from './csv-records.js';
export { coerceObject } from './reader-json.js';
export { CSV_LIMITS, INPUT_FORMATS, type InputFormat, type OpenOptions, type RowSource, type SourceRow } from './row-source.js';

export { checkFileText } from './input-text.js';

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
