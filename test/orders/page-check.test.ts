/**
 * The quick checks of a page and its query stand in for OrdersPageShell and OrdersQuery on every
 * page, so they are held to them: whatever a quick check passes, the schema passes; and the pages
 * a server answers with (the sandbox's shape) pass the quick check, so the fast path is the one taken.
 */
import { fc, test } from '@fast-check/vitest';
import { expect, it } from 'vitest';
import { isPageShell, isPlainQuery } from '../../src/orders/page-check.js';
import { OrdersPageShell, OrdersQuery } from '../../src/schemas.js';

const odd = fc.constantFrom<unknown>(null, 'x', 1, true, [], {}, Number.POSITIVE_INFINITY, 1.5, -1, 0);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 15, arbitrary: arb }, { weight: 1, arbitrary: odd });
const cursor = maybe(fc.oneof(fc.string({ maxLength: 4 }), fc.constant(null)));
const page = fc.record(
  {
    pageInfo: maybe(
      fc.record({ startCursor: cursor, endCursor: cursor, hasNextPage: maybe(fc.boolean()), hasPreviousPage: maybe(fc.boolean()) }, { requiredKeys: [] }),
    ),
    pageCursors: maybe(
      fc.record(
        {
          around: maybe(
            fc.array(maybe(fc.record({ cursor: maybe(fc.string({ maxLength: 3 })), page: maybe(fc.integer()), isCurrent: maybe(fc.boolean()) })), {
              maxLength: 4,
            }),
          ),
        },
        { requiredKeys: [] },
      ),
    ),
    totalCount: maybe(fc.oneof(fc.integer(), fc.double())),
    edges: fc.constant([]),
    extra: fc.string({ maxLength: 3 }),
  },
  { requiredKeys: ['pageInfo', 'pageCursors', 'totalCount'] },
);
const counts = { passed: 0, seen: 0 };

test.prop([page], { numRuns: 4000 })('a page the quick check passes, OrdersPageShell passes', (generated) => {
  const body = JSON.parse(JSON.stringify(generated));
  counts.seen++;
  if (!isPageShell(body)) return;
  counts.passed++;
  expect(OrdersPageShell.safeParse(body).success).toBe(true);
});

test.prop([page], { numRuns: 2000 })('a page OrdersPageShell passes, the quick check passes (the fast path is the one taken)', (generated) => {
  const body = JSON.parse(JSON.stringify(generated));
  if (OrdersPageShell.safeParse(body).success) expect(isPageShell(body)).toBe(true);
});

it('the generated pages reached the fast path often', () => {
  expect(counts.seen).toBeGreaterThan(0);
  expect(counts.passed).toBeGreaterThanOrEqual(counts.seen / 20);
});

const query = fc.record(
  {
    size: maybe(fc.integer({ min: -2, max: 500 })),
    cursor: maybe(fc.string({ maxLength: 4 })),
    buttonNum: maybe(fc.integer({ min: -2, max: 9 })),
    other: fc.string({ maxLength: 2 }),
  },
  { requiredKeys: [] },
);

test.prop([query], { numRuns: 3000 })('a query the quick check passes, OrdersQuery passes unchanged', (q) => {
  if (!isPlainQuery(q)) return;
  const parsed = OrdersQuery.safeParse(q);
  expect(parsed.success).toBe(true);
  // What goes on the wire is the same: the keys with a value, as text.
  const wire = (v: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== undefined)
        .map(([k, x]) => [k, String(x)]),
    );
  expect(wire(q)).toEqual(wire(parsed.data as Record<string, unknown>));
});
