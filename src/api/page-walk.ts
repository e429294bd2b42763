/**
 * The rule that ends a walk over pages of orders, whatever the server answers. Both paginators use
 * it: `opcli api --paginate` (src/api/paginate.ts) and `orders list --all` (src/orders/list.ts).
 * A server that keeps saying `hasNextPage: true` would otherwise be followed forever (issue 38 row 9:
 * 78,511 requests in 45 s, "1,064,180 of 5 orders"), so a walk stops with a PaginationError when:
 *
 * - an endCursor comes back that this walk has already followed (or started from): the pages
 *   after it would repeat, in a loop;
 * - more records arrived than the server's totalCount can account for. The allowance is
 *   `largest totalCount seen + (largest − first totalCount) + the largest page received`: orders
 *   created during the walk raise the total on later pages (the largest total counts), each of
 *   them may also push one record already received into a later page (the growth counts twice),
 *   and one page of slack covers a total counted a moment before its page was cut.
 *
 * The check runs before a page is passed on, so what was printed before it stays and the page that
 * breaks the rule is not printed.
 */
import { ExitCode, OpcliError } from '../core/errors.js';
import { safeLine } from '../text/safe.js';

/** A walk over pages stopped because the server's pages do not end: exit 1, a bad server answer. */
export class PaginationError extends OpcliError {
  constructor(message: string, details: Record<string, unknown>) {
    super(message, {
      exitCode: ExitCode.failed,
      hint: "The server's pagination is broken; report it to the service.",
      details,
    });
  }
}

/** What the rule reads of one page. */
export interface WalkedPage {
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  totalCount?: number;
  /** How many records the page holds. */
  records: number;
}

/** A cursor as it may be shown: server text, made safe and kept short. */
function shown(cursor: string): string {
  const line = safeLine(cursor);
  return line.length > 40 ? `${line.slice(0, 40)}…` : line;
}

/**
 * Starts a walk (from `start`, the cursor of its first request, if any); `check` each page as it arrives.
 * CHOICE (docs/spec-choices.md#pages-that-do-not-end): a repeated cursor or a total exceeded ends the walk.
 */
export function pageWalk(start?: string): { check(page: WalkedPage): void } {
  const followed = new Set<string>(start ? [start] : []);
  let received = 0;
  let firstTotal: number | undefined;
  let largestTotal = 0;
  let largestPage = 0;
  return {
    check(page) {
      received += page.records;
      largestPage = Math.max(largestPage, page.records);
      if (typeof page.totalCount === 'number' && Number.isFinite(page.totalCount)) {
        firstTotal ??= page.totalCount;
        largestTotal = Math.max(largestTotal, page.totalCount);
        const allowed = largestTotal + (largestTotal - firstTotal) + largestPage;
        if (received > allowed) {
          throw new PaginationError(`The server sent ${received} orders, more than the ${largestTotal} its totalCount announced: its pages do not end.`, {
            received,
            totalCount: largestTotal,
          });
        }
      }
      const next = page.pageInfo.endCursor;
      if (!page.pageInfo.hasNextPage || !next) return;
      if (followed.has(next)) {
        throw new PaginationError(`The server answered endCursor "${shown(next)}" a second time: following it would fetch the same pages again, forever.`, {
          repeatedCursor: next,
        });
      }
      followed.add(next);
    },
  };
}
