/** The footer of `orders list` (stderr): how many orders of how many, where the page sits, what comes next. */
import { safeLine } from '../text/safe.js';
import { type ListResult, pagePosition } from './list.js';

export interface FooterInput {
  follow: boolean;
  all: boolean;
  size?: number;
  limit?: number;
  /** The command that continues from a cursor. */
  resume(cursor: string, remaining?: number): string;
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
    lines.push(`${written} of ${total} orders in ${pages} page${pages === 1 ? '' : 's'}${stopped}.`);
  } else {
    const pos = pagePosition(last);
    const where =
      pos.current !== undefined
        ? ` · page ${pos.current}${pos.total !== undefined ? ` of ${pos.total}` : ''} (pages ${pos.around.map((p) => (p === pos.current ? `[${p}]` : String(p))).join(' ')})`
        : '';
    lines.push(`${written} of ${total} orders${where}`);
  }
  if (result.cappedAt !== undefined && input.size !== undefined) {
    lines.push(`The server returned at most ${result.cappedAt} orders per page (--size ${input.size} asked for more); pages are counted at ${result.cappedAt}.`);
  }
  if (input.follow) {
    if (next) lines.push(`Next: ${safeLine(input.resume(next, input.all ? undefined : input.limit))}`);
  } else if (next) lines.push(`Next page: ${safeLine(input.resume(next))}`);
  else lines.push('This is the last page.');
  return lines;
}
