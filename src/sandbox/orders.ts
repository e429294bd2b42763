/** Endpoints 4 and 5: the cursor-paginated order list and the order update. */
import * as z from 'zod';
import { Order, type OrderRecord, OrdersQuery } from '../schemas.js';
import { authorize } from './tokens.js';
import type { Ctx, Reply } from './http.js';
import { invalidRequest, json, readBody, validate } from './http.js';
import { generateOrder, orderIndex } from './seed.js';
import type { SandboxState } from './state.js';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 250;
export const DEFAULT_BUTTON_NUM = 5;
const MAX_BUTTON_NUM = 100;

/** The sandbox's limits on top of the shared query schema. */
const SandboxOrdersQuery = OrdersQuery.extend({
  size: OrdersQuery.shape.size.pipe(
    z
      .number()
      .max(MAX_PAGE_SIZE, { message: `size is at most ${MAX_PAGE_SIZE}` })
      .optional(),
  ),
  buttonNum: OrdersQuery.shape.buttonNum.pipe(
    z
      .number()
      .max(MAX_BUTTON_NUM, { message: `buttonNum is at most ${MAX_BUTTON_NUM}` })
      .optional(),
  ),
});

/** A cursor is "the records after the first n", opaque to clients. */
function encodeCursor(n: number): string {
  return Buffer.from(`o1:${n}`).toString('base64url');
}

function decodeCursor(cursor: string, total: number): number | null {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  const m = /^o1:(0|[1-9]\d{0,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m?.[1]) return null;
  const n = Number(m[1]);
  return n <= total ? n : null;
}

export function orderAt(state: SandboxState, index: number): OrderRecord {
  return state.orderOverrides.get(index) ?? generateOrder(state.seed, index);
}

/** GET /v1/orders. */
export function listOrders(state: SandboxState, ctx: Ctx): Reply {
  const denied = authorize(state, ctx, 'GET /v1/orders');
  if (denied) return denied;
  const query = validate(SandboxOrdersQuery, ctx.query, 'query');
  if (!query.ok) return query.reply;
  const total = state.orderCount;
  const size = query.data.size ?? DEFAULT_PAGE_SIZE;
  const buttonNum = query.data.buttonNum ?? DEFAULT_BUTTON_NUM;
  let offset = 0;
  if (query.data.cursor !== undefined) {
    const decoded = decodeCursor(query.data.cursor, total);
    if (decoded === null) {
      return invalidRequest('invalid cursor: pass a cursor from pageInfo or pageCursors unchanged', [
        { path: 'cursor', message: 'not a cursor this server issued' },
      ]);
    }
    offset = decoded;
  }
  const end = Math.min(total, offset + size);
  const edges: { node: OrderRecord; cursor: string }[] = [];
  for (let i = offset; i < end; i++) edges.push({ node: orderAt(state, i), cursor: encodeCursor(i + 1) });

  const pages = Math.max(1, Math.ceil(total / size));
  const current = Math.min(pages, Math.floor(offset / size) + 1);
  const count = Math.min(buttonNum, pages);
  const first = Math.max(1, Math.min(current - Math.floor((count - 1) / 2), pages - count + 1));
  const around = [];
  for (let p = first; p < first + count; p++) {
    around.push({ cursor: encodeCursor((p - 1) * size), page: p, isCurrent: p === current });
  }
  return json(200, {
    edges,
    pageInfo: {
      startCursor: edges.length > 0 ? encodeCursor(offset) : null,
      endCursor: edges.length > 0 ? encodeCursor(end) : null,
      hasNextPage: end < total,
      hasPreviousPage: offset > 0,
    },
    pageCursors: { around },
    totalCount: total,
  });
}

/** PUT /v1/orders/{sourceOrderId}: replaces the order's fields with the body. */
export function updateOrder(state: SandboxState, ctx: Ctx): Reply {
  const denied = authorize(state, ctx, 'PUT /v1/orders/{sourceOrderId}');
  if (denied) return denied;
  const id = ctx.params[0] ?? '';
  const body = readBody(ctx, Order, 'order');
  if (!body.ok) return body.reply;
  const index = orderIndex(id, state.orderCount);
  if (index < 0) return json(404, { error: 'not_found', message: `order ${id} not found` });
  state.orderOverrides.set(index, { sourceOrderId: id, ...body.data });
  state.counters.ordersUpdated++;
  return json(200, { status: 'ok' });
}
