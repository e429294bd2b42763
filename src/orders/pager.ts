/**
 * Cursor pagination over GET /v1/orders. The HTTP core already retries a GET on 429 (honouring
 * Retry-After), 502-504 and lost connections, OPCLI_HTTP_RETRIES times; a page answered 500, which
 * the core does not retry, gets a few slower rounds here (a GET is safe to repeat). A failure the
 * core already retried is not asked for again, so a refused page takes the documented number of
 * requests. What still fails is reported with the cursor to resume from.
 */
import { PATHS } from '../api/service.js';
import { ApiError, NetworkError, OpcliError } from '../core/errors.js';
import type { RequestLimiter } from '../http/adaptive.js';
import { readBody } from '../http/body.js';
import { clause, type HttpClient, wouldRecur } from '../http/client.js';
import { backoffDelay, shouldRetryStatus } from '../http/retry.js';
import type { OrdersPage } from '../schemas.js';
import { ordersPageShell, ordersQuery } from '../core/schema-checks.js';
import { safeText } from '../text/safe.js';

/**
 * Start-up fast path (ARCHITECTURE.md; bench/startup.mjs, test/orders/output-loads.test.ts): the
 * schemas, loaded only when a page needs them (a table's records, or a page or query the checks
 * compiled from them, src/core/schema-checks.ts, cannot vouch for): `orders list --json` over pages a
 * server answers as the spec shows never loads zod.
 */
const schemas = () => import('../schemas.js');

/** What paging uses: the HTTP client, Ctrl-C, and the sleep between rounds. */
export interface PagerEnv {
  http(): Promise<HttpClient>;
  signal: AbortSignal;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Extra rounds for a page answered with a 5xx the HTTP core does not retry (a 500). */
export const PAGE_ROUNDS = 2;

export interface PageRequest {
  size?: number;
  cursor?: string;
  buttonNum?: number;
}

/** Whether a failure of a GET is worth another round. */
export function isTransient(error: unknown): boolean {
  // An answer too large or too slow would be so again.
  if (error instanceof NetworkError) return !wouldRecur(error);
  return error instanceof ApiError && (error.status === 429 || error.status >= 500);
}

/** Whether a failed page gets a round here: a 5xx the HTTP core did not already retry. */
function retriedHere(error: unknown): boolean {
  return isTransient(error) && error instanceof ApiError && error.status >= 500 && !shouldRetryStatus('GET', error.status);
}

/**
 * Checks a page's envelope with the shared schema. Records are checked with OrderRecord only when
 * `records` is set (the table and CSV read their fields); --json and --jsonl pass each record on as
 * the server sent it (its shape is "not shown"), which keeps 100,000 orders fast.
 */
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
  rounds?: number;
  onNotice?: (text: string) => void;
  limiter?: RequestLimiter;
}

/** A page fetched and not yet read: `read()` parses and checks it. */
export interface FetchedPage {
  read(): Promise<OrdersPage>;
}

/**
 * Fetches one page, with extra rounds for transient failures; `onNotice` hears of each round (the
 * verb prints it). With a `limiter` every attempt waits for its permit, and a 429 or 503 is tried
 * again after the limiter's pause instead of the HTTP core's own.
 */
export async function fetchPage(deps: PagerEnv, query: PageRequest, options: PageOptions = {}): Promise<OrdersPage> {
  return (await fetchPageLater(deps, query, options)).read();
}

/**
 * Fetches one page as fetchPage does, and leaves its body as text until `read()`. A listing that
 * fetches pages ahead keeps each waiting page as one string: parsed early, its thousands of objects
 * lived through young-generation collections, were moved to the old generation and stayed there
 * until a full collection, which took `orders list --all` past its 100 MiB goal on Node 24
 * (docs/benchmarks.md#figures-behind-the-code).
 */
export async function fetchPageLater(deps: PagerEnv, query: PageRequest, options: PageOptions = {}): Promise<FetchedPage> {
  const http = await deps.http();
  const records = options.records ?? true;
  // A table checks every record: its schema loads while the first request is in flight.
  if (records) void schemas().catch(() => {});
  const q = ordersQuery({ ...query }) ? query : (await schemas()).OrdersQuery.parse(query);
  const rounds = options.rounds ?? PAGE_ROUNDS;
  for (let round = 0; ; round++) {
    try {
      const res = await http.request({ method: 'GET', url: PATHS.orders, query: q, signal: deps.signal, limiter: options.limiter, rawBody: true });
      return { read: () => checkPage(readBody(res.body as string, res.headers), records) };
    } catch (error) {
      if (round >= rounds || !retriedHere(error) || deps.signal.aborted) throw error;
      const delay = backoffDelay(round + 3, Math.random);
      options.onNotice?.(
        `${safeText(clause(error instanceof Error ? error.message : String(error)))}; trying this page again in ${(delay / 1000).toFixed(1)}s\n`,
      );
      await deps.sleep(delay, deps.signal);
    }
  }
}
