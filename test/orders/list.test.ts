import { describe, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { profileSuite, runOpcli, sandboxProfile } from '../helpers.js';
import { jsonlIds, orderGets as ordersOf } from './reading.js';

const TOTAL = 1050;
const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `ord_${String(from + i).padStart(6, '0')}`);
/**
 * A clock that moves only by the sleeps taken, so waits (the pages' limiter, retry rounds) cost no
 * real time; each sleep is recorded with how many pages had been asked for by then.
 */
function steppedClock() {
  let t = Date.now();
  const slept: { ms: number; asked: number }[] = [];
  return {
    slept,
    now: () => t,
    sleep: async (ms: number) => {
      slept.push({ ms, asked: orderGets().length });
      t += ms;
    },
  };
}

let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

profileSuite((s) => ({ sandbox, dir, env } = s), { sandbox: { orders: TOTAL } });

const orderGets = () => ordersOf(sandbox);

describe('orders list: one page', () => {
  test('a pipe gets tab-separated rows and a footer with the total, the page position and the next command', async () => {
    const r = await runOpcli(['orders', 'list', '--size', '20'], { env });
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(20);
    expect(lines[0]?.split('\t')[0]).toBe('ord_000001');
    expect(lines[0]).toContain('#1001');
    expect(r.stderr).toContain(`20 of 1,050 orders · page 1 of 53`);
    const next = /Next page: (opcli .*)$/m.exec(r.stderr)?.[1];
    expect(next).toMatch(/^opcli orders list --size 20 --cursor \S+$/);
    expect(orderGets()).toHaveLength(1);
    expect(orderGets()[0]?.query).toEqual({ size: '20' });

    // The printed command fetches the next page.
    const argv = (next as string).split(' ').slice(1);
    const r2 = await runOpcli(argv, { env });
    expect(r2.code).toBe(0);
    expect(
      r2.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[0]),
    ).toEqual(ids(21, 40));
    expect(r2.stderr).toContain('page 2 of 53');
  });

  test('a terminal gets a table of the fields the records carry', async () => {
    const r = await runOpcli(['orders', 'list', '--size', '3', '--page-buttons', '3'], { tty: true, env: { ...env, NO_COLOR: '1' } });
    expect(r.code).toBe(0);
    const header = r.stdout.split('\n')[1] ?? '';
    for (const column of ['sourceOrderId', 'sourceOrderNumber', 'currency', 'total', 'customerName']) expect(header).toContain(column);
    // Fields no record carries get no column.
    expect(header).not.toContain('customerPhone');
    expect(r.stdout).toContain('ord_000003');
    expect(r.stderr).toContain('(pages [1] 2 3)');
    expect(orderGets()[0]?.query).toEqual({ size: '3', buttonNum: '3' });
  });

  test('--json on one page prints a JSON array with unknown fields kept', async () => {
    const r = await runOpcli(['orders', 'list', '--size', '5', '--json'], { env });
    expect(r.code).toBe(0);
    const orders = JSON.parse(r.stdout);
    expect(orders.map((o: { sourceOrderId: string }) => o.sourceOrderId)).toEqual(ids(1, 5));
    expect(orders[0]).toMatchObject({ sourceOrderNumber: '#1001' });
  });

  test('a missing read_orders scope is a 403 that names the scope, exit 4', async () => {
    await sandboxProfile(sandbox, dir, { scopes: ['read_claims', 'read_store'] });
    const r = await runOpcli(['orders', 'list'], { env });
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('read_orders');
    expect(orderGets().at(-1)?.status).toBe(403);
  });

  test('flags are checked before anything is sent', async () => {
    for (const argv of [
      ['orders', 'list', '--size', '0'],
      ['orders', 'list', '--size', 'ten'],
      ['orders', 'list', '--limit', '-1'],
      ['orders', 'list', '--json', '--csv'],
    ]) {
      const r = await runOpcli(argv, { env });
      expect(r.code, argv.join(' ')).toBe(2);
    }
    expect(orderGets()).toHaveLength(0);
  });

  test('a page size out of range names the flag and a range a person reads, not a machine limit', async () => {
    const zero = await runOpcli(['orders', 'list', '--size', '0'], { env });
    expect(zero.code).toBe(2);
    expect(zero.stderr).toBe(
      'Error: --size "0" is out of range: expected 1 or more.\n' +
        'Orders per page, 1 or more; the server caps a page at its own maximum (leave --size out for its default).\n',
    );
    const huge = await runOpcli(['orders', 'list', '--size', '99999999999999999999'], { env });
    expect(huge.code).toBe(2);
    expect(huge.stderr).toMatch(/^Error: --size "99999999999999999999" is too large: expected 1 or more\.$/m);
    const word = await runOpcli(['orders', 'list', '--limit', 'ten'], { env });
    expect(word.stderr).toBe('Error: --limit "ten" is not a whole number.\nExpected a whole number, 1 or more.\n');
    for (const r of [zero, huge, word]) expect(r.stderr).not.toMatch(/9,007|9007/);
    expect(orderGets()).toHaveLength(0);
  });

  test('a garbled --cursor (control character, U+FFFD, blank) is refused by name before any request (F8)', async () => {
    for (const cursor of ['b2E6\x1b[2JNTA', 'b2E6\x07NTA', 'b2E6\uFFFDNTA', 'b2E6\rNTA', '  ']) {
      const r = await runOpcli(['orders', 'list', '--cursor', cursor], { env });
      expect(r.code, JSON.stringify(cursor)).toBe(2);
      expect(r.stderr).toMatch(/^Error: --cursor /m);
      // The terminal never receives the raw escape sequence back.
      expect(r.stderr).not.toContain('\x1b');
      expect(r.stdout).toBe('');
    }
    expect(sandbox.requests).toHaveLength(0);
  });
});

describe('orders list: every page', () => {
  test(`--all --jsonl collects each of ${TOTAL} orders exactly once, in order`, async () => {
    const r = await runOpcli(['orders', 'list', '--all', '--jsonl', '--size', '100'], { env });
    expect(r.code).toBe(0);
    expect(jsonlIds(r.stdout)).toEqual(ids(1, TOTAL));
    expect(orderGets()).toHaveLength(11);
    expect(r.stderr).toContain(`1,050 of 1,050 orders in 11 pages.`);
  });

  test('from a cursor between page boundaries, --all still gives each later order once, in order', async () => {
    const first = await runOpcli(['orders', 'list', '--size', '7'], { env });
    const cursor = /--cursor (\S+)$/m.exec(first.stderr)?.[1] as string;
    sandbox.resetLog();
    const r = await runOpcli(['orders', 'list', '--all', '--jsonl', '--size', '100', '--cursor', cursor], { env });
    expect(r.code).toBe(0);
    expect(jsonlIds(r.stdout)).toEqual(ids(8, TOTAL));
    // Looking ahead from the page cursors misses here (pages are not aligned) and is then given up:
    // at most one page is asked for in vain.
    expect(orderGets().length).toBeLessThanOrEqual(12);
  });

  test('--all --json writes one valid array; --csv a header and a row per order', async () => {
    const json = await runOpcli(['orders', 'list', '--all', '--json', '--size', '250'], { env });
    expect(json.code).toBe(0);
    const all = JSON.parse(json.stdout) as { sourceOrderId: string }[];
    expect(all.map((o) => o.sourceOrderId)).toEqual(ids(1, TOTAL));

    const csv = await runOpcli(['orders', 'list', '--all', '--csv', '--size', '250'], { env });
    expect(csv.code).toBe(0);
    const rows = csv.stdout.trim().split('\n');
    expect(rows[0]?.startsWith('sourceOrderId,sourceOrderNumber,currency,policyCancelledAt')).toBe(true);
    expect(rows).toHaveLength(TOTAL + 1);
    expect(rows.slice(1).map((l) => l.split(',')[0])).toEqual(ids(1, TOTAL));
  });

  test('--limit stops after N orders, asking the last page for no more than is left', async () => {
    const r = await runOpcli(['orders', 'list', '--limit', '250', '--size', '100', '--jsonl'], { env });
    expect(r.code).toBe(0);
    expect(jsonlIds(r.stdout)).toEqual(ids(1, 250));
    expect(orderGets().map((g) => g.query.size)).toEqual(['100', '100', '50']);
    const next = /Next: (opcli .*)$/m.exec(r.stderr)?.[1] as string;
    expect(next).toContain('--limit 250');
    const r2 = await runOpcli(next.split(' ').slice(1), { env });
    expect(jsonlIds(r2.stdout)).toEqual(ids(251, 500));
  });

  test('429 with Retry-After, 503 and a dropped connection in the middle end with every order once', async () => {
    sandbox.setFaults([
      { method: 'GET', path: '/v1/orders', status: 429, retryAfter: 1, after: 2, count: 1 },
      { method: 'GET', path: '/v1/orders', status: 503, after: 4, count: 2 },
      { method: 'GET', path: '/v1/orders', drop: true, after: 7, count: 1 },
    ]);
    // The waits are on the injected sleep: each records how long, and how many pages had been asked for by then.
    const clock = steppedClock();
    const slept = clock.slept;
    const r = await runOpcli(['orders', 'list', '--all', '--jsonl', '--size', '100'], { env, now: clock.now, sleep: clock.sleep });
    expect(r.code).toBe(0);
    expect(jsonlIds(r.stdout)).toEqual(ids(1, TOTAL));
    const statuses = orderGets().map((g) => g.status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1);
    expect(statuses.filter((s) => s === 503)).toHaveLength(2);
    expect(statuses.filter((s) => s === 0)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(11);
    // The page refused with 429 was asked for again only after a wait of the Retry-After second.
    const gets = orderGets();
    const limited = gets.findIndex((g) => g.status === 429);
    const retried = gets.findIndex((g, i) => i > limited && g.query.cursor === gets[limited]?.query.cursor);
    expect(retried).toBeGreaterThan(limited);
    // A wait of at least the second, begun after the 429 had been received and before the retry went out.
    expect(slept.some((s) => s.ms >= 1000 && s.asked > limited && s.asked <= retried)).toBe(true);
  });

  test('a failure that persists writes what was fetched, exits 1 and names the cursor; resuming completes the set', async () => {
    sandbox.setFaults([{ method: 'GET', path: '/v1/orders', status: 500, after: 3 }]);
    const r = await runOpcli(['orders', 'list', '--all', '--jsonl', '--size', '100'], { env, ...steppedClock() });
    expect(r.code).toBe(1);
    const first = jsonlIds(r.stdout);
    expect(first).toEqual(ids(1, 300));
    // Under --jsonl the error is one JSON object, the last line of stderr.
    const error = JSON.parse(r.stderr.trim().split('\n').at(-1) as string).error;
    expect(error).toMatchObject({ exitCode: 1, written: 300 });
    expect(error.message).toContain('Stopped after 300 orders');
    const resume = /^\s+(opcli orders list .*--cursor \S+)$/m.exec(error.hint)?.[1];
    expect(resume).toBeDefined();
    // GET is safe to repeat: the page that failed was tried more than once.
    expect(orderGets().filter((g) => g.status === 500).length).toBeGreaterThan(1);

    sandbox.setFaults([]);
    const r2 = await runOpcli((resume as string).split(' ').slice(1), { env });
    expect(r2.code).toBe(0);
    const rest = jsonlIds(r2.stdout);
    expect([...first, ...rest]).toEqual(ids(1, TOTAL));
  });

  test('a persistent failure under --json still leaves a valid JSON array of what was fetched', async () => {
    sandbox.setFaults([{ method: 'GET', path: '/v1/orders', status: 503, after: 2 }]);
    const r = await runOpcli(['orders', 'list', '--all', '--json', '--size', '100'], { env, ...steppedClock(), http: { maxRetries: 1 } });
    expect(r.code).toBe(1);
    // The pages written are the first ones, in order (which of the two answered pages is the second
    // depends on which request the pacing let go first: the page guessed ahead may be that one).
    const written = (JSON.parse(r.stdout) as { sourceOrderId: string }[]).map((o) => o.sourceOrderId);
    expect([100, 200]).toContain(written.length);
    expect(written).toEqual(ids(1, written.length));
    expect(r.stderr).toMatch(/--cursor \S+/);
  });

  test('a failure on the first page is reported as it is, nothing written', async () => {
    sandbox.setFaults([{ method: 'GET', path: '/v1/orders', status: 503 }]);
    const r = await runOpcli(['orders', 'list', '--all', '--jsonl'], { env, ...steppedClock(), http: { maxRetries: 0 } });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('503');
    expect(r.stderr).not.toContain('Stopped after');
  });
});
