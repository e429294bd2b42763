/**
 * Quick checks of a page of GET /v1/orders and of its query, for the common case of a well-formed
 * page. Building and running the zod schemas cost a one-off command several milliseconds at start-up;
 * these pass only what the schema certainly accepts (the same rules, by hand), and anything else
 * goes to the schema, which decides and names the problem. test/orders/page-check.test.ts holds
 * them to OrdersPageShell and OrdersQuery on generated pages.
 */

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isCursor = (value: unknown) => value === null || typeof value === 'string';

/** Whether `body` certainly passes OrdersPageShell (pageInfo, pageCursors, totalCount; other keys are allowed). */
export function isPageShell(body: unknown): boolean {
  if (!isObject(body) || !isNumber(body.totalCount)) return false;
  const info = body.pageInfo;
  if (!isObject(info) || !isCursor(info.startCursor) || !isCursor(info.endCursor)) return false;
  if (typeof info.hasNextPage !== 'boolean' || typeof info.hasPreviousPage !== 'boolean') return false;
  const cursors = body.pageCursors;
  if (!isObject(cursors) || !Array.isArray(cursors.around)) return false;
  return cursors.around.every((c) => isObject(c) && typeof c.cursor === 'string' && isNumber(c.page) && typeof c.isCurrent === 'boolean');
}

/** Whether `query` certainly passes OrdersQuery unchanged: only its keys, each absent or of its kind. */
export function isPlainQuery(query: Record<string, unknown>): boolean {
  const { size, cursor, buttonNum, ...rest } = query;
  if (Object.keys(rest).length > 0) return false;
  const whole = (n: unknown, min: number) => n === undefined || (typeof n === 'number' && Number.isSafeInteger(n) && n >= min);
  return whole(size, 1) && whole(buttonNum, 0) && (cursor === undefined || typeof cursor === 'string');
}
