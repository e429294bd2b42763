/**
 * What the batch reader hands on: the input's formats, one row before schema validation, and the
 * options every format reads with. The readers of each format are reader-csv.ts and reader-json.ts;
 * reader.ts picks one.
 */
import type { FieldIssue } from '../schemas.js';

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
  /** The CSV's separator (told from its header, or `--delimiter`): the results file (`--out`) uses it too. */
  delimiter?: string;
  /** What a position is called in messages: "line" or "item". */
  unit: 'line' | 'item';
  rows: AsyncGenerator<SourceRow>;
}

export interface OpenOptions {
  /** The profile's store id, used when a row leaves storeId out. */
  defaultStoreId?: string;
  /** `--key COLUMN`: the user's identifier column (a field path, or a column the API does not know: not sent). */
  keyColumn?: string;
  /** Name of the input in messages. */
  label: string;
  /** `--delimiter`: the CSV's separator; told from the header when not given. */
  delimiter?: string;
}

/**
 * Limits of one CSV record (the header or a row). A claim row is a few hundred characters and about
 * 40 columns; past these the file is not a claims file (a 100 MB line with no newline, a million
 * columns), and it is refused as soon as the limit is reached, without reading the rest.
 */
export const CSV_LIMITS = { recordChars: 1_048_576, columns: 1_000 } as const;

/** storeId defaults to the profile's store. */
export function applyDefaults(value: Record<string, unknown>, options: OpenOptions): void {
  if ((value.storeId === undefined || value.storeId === '') && options.defaultStoreId) value.storeId = options.defaultStoreId;
}
