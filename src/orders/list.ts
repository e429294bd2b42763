/**
 * The paging loop of `orders list`: follows cursors (prefetching one page ahead when the page
 * cursors allow it), hands each page to a writer as it arrives and reports progress to a callback.
 * No printing here: the verb renders the footer, the progress and the errors.
 */
import { pageWalk } from '../api/page-walk.js';
import { InterruptedError } from '../core/errors.js';
import type { PaceClock } from '../core/timers.js';
import type { OrderRecord, OrdersPage } from '../schemas.js';
import { type FetchedPage, fetchPageLater, type PagerEnv } from './pager.js';
import { createPageLimiter } from './rate.js';

/** Where the pages go: the verb's writer (JSON, JSONL, CSV, a table). */
export interface OrderWriter {
  /** Writes the orders of one page. */
  page(orders: OrderRecord[]): Promise<void>;
  /** Finishes the document (closes the JSON array, prints the table), also after a failure. */
  end(): Promise<void>;
}

export interface ListRequest {
  size?: number;
  cursor?: string;
  pageButtons?: number;
  /** Follow the cursors (--all or --limit). */
  follow: boolean;
  limit?: number;
  /** Whether the writer reads record fields (table, plain, CSV), so records are checked. */
  records: boolean;
  /** Most page requests started per second (`--rate`); default: as fast as the server allows. */
  rate?: number;
  /** Hears of a page tried again (the verb prints it). */
  onNotice?: (text: string) => void;
}

export interface ListProgress {
  written: number;
  pages: number;
  total?: number;
}

export interface ListResult {
  written: number;
  pages: number;
  /** The last page written. */
  last?: OrdersPage;
  /** The cursor of the page that would come next (where a resume starts). */
  cursor?: string;
  /** The largest page the server returned that still had more after it, when it was smaller than asked: the server capped --size. */
  cappedAt?: number;
  /** The failure that ended the run, after what was fetched was written. */
  failure?: unknown;
}

/** Lists orders page by page into `writer`; a failure is returned (with what was written), not thrown. */
export async function listOrders(
  deps: PagerEnv & { now(): number; pace: PaceClock },
  req: ListRequest,
  writer: OrderWriter,
  onPage?: (p: ListProgress) => void,
): Promise<ListResult> {
  const sizeFor = (written: number) => {
    if (req.limit === undefined) return req.size;
    // Under --limit the last page asks for no more than is left, so its endCursor resumes exactly.
    const remaining = req.limit - written;
    return Math.min(req.size ?? remaining, remaining);
  };
  // Followed pages share one adaptive limiter: it backs off on 429/503 and settles under the server's limit.
  const limiter = req.follow ? createPageLimiter(deps, { rate: req.rate, onNotice: req.onNotice }) : undefined;
  const request = (at: string | undefined, written: number) => {
    const p = fetchPageLater(
      deps,
      { size: sizeFor(written), cursor: at, buttonNum: req.pageButtons },
      { records: req.records, onNotice: req.onNotice, limiter },
    );
    p.catch(() => {}); // awaited below; this only keeps an abandoned prefetch from being "unhandled"
    return p;
  };
  const result: ListResult = { written: 0, pages: 0, cursor: req.cursor };
  try {
    // In flight, in order: the page asked for with each cursor. The head is always the page that
    // follows what was written; entries behind it are guesses taken from pageCursors.
    // A page is read (parsed and checked) only when it is the head: pages ahead wait as text.
    const queue: { cursor: string | undefined; page: Promise<FetchedPage> }[] = [{ cursor: req.cursor, page: request(req.cursor, 0) }];
    // Guessing needs a constant page size; a miss (an unaligned --cursor) turns it off.
    let guess = req.limit === undefined && req.follow;
    // Pages that do not end (a repeated cursor, more records than the total) stop the walk before they are written.
    const walk = pageWalk(req.cursor);
    for (;;) {
      const head = queue.shift() as (typeof queue)[number];
      const asked = sizeFor(result.written);
      const page = await (await head.page).read();
      if (deps.signal.aborted) throw new InterruptedError();
      const orders = (page.edges ?? []).map((e) => e.node);
      if (req.follow) walk.check({ pageInfo: page.pageInfo, totalCount: page.totalCount, records: orders.length });
      const next = page.pageInfo.endCursor;
      const total = result.written + orders.length;
      const more = req.follow && page.pageInfo.hasNextPage && !!next && orders.length > 0 && (req.limit === undefined || total < req.limit);
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
      if (page.pageInfo.hasNextPage && asked !== undefined && orders.length > 0 && orders.length < asked)
        result.cappedAt = Math.max(result.cappedAt ?? 0, orders.length);
      result.written = total;
      result.pages++;
      result.last = page;
      onPage?.({ written: total, pages: result.pages, total: page.totalCount });
      if (!page.pageInfo.hasNextPage || !next || orders.length === 0) break;
      result.cursor = next;
      if (!more) break;
    }
  } catch (error) {
    result.failure = error;
  } finally {
    // A listing that failed before its first page writes nothing: an empty `[]` in a pipe would read as "no orders".
    if (result.pages > 0 || result.failure === undefined) await writer.end();
  }
  return result;
}

/**
 * Where the last page sits: its number from pageCursors, and the number of pages counted with the
 * page size the server actually returned (a server may cap --size), not the size asked for.
 */
export function pagePosition(page: OrdersPage): { current?: number; total?: number; around: number[] } {
  const around = page.pageCursors.around;
  const current = around.find((c) => c.isCurrent)?.page;
  const returned = page.edges?.length ?? 0;
  let total: number | undefined;
  if (!page.pageInfo.hasNextPage) total = current;
  else if (returned > 0) total = Math.max(current ?? 1, Math.ceil(page.totalCount / returned));
  return { current, total, around: around.map((c) => c.page) };
}
