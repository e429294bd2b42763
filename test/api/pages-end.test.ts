/**
 * Pagination that ends (issue 38 row 9): a server that keeps answering `hasNextPage: true`, with the
 * same endCursor or with more records than its totalCount, stops `opcli api --paginate` and
 * `orders list --all` with exit 1 and an error naming it; what was printed before stays. The rule
 * (src/orders/pages.ts) is also checked over families of honest and hostile servers.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { PaginationError, pageWalk } from '../../src/orders/pages.js';
import { tempConfigDir } from '../helpers.js';
import { type Answer, page, runAgainst } from '../orders/scripted.js';

const order = (n: number) => ({ sourceOrderId: `ord_${n}`, sourceOrderNumber: `#${n}`, currency: 'USD', total: n });
const five = [1, 2, 3, 4, 5].map(order);
/** Enough answers that a walk which never stops would make hundreds of requests. */
const forever = (answer: (n: number) => Answer) => Array.from({ length: 400 }, (_, i) => () => answer(i));
const noWait = async () => {};

let cfg: { dir: string; cleanup: () => void };
beforeEach(() => {
  cfg = tempConfigDir();
});
afterEach(() => cfg.cleanup());
/** The error a run with --json or --jsonl reports: one JSON line on stderr. */
const errorOf = (stderr: string) => JSON.parse(stderr.trim().split('\n').at(-1) as string).error;
const run = (answers: Parameters<typeof runAgainst>[0], argv: string[]) => runAgainst(answers, argv, { sleep: noWait, env: { OPCLI_CONFIG_DIR: cfg.dir } });

describe('a server that always answers hasNextPage with the same endCursor', () => {
  const sameCursor = forever(() => ({ status: 200, body: page(five, { next: 'c1', total: 5 }) }));

  test('api --paginate --jsonl: the first page printed, then exit 1 naming the repeated cursor; two requests', async () => {
    const r = await run(sameCursor, ['api', 'GET', '/v1/orders', '--paginate', '--jsonl']);
    expect(r.code).toBe(1);
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).sourceOrderId),
    ).toEqual(['ord_1', 'ord_2', 'ord_3', 'ord_4', 'ord_5']);
    expect(errorOf(r.stderr)).toMatchObject({ exitCode: 1, repeatedCursor: 'c1', hint: "The server's pagination is broken; report it to the service." });
    expect(errorOf(r.stderr).message).toContain('The server answered endCursor "c1" a second time');
    expect(r.seen.map((s) => s.url)).toEqual(['/v1/orders', '/v1/orders?cursor=c1']);
  });

  test('orders list --all --json: the first page written, exit 1, no resume from the looping cursor', async () => {
    const r = await run(sameCursor, ['orders', 'list', '--all', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).map((o: { sourceOrderId: string }) => o.sourceOrderId)).toEqual(['ord_1', 'ord_2', 'ord_3', 'ord_4', 'ord_5']);
    expect(errorOf(r.stderr).message).toContain('Stopped after 5 orders in 1 pages: The server answered endCursor "c1" a second time');
    expect(errorOf(r.stderr).hint).toBe("Everything fetched before that page was written. The server's pagination is broken; report it to the service.");
    expect(r.seen).toHaveLength(2);
  });

  test('a cursor the walk started from counts as followed', async () => {
    const r = await run(sameCursor, ['orders', 'list', '--all', '--jsonl', '--cursor', 'c1']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(errorOf(r.stderr).message).toContain('endCursor "c1" a second time');
    expect(r.seen).toHaveLength(1);
  });
});

describe('a server that sends more records than its totalCount', () => {
  // New cursors every time, the same five orders and a total of 5: allowed 5 + 0 + one page of 5.
  const endless = forever((i) => ({ status: 200, body: page(five, { next: `c${i + 1}`, total: 5 }) }));

  test('api --paginate: stops once 15 orders came for a total of 5, exit 1, ten printed', async () => {
    const r = await run(endless, ['api', 'GET', '/v1/orders', '--paginate', '--jsonl']);
    expect(r.code).toBe(1);
    expect(r.stdout.trim().split('\n')).toHaveLength(10);
    expect(errorOf(r.stderr)).toMatchObject({ exitCode: 1, received: 15, totalCount: 5 });
    expect(errorOf(r.stderr).message).toContain('The server sent 15 orders, more than the 5 its totalCount announced');
    expect(r.seen).toHaveLength(3);
  });

  test('orders list --all: the same rule, through the other paginator', async () => {
    const r = await run(endless, ['orders', 'list', '--all', '--jsonl']);
    expect(r.code).toBe(1);
    expect(r.stdout.trim().split('\n')).toHaveLength(10);
    expect(errorOf(r.stderr).message).toContain('Stopped after 10 orders in 2 pages: The server sent 15 orders, more than the 5');
    expect(r.seen.length).toBeLessThanOrEqual(4); // the third page, and at most one fetched ahead
  });

  test('a total that grows during the walk is followed to the end, exit 0', async () => {
    // 10 orders at the start; two created while listing push two already listed into later pages.
    const answers = [
      { status: 200, body: page(five, { next: 'c1', total: 10 }) },
      { status: 200, body: page([4, 5, 6, 7, 8].map(order), { next: 'c2', total: 12 }) },
      { status: 200, body: page([9, 10, 11, 12].map(order), { total: 12 }) },
    ];
    for (const argv of [
      ['api', 'GET', '/v1/orders', '--paginate', '--jsonl'],
      ['orders', 'list', '--all', '--jsonl'],
    ]) {
      const r = await run(answers, argv);
      expect(r.code).toBe(0);
      expect(r.stdout.trim().split('\n')).toHaveLength(14);
    }
  });
});

describe('the rule over families of servers', () => {
  test('an honest walk never stops early, whatever the page size, total and orders added on the way', () => {
    for (const total of [0, 1, 7, 100, 1001]) {
      for (const size of [1, 3, 20, 250]) {
        for (const added of [0, 1, 5, 40]) {
          const walk = pageWalk();
          // Each order added raises the total and shifts one listed order into the next page.
          let left = total;
          let shown = total;
          let page = 0;
          for (;;) {
            const grow = page < added ? 1 : 0;
            shown += grow;
            left += grow * 2;
            const records = Math.min(size, left);
            left -= records;
            const more = left > 0;
            expect(() => walk.check({ pageInfo: { hasNextPage: more, endCursor: more ? `p${page}` : null }, totalCount: shown, records })).not.toThrow();
            page++;
            if (!more) break;
          }
        }
      }
    }
  });

  test('a server that never ends is stopped within a bounded number of pages', () => {
    for (const total of [0, 5, 1000]) {
      for (const size of [1, 50]) {
        const walk = pageWalk();
        let pages = 0;
        const stop = () => {
          for (;;) walk.check({ pageInfo: { hasNextPage: true, endCursor: `p${pages++}` }, totalCount: total, records: size });
        };
        expect(stop).toThrow(PaginationError);
        expect(pages).toBeLessThanOrEqual(Math.ceil(total / size) + 2);
      }
    }
  });
});
