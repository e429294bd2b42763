/** The flags of `orders list` as commander hands them over, checked and turned into the verb's options. */
import { UsageError } from '../../core/errors.js';
import { parseRate } from '../../core/flags.js';
import { type JsonFlag, jsonFields } from '../../core/json-fields.js';
import { textProblem } from '../../text/flag-text.js';
import { ORDER_COLUMNS } from './columns.js';
import { checkOrderColumns } from './list-table.js';

export interface ListOptions {
  size?: number;
  cursor?: string;
  pageButtons?: number;
  all: boolean;
  limit?: number;
  /** Most page requests started per second (--rate). */
  rate?: number;
  /** --rate as written, for the resume command. */
  rateText?: string;
  format?: 'json' | 'jsonl' | 'csv';
  columns?: string[];
  csvRaw?: boolean;
  /** `--json FIELDS` or `--jsonl FIELDS`: only these fields of each order. */
  fields?: string[];
}

export type ListFlags = {
  size?: number;
  cursor?: string;
  pageButtons?: number;
  all?: boolean;
  limit?: number;
  rate?: string;
  json?: JsonFlag;
  jsonl?: JsonFlag;
  csv?: boolean;
  csvRaw?: boolean;
  columns?: string;
};

/** Refuses flags that do not go together (exit 2, nothing sent) and returns the options. */
export async function listOptions(flags: ListFlags): Promise<ListOptions> {
  const formats = (['json', 'jsonl', 'csv'] as const).filter((f) => flags[f]);
  if (formats.length > 1) throw new UsageError(`Choose one output format: ${formats.map((f) => `--${f}`).join(', ')} were all given.`);
  if (flags.csvRaw && !flags.csv) throw new UsageError('--csv-raw only applies to --csv.', 'Add --csv, or leave --csv-raw out.');
  if (flags.cursor !== undefined && flags.cursor.trim() === '') throw new UsageError('--cursor needs a cursor value.');
  // A cursor is opaque but printable: one holding a control character or U+FFFD was mangled on the way here.
  const cursorProblem = flags.cursor === undefined ? undefined : textProblem(flags.cursor);
  if (cursorProblem) throw new UsageError(`--cursor ${cursorProblem}.`, 'Pass a cursor from pageInfo, pageCursors or an error report unchanged.');
  const rate = flags.rate === undefined ? undefined : parseRate(String(flags.rate), '--rate');
  // One page is one request: nothing to pace, and a --rate left there would promise what it cannot do.
  if (rate !== undefined && !flags.all && flags.limit === undefined)
    throw new UsageError('--rate paces the pages of --all and --limit; one page is a single request.', 'Add --all or --limit N, or leave --rate out.');
  let columns: string[] | undefined;
  if (flags.columns !== undefined) {
    if (flags.json || flags.jsonl)
      throw new UsageError(
        '--columns applies to the table, a pipe and --csv.',
        'For chosen fields in JSON, name them after --json or --jsonl: --json sourceOrderId,total.',
      );
    columns = checkOrderColumns(flags.columns);
  }
  const selection = flags.json ?? flags.jsonl;
  const fields = typeof selection === 'string' ? jsonFields(selection, flags.json !== undefined ? '--json' : '--jsonl', ORDER_COLUMNS) : undefined;
  const { size, cursor, pageButtons, limit } = flags;
  return {
    size,
    cursor,
    pageButtons,
    all: !!flags.all,
    limit,
    rate,
    rateText: rate === undefined ? undefined : String(flags.rate).trim(),
    format: formats[0],
    columns,
    csvRaw: !!flags.csvRaw,
    fields,
  };
}
