/**
 * The one paginator of GET /v1/orders, for `orders list` (listOrders), `orders update` (fetchPage) and
 * `opcli api --paginate` (orderPages): one rule ends a walk (pageWalk), one pace (createPageLimiter).
 * A page answered 500, which the HTTP core does not retry, gets a few slower rounds here (a GET is safe
 * to repeat); a failure the core already retried is not asked for again.
 */
import { PATHS } from '../api/service.js';
import { ApiError, ExitCode, InterruptedError, OpcliError } from '../core/errors.js';
import { ordersPageShell, ordersQuery } from '../core/schema-checks.js';
import type { PaceClock } from '../core/timers.js';
import { createAdaptiveLimiter, type Permit, type RequestLimiter } from '../http/adaptive.js';
import { clause, type HttpClient, type HttpRequest, readBody } from '../http/client.js';
import { backoffDelay, formatWait, shouldRetryStatus } from '../http/retry.js';
import type { OrderRecord, OrdersPage } from '../schemas.js';
import { count, counted } from '../text/count.js';
import { safeLine, safeText } from '../text/safe.js';

/** Start-up fast path (ARCHITECTURE.md): zod loads only for a table's records or a page core/schema-checks.ts cannot vouch for. */
const schemas = () => import('../schemas.js');

/** What paging uses: the HTTP client, Ctrl-C, and the sleep between rounds. */
export interface PagerEnv {
  http(): Promise<HttpClient>;
  signal: AbortSignal;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Extra rounds for a page answered with a 5xx the HTTP core does not retry (a 500). */
const PAGE_ROUNDS = 2;

export interface PageRequest {
  size?: number;
  cursor?: string;
  buttonNum?: number;
}

/** Whether a failed page gets a round here: a 5xx the HTTP core did not already retry (a 500; a GET is safe to repeat). */
function retriedHere(error: unknown): boolean {
  return error instanceof ApiError && error.status >= 500 && !shouldRetryStatus('GET', error.status);
}

/** Checks a page's envelope; its records only when `records` is set (--json and --jsonl pass them on as sent: their shape is "not shown"). */
export async function checkPage(body: unknown, records: boolean): Promise<OrdersPage> {
  // The schema runs only when the compiled check is not sure: it decides and names the problem.
  const shell = ordersPageShell(body) ? undefined : (await schemas()).OrdersPageShell.safeParse(body);
  const OrderRecord = records ? (await schemas()).OrderRecord : undefined;
  const edges = (body as { edges?: unknown } | null)?.edges;
  let problem = !shell || shell.success ? undefined : shell.error.issues[0];
  let where = problem ? problem.path.join('.') : '';
  if (!problem && edges !== undefined) {
    if (!Array.isArray(edges)) where = 'edges';
    else {
      for (const [i, edge] of edges.entries()) {
        const node = (edge as { node?: unknown } | null)?.node;
        if (node === null || typeof node !== 'object' || Array.isArray(node)) {
          where = `edges.${i}.node`;
          break;
        }
        if (OrderRecord) {
          const parsed = OrderRecord.safeParse(node);
          if (!parsed.success) {
            problem = parsed.error.issues[0];
            where = `edges.${i}.node.${problem?.path.join('.')}`;
            break;
          }
        }
      }
    }
  }
  if (where || problem) {
    throw new OpcliError(`Unexpected answer from GET ${PATHS.orders}: ${where || 'body'}: ${problem?.message ?? 'expected an object'}.`, {
      hint: 'The server does not answer as the API specification says; check the base URL.',
    });
  }
  return body as OrdersPage;
}

export interface PageOptions {
  /** Check every record (a table or CSV reads their fields); default true. */
  records?: boolean;
  onNotice?: (text: string) => void;
  limiter?: RequestLimiter;
}

/** A page fetched and not yet read: `read()` parses and checks it. */
export interface FetchedPage {
  read(): Promise<OrdersPage>;
}

/** Fetches one page, with extra rounds for a 500 (`onNotice` hears of each); with a `limiter` every attempt waits for its permit. */
export async function fetchPage(deps: PagerEnv, query: PageRequest, options: PageOptions = {}): Promise<OrdersPage> {
  return (await fetchPageLater(deps, query, options)).read();
}

/**
 * Fetches one page as fetchPage does, its body left as text until `read()`: a page fetched ahead and
 * parsed early is promoted to V8's old generation, which took `orders list --all` past 100 MiB.
 */
export async function fetchPageLater(deps: PagerEnv, query: PageRequest, options: PageOptions = {}): Promise<FetchedPage> {
  const http = await deps.http();
  const records = options.records ?? true;
  // A table checks every record: its schema loads while the first request is in flight.
  if (records) void schemas().catch(() => {});
  const q = ordersQuery({ ...query }) ? query : (await schemas()).OrdersQuery.parse(query);
  for (let round = 0; ; round++) {
    try {
      const res = await http.request({ method: 'GET', url: PATHS.orders, query: q, signal: deps.signal, limiter: options.limiter, rawBody: true });
      return { read: () => checkPage(readBody(res.body as string, res.headers), records) };
    } catch (error) {
      if (round >= PAGE_ROUNDS || !retriedHere(error) || deps.signal.aborted) throw error;
      const delay = backoffDelay(round + 3, Math.random);
      options.onNotice?.(
        `${safeText(clause(error instanceof Error ? error.message : String(error)))}; trying this page again in ${(delay / 1000).toFixed(1)}s\n`,
      );
      await deps.sleep(delay, deps.signal);
    }
  }
}

// The rule that ends a walk over pages, so a server that keeps saying `hasNextPage: true` is not
// followed forever: a PaginationError when an endCursor comes back that the walk already followed,
// or when more records arrived than `largest totalCount + (largest − first totalCount) + the largest
// page` allows (orders created during the walk raise the total and may push a record already received
// into a later page; one page of slack for a total counted before its page was cut). A page is
// checked before it is passed on, so the page that breaks the rule is not printed.

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

/** A walk from `start`; `check` each page. CHOICE (docs/spec-choices.md#pages-that-do-not-end): a repeated cursor or a total exceeded ends it. */
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

// The pace of `orders list --all` / `--limit`: one adaptive limiter (src/http/adaptive.ts) for a run's
// pages; pages follow cursors, so at most two are in flight and the limiter adds the rate.

/** Pages in flight at once: the page being asked for and the one guessed ahead. */
export const PAGES_IN_FLIGHT = 2;

/** The limiter for one run; `onNotice` hears of each refusal and the pause before the page is asked for again. */
export function createPageLimiter(deps: { pace: PaceClock }, options: { rate?: number; onNotice?: (text: string) => void } = {}): RequestLimiter {
  const inner = createAdaptiveLimiter({ maxConcurrency: PAGES_IN_FLIGHT, maxRate: options.rate, ...deps.pace });
  /** The limiter's permit behind each one handed out, for a retry's Retry-After. */
  const inners = new WeakMap<Permit, Permit>();
  return {
    snapshot: () => inner.snapshot(),
    async acquire(signal, retryOf) {
      const permit = await inner.acquire(signal, retryOf && inners.get(retryOf));
      const outer: Permit = {
        sent: () => permit.sent(),
        done(outcome) {
          permit.done(outcome);
          if (outcome.status !== 429 && outcome.status !== 503) return;
          const wait = inner.snapshot().pauseLeftMs;
          options.onNotice?.(`GET ${PATHS.orders} answered ${outcome.status}; retrying${wait > 0 ? ` in ${formatWait(wait)}` : ''}\n`);
        },
      };
      inners.set(outer, permit);
      return outer;
    },
  };
}

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

/** The progress line of a run that follows pages: orders (of the total), pages and the rate so far. */
export function progressLine(p: ListProgress, seconds: number): string {
  const rate = seconds > 0 ? ` · ${count(Math.round(p.written / seconds))} orders/s` : '';
  const total = p.total !== undefined ? ` of ${count(p.total)}` : '';
  return `${count(p.written)}${total} orders · ${counted(p.pages, 'page')}${rate}`;
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
    // In flight, in order: the head follows what was written, entries behind it are guesses from
    // pageCursors; a page is read (parsed and checked) only when it is the head.
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

/** Where the last page sits, pages counted at the size the server returned (it may cap --size), not the size asked for. */
export function pagePosition(page: OrdersPage): { current?: number; total?: number; around: number[] } {
  const around = page.pageCursors.around;
  const current = around.find((c) => c.isCurrent)?.page;
  const returned = page.edges?.length ?? 0;
  let total: number | undefined;
  if (!page.pageInfo.hasNextPage) total = current;
  else if (returned > 0) total = Math.max(current ?? 1, Math.ceil(page.totalCount / returned));
  return { current, total, around: around.map((c) => c.page) };
}

/** The request `opcli api` built; `pathOnly` is the path without its query string, as errors name it. */
export type RawPageRequest = Pick<HttpRequest, 'url' | 'auth' | 'headers'> & { pathOnly: string; query: Record<string, string> };

/** One page as it came (unknown fields kept), with the answer's status line and headers. */
export interface RawPageAnswer {
  status: number;
  headers: Record<string, string>;
  page: { edges?: { node: unknown }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
}

/** `opcli api --paginate`: follows endCursor from `query.cursor` to the last page, each page checked and passed on as sent. */
export async function* orderPages(http: HttpClient, req: RawPageRequest, signal: AbortSignal, limiter?: RequestLimiter): AsyncGenerator<RawPageAnswer> {
  let cursor = req.query.cursor;
  const walk = pageWalk(cursor);
  for (;;) {
    const res = await http.request({ method: 'GET', url: req.url, query: { ...req.query, cursor }, auth: req.auth, headers: req.headers, signal, limiter });
    const checked = (await schemas()).OrdersPage.safeParse(res.body);
    if (!checked.success) {
      throw new OpcliError(
        `GET ${req.pathOnly} did not answer a page of orders: ${checked.error.issues[0]?.path.join('.')}: ${checked.error.issues[0]?.message}`,
      );
    }
    const page = res.body as RawPageAnswer['page'];
    walk.check({ pageInfo: page.pageInfo, totalCount: (res.body as { totalCount?: number }).totalCount, records: (page.edges ?? []).length });
    yield { status: res.status, headers: res.headers, page };
    if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor || (page.edges ?? []).length === 0) return;
    cursor = page.pageInfo.endCursor;
  }
}
