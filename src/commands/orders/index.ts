/** `opcli orders` and its `orders list` verb: flags, the writers, the footer and the resume hint. */
import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { lazyGroup, lazyVerb } from '../../cli/program.js';
import { InterruptedError, UsageError, ExitCode, OpcliError } from '../../core/errors.js';
import { checkText, parseWholeNumber, parseRate } from '../../core/flags.js';
import { listOrders, type OrderWriter, PaginationError, progressLine, type ListResult, pagePosition } from '../../orders/pages.js';
import { cellText, colors, type Column, chooseColumns, csvCell, parseColumnList, printTable } from '../../core/output.js';
import { createProgress } from '../../text/progress.js';
import { type JsonFlag, jsonFields, pickFields } from '../../core/json-fields.js';
import { escapeInvisible, safeLine, safeText, shellQuote } from '../../text/safe.js';
import type { OrderRecord } from '../../schemas.js';
import { once } from 'node:events';
import { ORDER_FIELD_NAMES as ORDER_FIELDS } from '../../order-fields.js';
import { count, counted } from '../../text/count.js';
import { stringify } from 'csv-stringify/sync';

/** `opcli orders`: list and update the store's orders. */
export const register = lazyGroup({
  name: 'orders',
  description: 'List and update orders',
  examples: `  $ opcli orders list --size 10
  $ opcli orders list --all --jsonl > orders.jsonl
  $ opcli orders update ord_000001 --source-order-number '#1001' --currency USD --total 42.50`,
  // `orders list` does not load what `orders update` needs (its flags from the Order schema, --data).
  verbs: {
    list: registerList,
    update: lazyVerb(() => import('./update.js')),
  },
});

function positiveInt(flag: string, min = 1, hint?: string) {
  return (value: string): number => parseWholeNumber(value, flag, { min, hint });
}

// CHOICE (docs/spec-choices.md#page-size): the API states no maximum page size, so none is named or enforced.
const SIZE_HINT = 'Orders per page, 1 or more; the server caps a page at its own maximum (leave --size out for its default).';

function registerList(group: Command, deps: Deps): void {
  group
    .command('list')
    .description('List the orders of the store, one page or all of them')
    .option('--size <n>', 'orders per page (the server default when left out)', positiveInt('--size', 1, SIZE_HINT))
    .option('--cursor <cursor>', 'start after this record cursor (from a previous page or an error report)')
    .option('--page-buttons <n>', 'how many page cursors to ask for around the current page (buttonNum)', positiveInt('--page-buttons', 0))
    .option('--all', 'follow the cursors to the last page')
    .option('--limit <n>', 'stop after N orders (follows pages as needed)', positiveInt('--limit'))
    .option('--rate <n/s>', 'with --all or --limit: most page requests started per second, e.g. 5/s or 300/m (default: as the server allows)')
    .option('--columns <names>', 'the columns to show, comma-separated (table, pipe and CSV)')
    .option('--json [fields]', 'print one JSON array, written as pages arrive; with fields (comma-separated), only those (docs/json.md)')
    .option('--jsonl [fields]', 'print one JSON object per order and line, as pages arrive; with fields, only those')
    .option(
      '--csv',
      "print CSV: a header, then one row per order; a cell starting with = + - @ tab or CR gets a leading ' so spreadsheets do not run it as a formula",
    )
    .option('--csv-raw', 'with --csv: write cells exactly as the server sent them (no formula guard, no escapes)')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli orders list                  # the first page, as a table
  $ opcli orders list --columns sourceOrderId,customerEmail,total
  $ opcli orders list --size 50 --cursor b2E6NTA
  $ opcli orders list --all --jsonl > orders.jsonl
  $ opcli orders list --all --csv --size 250 > orders.csv
  $ opcli orders list --limit 100 --json | jq '.[].total'
  $ opcli orders list --all --jsonl sourceOrderId,total > totals.jsonl
  $ opcli orders list --all --jsonl --rate 300/m > orders.jsonl

A terminal gets a table of sourceOrderId, sourceOrderNumber, currency, total and customerName that fits its width (long cells end in …; amounts and ids are never cut: a column that does not fit is left out and named); --columns chooses others, a pipe gets every column as tab-separated lines, --json the full records. The footer (stderr) shows the total, the page position and the command for the next page; --all shows its progress: a line redrawn on a terminal, a sentence every 10 s in a log (--progress plain|none to choose). A page that keeps failing after retries stops the run: everything fetched so far is written, and the error names the --cursor to resume from.

Pages follow cursors, so at most two requests are in flight (the page in hand and the next); a 429 or 503 pauses them (for Retry-After when sent) and paces the rest just under the rate the server accepted, slowing earlier when it sends RateLimit-* or X-RateLimit-* headers. --rate caps the pace from the first page.`,
    )
    .action(async (flags: ListFlags) => run(await listOptions(flags), deps));
}

/** Lists orders page by page, writing each page as it arrives, then prints the footer on stderr. */
export async function run(opts: ListOptions, deps: Deps): Promise<void> {
  const format = opts.format ?? (deps.io.stdoutIsTTY ? 'table' : 'plain');
  const follow = opts.all || opts.limit !== undefined;
  const writer = await createOrderWriter(deps, format, opts);
  const records = format === 'table' || format === 'plain' || format === 'csv';
  const progress = follow ? createProgress(deps) : undefined;
  // Data written to a terminal shares the screen with the progress line: the line is taken off first.
  const shared = progress && deps.io.stdoutIsTTY ? progress : undefined;
  const out: typeof writer = shared
    ? {
        page: async (orders) => {
          if (format !== 'table') shared.clear();
          await writer.page(orders);
        },
        end: async () => {
          shared.done();
          await writer.end();
        },
      }
    : writer;
  const started = deps.now();
  const result = await listOrders(
    deps,
    {
      size: opts.size,
      cursor: opts.cursor,
      pageButtons: opts.pageButtons,
      follow,
      limit: opts.limit,
      rate: opts.rate,
      records,
      onNotice: (text) => deps.err(text),
    },
    out,
    (p) => progress?.update(() => progressLine(p, (deps.now() - started) / 1000)),
  );
  progress?.done();

  if (result.failure !== undefined) {
    const interrupted = deps.signal.aborted || result.failure instanceof InterruptedError;
    const stop = stopped(result, interrupted, opts.cursor, (at) =>
      resumeCommand(opts, deps.globals.profile, at, opts.limit !== undefined ? opts.limit - result.written : undefined),
    );
    if (stop.notice) deps.err(stop.notice);
    throw stop.error;
  }
  const lines = footerLines(result, opts, (at, remaining) => resumeCommand(opts, deps.globals.profile, at, remaining));
  // Dimmed on a colour terminal; elsewhere plain.
  const dim = deps.io.colorStderr ? (await colors(deps, 'stderr')).dim : (line: string) => line;
  for (const line of lines) deps.err(`${dim(line)}\n`);
}

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
  /** `--columns`: the columns, in order. */
  columns?: string[];
  /** `--csv-raw`: no formula guard in CSV cells. */
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
  checkText('--cursor', flags.cursor, 'Pass a cursor from pageInfo, pageCursors or an error report unchanged.');
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
    // The names are checked against the order columns: a usage error lists the valid ones.
    columns = chooseColumns(
      ORDER_COLUMNS.map((c) => ({ header: c, name: c })),
      parseColumnList(flags.columns),
    ).map((c) => c.name);
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

// Each writer takes one page as it arrives (flat memory); only the terminal table waits for the end to align.

export type ListFormat = 'json' | 'jsonl' | 'csv' | 'table' | 'plain';

export async function createOrderWriter(deps: Deps, format: ListFormat, options: WriterOptions = {}): Promise<OrderWriter> {
  // JSON on a terminal: invisible and C1 characters as \uXXXX escapes (the same values); a pipe gets it exact.
  const json = deps.io.stdoutIsTTY ? escapeInvisible : (text: string) => text;
  switch (format) {
    case 'jsonl':
      return {
        async page(orders) {
          if (orders.length === 0) return;
          // One flat string per page: join is cheaper than growing a rope order by order.
          const lines = new Array<string>(orders.length);
          for (let i = 0; i < orders.length; i++) lines[i] = JSON.stringify(pickFields(orders[i], options.fields));
          await write(deps, json(`${lines.join('\n')}\n`));
        },
        async end() {},
      };
    case 'json': {
      let count = 0;
      return {
        async page(orders) {
          let chunk = '';
          for (const o of orders) chunk += `${count++ === 0 ? '[\n' : ',\n'}${JSON.stringify(pickFields(o, options.fields))}`;
          await write(deps, json(chunk));
        },
        async end() {
          await write(deps, count === 0 ? '[]\n' : '\n]\n');
        },
      };
    }
    case 'plain': {
      let columns: string[] | undefined;
      return {
        async page(orders) {
          columns ??= options.columns ?? (orders.length > 0 ? presentColumns(orders) : undefined);
          if (!columns) return;
          const cols = columns;
          let chunk = '';
          for (const o of orders) {
            chunk += `${cols.map((c) => safeLine(cellText((o as Record<string, unknown>)[c]))).join('\t')}\n`;
          }
          await write(deps, chunk);
        },
        async end() {},
      };
    }
    case 'csv':
      return createCsvWriter(deps, options);
    case 'table':
      return createTableWriter(deps, options);
  }
}

/** CSV: a header, then one row per order, written page by page. */
export async function createCsvWriter(deps: Deps, options: WriterOptions): Promise<OrderWriter> {
  const columns = options.columns ?? ORDER_COLUMNS;
  const raw = !!options.csvRaw;
  // Spreadsheets draw bidi overrides and hide zero-width characters as a terminal does: cells are made safe (--csv-raw: not in a pipe).
  const shown = raw && !deps.io.stdoutIsTTY ? (v: string) => v : safeText;
  let header = true;
  const flush = async (orders: OrderRecord[]) => {
    const text = stringify(orders as Record<string, unknown>[], {
      header,
      columns,
      cast: {
        boolean: (v) => String(v),
        object: (v) => csvCell(shown(JSON.stringify(v)), raw),
        string: (v) => csvCell(shown(v), raw),
        number: (v) => String(v),
      },
    });
    header = false;
    await write(deps, text);
  };
  return {
    page: flush,
    async end() {
      if (header) await flush([]);
    },
  };
}

/** The terminal table: gathers the orders, then prints one table that fits the width. */
export function createTableWriter(deps: Deps, options: WriterOptions): OrderWriter {
  const rows: OrderRecord[] = [];
  return {
    async page(orders) {
      for (const o of orders) rows.push(o);
    },
    async end() {
      if (rows.length === 0) return;
      // A column asked for by --columns is shown even when no order has it, rather than vanishing without a word.
      const present = presentColumns(rows);
      const names = ORDER_COLUMNS.filter((c) => present.includes(c) || options.columns?.includes(c));
      const columns: Column<OrderRecord>[] = names.map((c) => {
        const money = MONEY_COLUMNS.includes(c);
        return {
          header: c,
          name: c,
          default: DEFAULT_ORDER_COLUMNS.includes(c),
          right: money,
          whole: WHOLE_COLUMNS.includes(c),
          value: money ? (row) => amountText((row as Record<string, unknown>)[c]) : (row) => (row as Record<string, unknown>)[c],
        };
      });
      const chosen = options.columns?.filter((c) => columns.some((k) => k.name === c));
      await printTable(deps, columns, rows, 'table', chosen?.length ? { columns: chosen } : {});
    },
  };
}

/** What the writers take of the options: --columns (for the table, TSV and CSV), --csv-raw, and the fields of --json or --jsonl. */
export type WriterOptions = Pick<ListOptions, 'columns' | 'csvRaw' | 'fields'>;

/** Writes to stdout in one chunk, waiting for the stream to drain so memory stays flat. */
export async function write(deps: Deps, text: string): Promise<void> {
  if (!text) return;
  const stream = deps.io.stdout;
  if (!stream.write(text)) await once(stream, 'drain');
}

/** Every column of the list: sourceOrderId, then the spec's Order fields in its order. */
export const ORDER_COLUMNS = ['sourceOrderId', ...ORDER_FIELDS] as string[];

/** CHOICE (docs/spec-choices.md#default-columns): the columns a terminal table shows by default, which fit 80 columns. */
export const DEFAULT_ORDER_COLUMNS = ['sourceOrderId', 'sourceOrderNumber', 'currency', 'total', 'customerName'];

/** The columns a record set carries: sourceOrderId, then the spec's Order fields in its order. */
export function presentColumns(orders: OrderRecord[]): string[] {
  return ORDER_COLUMNS.filter((k) => orders.some((o) => (o as Record<string, unknown>)[k] !== undefined));
}

/** The money columns: right-aligned with two decimals on a terminal, never cut. */
export const MONEY_COLUMNS: readonly string[] = ['premiumPaid', 'total', 'discountTotal', 'shippingCost', 'tax', 'subtotal', 'shippingCostTax'];

/** The columns a terminal table never cuts nor leaves out before others: money, its currency and ids (a cut id or amount reads as another one). */
export const WHOLE_COLUMNS: readonly string[] = [...MONEY_COLUMNS, 'currency', 'sourceOrderId', 'sourceOrderNumber', 'originalSourceOrderId', 'platformId'];

/** An amount as a table shows it: two decimals (45.50); more precise values as they came, never rounded. */
export function amountText(value: unknown): unknown {
  if (typeof value !== 'number' || !Number.isFinite(value)) return value;
  const fixed = value.toFixed(2);
  return Number(fixed) === value ? fixed : String(value);
}

/** The footer's lines, plain text (the verb dims them); `resume` builds the command that continues from a cursor. */
function footerLines(result: ListResult, input: ListOptions, resume: (cursor: string, remaining?: number) => string): string[] {
  const last = result.last;
  if (!last) return [];
  const lines: string[] = [];
  const { written, pages } = result;
  const next = last.pageInfo.hasNextPage && last.pageInfo.endCursor ? last.pageInfo.endCursor : undefined;
  const total = last.totalCount;
  const follow = input.all || input.limit !== undefined;
  if (follow) {
    const stopped = next ? ` (stopped at --limit ${input.limit})` : '';
    lines.push(`${count(written)} of ${count(total)} orders in ${counted(pages, 'page')}${stopped}.`);
  } else {
    const pos = pagePosition(last);
    const where =
      pos.current !== undefined
        ? ` · page ${pos.current}${pos.total !== undefined ? ` of ${pos.total}` : ''} (pages ${pos.around.map((p) => (p === pos.current ? `[${p}]` : String(p))).join(' ')})`
        : '';
    lines.push(`${count(written)} of ${count(total)} orders${where}`);
  }
  if (result.cappedAt !== undefined && input.size !== undefined) {
    lines.push(
      `The server returned at most ${result.cappedAt} orders per page (--size ${input.size} asked for more); pages are counted at ${result.cappedAt}.`,
    );
  }
  if (follow) {
    if (next) lines.push(`Next: ${safeLine(resume(next, input.all ? undefined : input.limit))}`);
  } else if (next) lines.push(`Next page: ${safeLine(resume(next))}`);
  else lines.push('This is the last page.');
  return lines;
}

/** The command line that continues from `cursor` with the same flags (--rate as written: a resume keeps the same budget). */
export function resumeCommand(opts: ListOptions, profile: string | undefined, cursor: string, remaining?: number): string {
  const argv = ['opcli'];
  if (profile) argv.push('--profile', profile);
  argv.push('orders', 'list');
  if (opts.all) argv.push('--all');
  if (remaining !== undefined) argv.push('--limit', String(remaining));
  if (opts.size !== undefined) argv.push('--size', String(opts.size));
  if (opts.pageButtons !== undefined) argv.push('--page-buttons', String(opts.pageButtons));
  if (opts.rateText !== undefined && (opts.all || remaining !== undefined)) argv.push('--rate', opts.rateText);
  if (opts.columns) argv.push('--columns', opts.columns.join(','));
  if (opts.format) argv.push(`--${opts.format}`);
  if (opts.format && opts.fields) argv.push(opts.fields.join(','));
  if (opts.csvRaw) argv.push('--csv-raw');
  argv.push('--cursor', cursor);
  return argv.map(shellQuote).join(' ');
}

/** A run a failure ended after writing what it fetched: the error names the command to resume with; an interruption exits 130. */
export function stopped(
  result: ListResult,
  interrupted: boolean,
  startCursor: string | undefined,
  resume: (cursor: string) => string,
): { notice?: string; error: unknown } {
  const { written, pages, failure, cursor } = result;
  if (written === 0 && cursor === startCursor && !interrupted) return { error: failure };
  // Pages that do not end are not resumed: the same cursor would loop again.
  const command = cursor && !(failure instanceof PaginationError) ? resume(cursor) : undefined;
  if (interrupted) return { notice: `Stopped after ${written} orders.${command ? ` Resume with:\n  ${command}\n` : '\n'}`, error: new InterruptedError() };
  const reason = failure instanceof Error ? failure.message : String(failure);
  const code = failure instanceof OpcliError && failure.exitCode === ExitCode.auth ? ExitCode.auth : ExitCode.failed;
  return {
    error: new OpcliError(`Stopped after ${written} orders in ${pages} pages: ${reason.replace(/\.$/, '')}.`, {
      exitCode: code,
      hint: command
        ? `Everything fetched so far was written. Resume from cursor ${cursor} with:\n  ${command}`
        : failure instanceof PaginationError
          ? `Everything fetched before that page was written. ${failure.hint}`
          : 'Everything fetched so far was written; run the command again.',
      details: { written, cursor },
      cause: failure,
    }),
  };
}
