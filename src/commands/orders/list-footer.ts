/** The footer of `orders list` (stderr): how many orders of how many, where the page sits, what comes next. */
import { PaginationError } from '../../orders/pages.js';
import { ExitCode, InterruptedError, OpcliError } from '../../core/errors.js';
import { count } from '../../text/count.js';
import { safeLine } from '../../text/safe.js';
import { shellQuote } from '../../text/shell-quote.js';
import { type ListProgress, type ListResult, pagePosition } from '../../orders/pages.js';

export interface FooterInput {
  follow: boolean;
  all: boolean;
  size?: number;
  limit?: number;
  /** The command that continues from a cursor. */
  resume(cursor: string, remaining?: number): string;
}

/** The progress line of a run that follows pages: orders (of the total), pages and the rate so far. */
export function progressLine(p: ListProgress, seconds: number): string {
  const rate = seconds > 0 ? ` · ${count(Math.round(p.written / seconds))} orders/s` : '';
  const total = p.total !== undefined ? ` of ${count(p.total)}` : '';
  return `${count(p.written)}${total} orders · ${p.pages} page${p.pages === 1 ? '' : 's'}${rate}`;
}

/** The footer's lines, plain text (the verb dims them). */
export function footerLines(result: ListResult, input: FooterInput): string[] {
  const last = result.last;
  if (!last) return [];
  const lines: string[] = [];
  const { written, pages } = result;
  const next = last.pageInfo.hasNextPage && last.pageInfo.endCursor ? last.pageInfo.endCursor : undefined;
  const total = last.totalCount;
  if (input.follow) {
    const stopped = next ? ` (stopped at --limit ${input.limit})` : '';
    lines.push(`${count(written)} of ${count(total)} orders in ${count(pages)} page${pages === 1 ? '' : 's'}${stopped}.`);
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
  if (input.follow) {
    if (next) lines.push(`Next: ${safeLine(input.resume(next, input.all ? undefined : input.limit))}`);
  } else if (next) lines.push(`Next page: ${safeLine(input.resume(next))}`);
  else lines.push('This is the last page.');
  return lines;
}

/** The flags of `orders list` a resume command repeats. */
export interface ResumeFlags {
  all: boolean;
  /** --rate as the user wrote it (a resume keeps the same budget). */
  rateText?: string;
  size?: number;
  pageButtons?: number;
  columns?: string[];
  format?: string;
  /** The field list of --json or --jsonl. */
  fields?: string[];
  csvRaw?: boolean;
}

/** The command line that continues from `cursor` with the same flags. */
export function resumeCommand(opts: ResumeFlags, profile: string | undefined, cursor: string, remaining?: number): string {
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

/**
 * A run a failure ended: what fetched was written, so the error names the cursor to resume from
 * (`resume` builds the command); an interruption gets a notice and exit 130. A failure before
 * anything was written is passed on as it is.
 */
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
