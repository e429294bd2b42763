import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { ExitCode, InterruptedError, OpcliError, UsageError } from '../../errors.js';
import { parseWholeNumber } from '../../flags.js';
import type { OrdersPage } from '../../schemas.js';

export interface ListOptions {
  size?: number;
  cursor?: string;
  pageButtons?: number;
  all: boolean;
  limit?: number;
  format?: 'json' | 'jsonl' | 'csv';
}

function positiveInt(flag: string, min = 1) {
  return (value: string): number => parseWholeNumber(value, flag, { min });
}

/** Registers `orders list`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('list')
    .description('List the orders of the store, one page or all of them')
    .option('--size <n>', 'orders per page (the server default when left out)', positiveInt('--size'))
    .option('--cursor <cursor>', 'start after this record cursor (from a previous page or an error report)')
    .option('--page-buttons <n>', 'how many page cursors to ask for around the current page (buttonNum)', positiveInt('--page-buttons', 0))
    .option('--all', 'follow the cursors to the last page')
    .option('--limit <n>', 'stop after N orders (follows pages as needed)', positiveInt('--limit'))
    .option('--json', 'print one JSON array, written as pages arrive')
    .option('--jsonl', 'print one JSON object per order and line, as pages arrive')
    .option('--csv', 'print CSV: a header, then one row per order')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli orders list                          # the first page, as a table on a terminal
  $ opcli orders list --size 50 --cursor b2E6NTA
  $ opcli orders list --all --jsonl > orders.jsonl
  $ opcli orders list --all --csv --size 250 > orders.csv
  $ opcli orders list --limit 100 --json | jq '.[].total'

On a terminal the footer (stderr) shows the total, the page position and the command for the next
page. A page that keeps failing after retries stops the run: everything fetched so far is written,
and the error names the --cursor to resume from.`,
    )
    .action(async (flags: { size?: number; cursor?: string; pageButtons?: number; all?: boolean; limit?: number; json?: boolean; jsonl?: boolean; csv?: boolean }) => {
      const formats = (['json', 'jsonl', 'csv'] as const).filter((f) => flags[f]);
      if (formats.length > 1) throw new UsageError(`Choose one output format: ${formats.map((f) => `--${f}`).join(', ')} were all given.`);
      if (flags.cursor !== undefined && flags.cursor.trim() === '') throw new UsageError('--cursor needs a cursor value.');
      await run(
        { size: flags.size, cursor: flags.cursor, pageButtons: flags.pageButtons, all: !!flags.all, limit: flags.limit, format: formats[0] },
        deps,
      );
    });
}

/** Shell-quotes an argument for a command line the user can paste. */
function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The command line that continues from `cursor` with the same flags. */
export function resumeCommand(opts: ListOptions, deps: Deps, cursor: string, remaining?: number): string {
  const argv = ['opcli'];
  if (deps.globals.profile) argv.push('--profile', deps.globals.profile);
  argv.push('orders', 'list');
  if (opts.all) argv.push('--all');
  if (remaining !== undefined) argv.push('--limit', String(remaining));
  if (opts.size !== undefined) argv.push('--size', String(opts.size));
  if (opts.pageButtons !== undefined) argv.push('--page-buttons', String(opts.pageButtons));
  if (opts.format) argv.push(`--${opts.format}`);
  argv.push('--cursor', cursor);
  return argv.map(quote).join(' ');
}

/** Lists orders page by page, writing each page as it arrives. */
export async function run(opts: ListOptions, deps: Deps): Promise<void> {
  const [{ createOrderWriter }, { fetchPage, pagePosition }, { colors }] = await Promise.all([
    import('../../orders/list-output.js'),
    import('../../orders/pager.js'),
    import('../../output.js'),
  ]);
  const format = opts.format ?? (deps.io.stdoutIsTTY ? 'table' : 'plain');
  const follow = opts.all || opts.limit !== undefined;
  if (follow) await (await import('../../lean-memory.js')).leanMemory({ liftoffOnly: true });
  const writer = await createOrderWriter(deps, format);
  const records = format === 'table' || format === 'plain' || format === 'csv';
  const sizeFor = (written: number) => {
    if (opts.limit === undefined) return opts.size;
    // Under --limit the last page asks for no more than is left, so its endCursor resumes exactly.
    const remaining = opts.limit - written;
    return Math.min(opts.size ?? remaining, remaining);
  };
  const request = (at: string | undefined, written: number) => {
    const p = fetchPage(deps, { size: sizeFor(written), cursor: at, buttonNum: opts.pageButtons }, { records });
    p.catch(() => {}); // awaited below; this only keeps an abandoned prefetch from being "unhandled"
    return p;
  };
  let cursor = opts.cursor;
  let written = 0;
  let pages = 0;
  let last: OrdersPage | undefined;
  let failure: unknown;
  try {
    // In flight, in order: the page asked for with each cursor. The head is always the page that
    // follows what was written; entries behind it are guesses taken from pageCursors.
    const queue: { cursor: string | undefined; page: Promise<OrdersPage> }[] = [{ cursor, page: request(cursor, 0) }];
    // Guessing needs a constant page size; a miss (an unaligned --cursor) turns it off.
    let guess = opts.limit === undefined && follow;
    for (;;) {
      const head = queue.shift() as (typeof queue)[number];
      const page = await head.page;
      if (deps.signal.aborted) throw new InterruptedError();
      const orders = (page.edges ?? []).map((e) => e.node);
      const next = page.pageInfo.endCursor;
      const total = written + orders.length;
      const more =
        follow && page.pageInfo.hasNextPage && !!next && orders.length > 0 && (opts.limit === undefined || total < opts.limit);
      if (more) {
        // Only a page asked for with exactly this endCursor may follow: every order comes once.
        if (queue[0] && queue[0].cursor !== next) {
          guess = false;
          queue.length = 0;
        }
        if (queue.length === 0) queue.push({ cursor: next ?? undefined, page: request(next ?? undefined, total) });
        // One page further, from the page cursors, so the server works while this one is parsed.
        const current = page.pageCursors.around.find((c) => c.isCurrent)?.page;
        const ahead = guess && current !== undefined ? page.pageCursors.around.find((c) => c.page === current + 2) : undefined;
        if (ahead && queue.length === 1) queue.push({ cursor: ahead.cursor, page: request(ahead.cursor, total) });
        // Let the requests reach the socket before the CPU-bound writing below starts.
        await new Promise<void>((resolve) => setImmediate(resolve));
      } else queue.length = 0;
      await writer.page(orders);
      written = total;
      pages++;
      last = page;
      if (!page.pageInfo.hasNextPage || !next || orders.length === 0) break;
      cursor = next;
      if (!more) break;
    }
  } catch (error) {
    failure = error;
  } finally {
    await writer.end();
  }

  const chalk = await colors(deps, 'stderr');
  if (failure !== undefined) {
    const interrupted = deps.signal.aborted || failure instanceof InterruptedError;
    if (written === 0 && cursor === opts.cursor && !interrupted) throw failure;
    const resume = cursor ? resumeCommand(opts, deps, cursor, opts.limit !== undefined ? opts.limit - written : undefined) : undefined;
    if (interrupted) {
      deps.err(`Stopped after ${written} orders.${resume ? ` Resume with:\n  ${resume}\n` : '\n'}`);
      throw new InterruptedError();
    }
    const reason = failure instanceof Error ? failure.message : String(failure);
    const code = failure instanceof OpcliError && failure.exitCode === ExitCode.auth ? ExitCode.auth : ExitCode.failed;
    throw new OpcliError(`Stopped after ${written} orders in ${pages} pages: ${reason.replace(/\.$/, '')}.`, {
      exitCode: code,
      hint: resume
        ? `Everything fetched so far was written. Resume from cursor ${cursor} with:\n  ${resume}`
        : 'Everything fetched so far was written; run the command again.',
      details: { written, cursor },
      cause: failure,
    });
  }

  if (!last) return;
  const more = last.pageInfo.hasNextPage && last.pageInfo.endCursor;
  if (follow) {
    const stopped = more ? ` (stopped at --limit ${opts.limit})` : '';
    deps.err(`${chalk.dim(`${written} of ${last.totalCount} orders in ${pages} page${pages === 1 ? '' : 's'}${stopped}.`)}\n`);
    if (more && last.pageInfo.endCursor) deps.err(`${chalk.dim(`Next: ${resumeCommand({ ...opts, all: opts.all }, deps, last.pageInfo.endCursor, opts.all ? undefined : opts.limit)}`)}\n`);
    return;
  }
  const pos = pagePosition(last, opts.size);
  const where =
    pos.current !== undefined
      ? ` · page ${pos.current}${pos.total !== undefined ? ` of ${pos.total}` : ''} (pages ${pos.around.map((p) => (p === pos.current ? `[${p}]` : String(p))).join(' ')})`
      : '';
  deps.err(`${chalk.dim(`${written} of ${last.totalCount} orders${where}`)}\n`);
  if (more && last.pageInfo.endCursor) deps.err(`${chalk.dim(`Next page: ${resumeCommand(opts, deps, last.pageInfo.endCursor)}`)}\n`);
  else deps.err(`${chalk.dim('This is the last page.')}\n`);
}
