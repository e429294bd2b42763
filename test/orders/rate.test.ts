/**
 * `orders list --all` against a server with a rate limit it cannot know in advance: the pages go
 * through one adaptive limiter, which backs off on 429 (with and without Retry-After, and with
 * rate-limit headers) and settles under the limit; `--rate` caps the pace. Every order comes once
 * and in order. No speed is asserted: only what was written, shown and received.
 *
 * In virtual time (test/virtual-time.ts): opcli's clock and sleeps and the sandbox's clock (its
 * bucket and request times) are one clock that jumps to the next timer once the process is quiet,
 * so a Retry-After second costs no real second and every time asserted is the sandbox's.
 */
import { PassThrough, Readable } from 'node:stream';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { createDeps } from '../../src/cli/deps.js';
import { fetchPage, PAGES_IN_FLIGHT } from '../../src/orders/pages.js';
import type { RateLimit } from '../../src/sandbox/rate-limit.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { profileSuite, ROOT, runOpcli } from '../helpers.js';
import { jsonlIds, orderGets as ordersOf } from './reading.js';
import { virtualTime } from '../virtual-time.js';

const TOTAL = 600;
const SIZE = 20;
const PAGES = TOTAL / SIZE;
const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `ord_${String(from + i).padStart(6, '0')}`);

const time = virtualTime();
afterAll(() => time.stop());

let sandbox: Sandbox;
let env: Record<string, string>;
profileSuite((s) => ({ sandbox, env } = s), { sandbox: { orders: TOTAL, clock: time.clock } });
afterEach(() => sandbox.configure({ rateLimit: null, latencyMs: 0 }));

const orderGets = () => ordersOf(sandbox);
const refusals = () => orderGets().filter((r) => r.status === 429).length;

/** `orders list` in-process on the file's virtual clock. */
const run = (argv: string[]) => runOpcli(['orders', 'list', ...argv], { env, now: time.now, sleep: time.sleep });

/**
 * The same pages without a limiter, as `orders list --all` asked for them before: one after another,
 * slowed only by the HTTP core's own 429 handling (its pause for Retry-After, else its backoff).
 * Returns the number of 429s the server answered.
 */
async function refusalsWithoutLimiter(): Promise<number> {
  sandbox.resetLog();
  const deps = createDeps({
    stdin: Readable.from([]),
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    env: { ...env, PATH: process.env.PATH },
    cwd: ROOT,
    now: time.now,
    sleep: time.sleep,
  });
  let cursor: string | undefined;
  let written = 0;
  for (;;) {
    const page = await fetchPage(deps, { size: SIZE, cursor }, { records: false });
    written += page.edges?.length ?? 0;
    if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) break;
    cursor = page.pageInfo.endCursor;
  }
  expect(written).toBe(TOTAL);
  return refusals();
}

/**
 * Runs `orders list --all` under `limit`, then the same pages without a limiter from a full
 * bucket; checks every order came once and in order, and returns both counts of 429s.
 */
async function compare(limit: RateLimit): Promise<{ paced: number; blind: number; stderr: string }> {
  sandbox.configure({ rateLimit: limit, latencyMs: 20 });
  const res = await run(['--all', '--jsonl', '--size', String(SIZE)]);
  expect(res.code, res.stderr).toBe(0);
  expect(jsonlIds(res.stdout)).toEqual(ids(1, TOTAL));
  // Every page was answered once (a refused page is asked for again with the same cursor).
  const accepted = orderGets().filter((r) => r.status === 200);
  expect(new Set(accepted.map((r) => r.query.cursor ?? '')).size).toBe(accepted.length);
  expect(accepted.length).toBeGreaterThanOrEqual(PAGES);
  const paced = refusals();
  // The run slowed to the limit: the accepted pages beyond the first burst were spread over at least
  // the time the server's budget needs for them.
  const times = accepted.map((r) => r.at);
  expect((times.at(-1) ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(((accepted.length - (limit.burst ?? 1)) / limit.perSecond) * 1000 - 50);
  sandbox.configure({ rateLimit: limit, latencyMs: 20 }); // a full bucket again
  const blind = await refusalsWithoutLimiter();
  return { paced, blind, stderr: res.stderr };
}

describe('orders list --all against a rate-limited server', () => {
  test('429 with Retry-After: every order once and in order, fewer 429s than without the limiter, one notice per 429', async () => {
    const { paced, blind, stderr } = await compare({ perSecond: 5, burst: 3, retryAfter: true });
    console.info(`orders list --all, 429 with Retry-After: ${paced} refused under the limiter, ${blind} without`);
    expect(paced).toBeGreaterThan(0);
    // Slow start from 20/s meets the end of the first burst: its end and the halving after it cost
    // up to two rounds of the pages in flight (2 each), and two more as the pace settles (pages now
    // leave in the order asked, so a held retry is not passed by the page after it).
    expect(paced).toBeLessThanOrEqual(2 * PAGES_IN_FLIGHT + 2);
    expect(paced).toBeLessThan(blind);
    // stderr keeps its line per refused page, with the pause it waits out.
    expect(stderr.match(/GET \/v1\/orders answered 429; retrying in 1\.0s/g)?.length).toBe(paced);
  });

  test('429 without Retry-After: it backs off on its own and settles under the limit', async () => {
    const { paced, blind } = await compare({ perSecond: 5, burst: 3, retryAfter: false });
    console.info(`orders list --all, 429 without Retry-After: ${paced} refused under the limiter, ${blind} without`);
    expect(paced).toBeGreaterThan(0);
    // Nothing says how fast the server refills: the pace halves per refusal until a clean stretch,
    // then probes back up, each probe past the limit costing one more.
    expect(paced).toBeLessThanOrEqual(9);
    expect(paced).toBeLessThan(blind);
  });

  test.each(['ietf', 'x'] as const)('%s rate-limit headers: it slows down as the budget runs out', async (headers) => {
    const { paced, blind } = await compare({ perSecond: 5, burst: 3, retryAfter: true, headers });
    console.info(`orders list --all, ${headers} headers: ${paced} refused under the limiter, ${blind} without`);
    // RateLimit-Policy states the rate, so the ietf headers pace the pages before the first refusal;
    // X-RateLimit-* states no rate, and costs what no headers cost (above).
    expect(paced).toBeLessThanOrEqual(headers === 'ietf' ? 1 : 9);
    expect(paced).toBeLessThan(blind);
  });

  test('opcli api --paginate runs its pages under the same limiter: every order once, few refusals, one notice each', async () => {
    sandbox.configure({ rateLimit: { perSecond: 5, burst: 3, retryAfter: true }, latencyMs: 20 });
    const res = await runOpcli(['api', 'GET', '/v1/orders', '--paginate', '--jsonl', '--query', `size=${SIZE}`], { env, now: time.now, sleep: time.sleep });
    expect(res.code, res.stderr).toBe(0);
    expect(jsonlIds(res.stdout)).toEqual(ids(1, TOTAL));
    const paced = refusals();
    // Paced at the learnt rate once the first burst is spent (as above): the HTTP core alone drew one per burst.
    expect(paced).toBeGreaterThan(0);
    expect(paced).toBeLessThanOrEqual(2 * PAGES_IN_FLIGHT + 1);
    expect(res.stderr.match(/GET \/v1\/orders answered 429; retrying in/g)?.length).toBe(paced);
  });

  test('--rate never starts more page requests in a second than it allows, from the first page', async () => {
    const res = await run(['--all', '--jsonl', '--size', String(SIZE), '--rate', '4/s']);
    expect(res.code, res.stderr).toBe(0);
    expect(jsonlIds(res.stdout)).toEqual(ids(1, TOTAL));
    const at = orderGets().map((r) => r.at);
    expect(at.length).toBeGreaterThanOrEqual(PAGES);
    for (const t of at) expect(at.filter((x) => x >= t && x < t + 1000).length).toBeLessThanOrEqual(4);
    // The bound was reached (the count can fail): paced at the rate, not slower.
    expect(Math.max(...at.map((t) => at.filter((x) => x >= t && x < t + 1000).length))).toBe(4);
  });

  test('--rate per minute under --limit, and a resume command that keeps it', async () => {
    sandbox.setFaults([{ method: 'GET', path: '/v1/orders', status: 500, after: 3 }]);
    const res = await run(['--limit', '200', '--jsonl', '--size', String(SIZE), '--rate', '120/m']);
    expect(res.code).toBe(1);
    expect(jsonlIds(res.stdout)).toEqual(ids(1, 3 * SIZE));
    const at = orderGets().map((r) => r.at);
    for (const t of at) expect(at.filter((x) => x >= t && x < t + 1000).length).toBeLessThanOrEqual(2);
    const error = JSON.parse(res.stderr.trim().split('\n').at(-1) as string).error;
    expect(error.hint).toMatch(/opcli orders list --limit 140 --size 20 --rate 120\/m --jsonl --cursor \S+/);
  });

  test('Ctrl-C while the pages wait out a rate-limit pause: what was fetched is written, exit 130, and the resume command completes the set', async () => {
    sandbox.configure({ rateLimit: { perSecond: 1, burst: 4, retryAfter: true } });
    const controller = new AbortController();
    const timer = setInterval(() => {
      if (refusals() > 0) controller.abort(Object.assign(new Error('Interrupted'), { name: 'AbortError' }));
    }, 5);
    const res = await runOpcli(['orders', 'list', '--all', '--jsonl', '--size', String(SIZE), '--rate', '10/s'], {
      env,
      now: time.now,
      sleep: time.sleep,
      signal: controller.signal,
    }).finally(() => clearInterval(timer));
    expect(res.code).toBe(130);
    const first = jsonlIds(res.stdout);
    expect(first.length).toBeGreaterThan(0);
    expect(first).toEqual(ids(1, first.length));
    const resume = /Resume with:\n\s+(opcli orders list .*)$/m.exec(res.stderr)?.[1];
    expect(resume).toContain('--rate 10/s');

    sandbox.configure({ rateLimit: null });
    const rest = await run((resume as string).split(' ').slice(3));
    expect(rest.code, rest.stderr).toBe(0);
    expect([...first, ...jsonlIds(rest.stdout)]).toEqual(ids(1, TOTAL));
  });

  test('a bad --rate, or --rate without --all or --limit, exits 2 naming the flag and sends nothing', async () => {
    for (const rate of ['fast', '0/s', '-5/s', '1e3/s', '5/d', '']) {
      const res = await run(['--all', '--rate', rate]);
      expect(res.code, rate).toBe(2);
      expect(res.stderr).toContain(`--rate "${rate}" is not a rate`);
      expect(res.stdout).toBe('');
    }
    const single = await run(['--rate', '5/s']);
    expect(single.code).toBe(2);
    expect(single.stderr).toContain('--rate paces the pages of --all and --limit');
    expect(orderGets()).toEqual([]);
  });
});
