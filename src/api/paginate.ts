/** `opcli api GET /v1/orders --paginate`: the pages, each checked with the shared schema, passed on as the server sent them. */
import { OpcliError } from '../core/errors.js';
import type { RequestLimiter } from '../http/adaptive.js';
import type { HttpClient } from '../http/client.js';
import { OrdersPage } from '../schemas.js';
import type { ApiRequest } from '../commands/api/raw-request.js';
import { pageWalk } from './page-walk.js';

/** One page as it came (unknown fields kept), with the answer's status line and headers. */
export interface RawPageAnswer {
  status: number;
  headers: Record<string, string>;
  page: { edges?: { node: unknown }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
}

/**
 * Follows endCursor from `query.cursor` to the last page. A redirect (the client's RedirectError), or
 * a body that is not a page of orders, stops the walk, and so do pages that do not end (a repeated
 * cursor, more records than the total: src/api/page-walk.ts). With a `limiter` (`orders list --all`'s,
 * src/orders/rate.ts) the pages are paced at the rate the server allows, as learnt.
 */
export async function* orderPages(http: HttpClient, req: ApiRequest, signal: AbortSignal, limiter?: RequestLimiter): AsyncGenerator<RawPageAnswer> {
  let cursor = req.query.cursor;
  const walk = pageWalk(cursor);
  for (;;) {
    const res = await http.request({ method: 'GET', url: req.path, query: { ...req.query, cursor }, auth: req.auth, headers: req.headers, signal, limiter });
    const checked = OrdersPage.safeParse(res.body);
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
