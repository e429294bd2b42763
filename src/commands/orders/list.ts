import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { InterruptedError } from '../../core/errors.js';
import { parseWholeNumber } from '../../core/flags.js';
import { type ListFlags, type ListOptions, listOptions } from './list-flags.js';
import { footerLines, progressLine, resumeCommand, stopped } from './list-footer.js';
import { listOrders } from '../../orders/pages.js';
import { colors } from '../../core/output.js';
import { createProgress } from '../../text/progress.js';
import { createOrderWriter } from './list-output.js';

function positiveInt(flag: string, min = 1, hint?: string) {
  return (value: string): number => parseWholeNumber(value, flag, { min, hint });
}

// CHOICE (docs/spec-choices.md#page-size): the API states no maximum page size, so none is named or enforced.
const SIZE_HINT = 'Orders per page, 1 or more; the server caps a page at its own maximum (leave --size out for its default).';

/** Registers `orders list`. */
export function register(group: Command, deps: Deps): void {
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
  const writer = await createOrderWriter(deps, format, { columns: opts.columns, csvRaw: opts.csvRaw, fields: opts.fields });
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
  const lines = footerLines(result, {
    follow,
    all: opts.all,
    size: opts.size,
    limit: opts.limit,
    resume: (at, remaining) => resumeCommand(opts, deps.globals.profile, at, remaining),
  });
  // Dimmed on a colour terminal; elsewhere plain.
  const dim = deps.io.colorStderr ? (await colors(deps, 'stderr')).dim : (line: string) => line;
  for (const line of lines) deps.err(`${dim(line)}\n`);
}
