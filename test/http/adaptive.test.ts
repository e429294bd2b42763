/**
 * The batch limiter's rules one at a time (src/http/adaptive.ts, aimd.ts, gcra.ts, rate-signals.ts),
 * on a clock the test moves. Its behaviour against whole families of server limiters is in
 * test/http/pacing.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createAdaptiveLimiter, type Permit } from '../../src/http/adaptive.js';
import { readRateSignals } from '../../src/http/rate-signals.js';
import { runBatch, tokenBucket } from './limiters.js';

/** A limiter on a clock that sleeps by moving time. */
function stepped(options: { maxConcurrency?: number; maxRate?: number } = {}) {
  let t = 0;
  const sleeps: number[] = [];
  const limiter = createAdaptiveLimiter({
    maxConcurrency: options.maxConcurrency ?? 4,
    maxRate: options.maxRate,
    now: () => t,
    sleep: async (ms, signal) => {
      signal?.throwIfAborted();
      sleeps.push(ms);
      t += ms;
    },
  });
  return { limiter, sleeps, at: () => t, set: (to: number) => void (t = to) };
}

/** Sends one request through `limiter`: its permit, written at once, answered `latencyMs` later with `status` and `headers`. */
async function one(s: ReturnType<typeof stepped>, latencyMs: number, status = 200, headers: Record<string, string> = {}): Promise<number> {
  const permit: Permit = await s.limiter.acquire();
  const start = s.at();
  permit.sent();
  s.set(start + latencyMs);
  permit.done({ status, headers });
  return start;
}

describe('the batch limiter, rule by rule', () => {
  it('sends the first request alone, then starts at two requests a round trip (RFC 5681 initial window), at most 20/s', async () => {
    const s = stepped({ maxConcurrency: 8 });
    const first = await s.limiter.acquire();
    let second = false;
    const next = s.limiter.acquire().then((p) => {
      second = true;
      return p;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(second).toBe(false);
    first.sent();
    s.set(200);
    first.done({ status: 200 });
    (await next).done({ status: 200 });
    expect(s.limiter.snapshot().rate).toBeCloseTo(10);
    const fast = stepped();
    await one(fast, 1);
    expect(fast.limiter.snapshot().rate).toBe(20);
  });

  it('doubles once a round in slow start, a round at least its first interval, and halves at the first refusal; from then on never past twice what the server accepted lately (AWS)', async () => {
    const s = stepped({ maxConcurrency: 1 });
    await one(s, 1);
    // Answered 1 ms after it leaves, each request is a round of its own: the rate doubles on the first answer 50 ms (1000 / 20/s) or more after the last doubling.
    const rates: number[] = [];
    const doubledAt: number[] = [1];
    for (let i = 0; i < 40 && rates.length < 4; i++) {
      const before = s.limiter.snapshot().rate as number;
      await one(s, 1);
      const rate = s.limiter.snapshot().rate as number;
      if (rate === before) continue;
      rates.push(rate);
      const gap = s.at() - (doubledAt.at(-1) as number);
      expect(gap).toBeGreaterThanOrEqual(50);
      expect(gap).toBeLessThanOrEqual(50 + 1000 / before + 1);
      doubledAt.push(s.at());
    }
    expect(rates).toEqual([40, 80, 160, 320]);
    await one(s, 1, 429);
    // Half the rate refused, and (as the AWS SDK caps a throttle's new rate too) no more than twice the rate accepted so far.
    const acceptedSoFar = ((s.limiter.snapshot().answered - 1) * 1000) / (s.at() - 1);
    expect(s.limiter.snapshot()).toMatchObject({ rate: Math.min(160, 2 * acceptedSoFar), refused: 1 });
    // The climb back is held to twice the rate answers were accepted at (all of them, within the run's first second).
    for (let i = 0; i < 20; i++) await one(s, 1);
    const acceptedRate = ((s.limiter.snapshot().answered - 1) * 1000) / (s.at() - 1);
    expect(s.limiter.snapshot().rate).toBeLessThanOrEqual(2 * acceptedRate);
  });

  it('after a clean stretch a refusal costs a step of 0.9 (concurrency-limits backoffRatio), and a refusal of a request sent before it nothing more', async () => {
    const s = stepped({ maxConcurrency: 2 });
    await one(s, 1);
    await one(s, 1, 429);
    for (let i = 0; i < 20; i++) await one(s, 1);
    const before = s.limiter.snapshot().rate as number;
    const early = await s.limiter.acquire();
    early.sent();
    await one(s, 1, 429);
    expect(s.limiter.snapshot().rate).toBeCloseTo(before * 0.9, 1);
    early.done({ status: 429 });
    expect(s.limiter.snapshot().rate).toBeCloseTo(before * 0.9, 1);
    expect(s.limiter.snapshot().refused).toBe(3);
  });

  it("Retry-After holds the refused request's retry, not the others", async () => {
    const s = stepped({ maxConcurrency: 2 });
    await one(s, 1);
    const refused = await s.limiter.acquire();
    const refusedAt = s.at();
    refused.sent();
    refused.done({ status: 429, headers: { 'retry-after': '2' } });
    expect(s.limiter.snapshot().pauseLeftMs).toBe(2000);
    // Another row goes at the pace; the retry of the refused one waits until its time.
    await one(s, 1);
    expect(s.at() - refusedAt).toBeLessThan(1000);
    const retry = await s.limiter.acquire(undefined, refused);
    expect(s.at()).toBeGreaterThanOrEqual(refusedAt + 2000);
    retry.done({ status: 200 });
  });

  it('a stated policy (RateLimit-Policy) sets the pace at once, and caps it', async () => {
    const s = stepped();
    await one(s, 1, 200, { 'ratelimit-policy': '100;w=10' });
    expect(s.limiter.snapshot().rate).toBeCloseTo(10);
    for (let i = 0; i < 50; i++) await one(s, 1, 200, { 'ratelimit-policy': '100;w=10' });
    expect(s.limiter.snapshot().rate).toBeCloseTo(10);
  });

  it('a stated rate (--rate) is kept through a short pause in the answers when nothing was refused: slow start again only after a shut window', async () => {
    const s = stepped({ maxRate: 1000 });
    for (let i = 0; i < 200; i++) await one(s, 1);
    expect(s.limiter.snapshot().rate).toBeCloseTo(1000);
    // The batch itself pauses (a group made durable, a slow row): no answer for many round trips, far less than a second.
    s.set(s.at() + 20);
    await one(s, 1);
    await one(s, 1);
    expect(s.limiter.snapshot().rate).toBeCloseTo(1000);
  });

  it("a budget nearly spent in slow start ends it with the rate kept (HyStart's exit), no request refused; a bucket of one says nothing", async () => {
    const s = stepped({ maxConcurrency: 1 });
    await one(s, 1, 200, { 'x-ratelimit-limit': '50', 'x-ratelimit-remaining': '40' });
    await one(s, 1, 200, { 'x-ratelimit-limit': '50', 'x-ratelimit-remaining': '40' });
    expect(s.limiter.snapshot().rate).toBe(40);
    await one(s, 1, 200, { 'x-ratelimit-limit': '50', 'x-ratelimit-remaining': '0' });
    const after = s.limiter.snapshot();
    expect(after).toMatchObject({ refused: 0, rate: 80, learnt: 80 });
    // Out of slow start: the next clean answer adds a step, it does not double.
    await one(s, 1, 200, { 'x-ratelimit-limit': '50', 'x-ratelimit-remaining': '30' });
    expect(s.limiter.snapshot().rate).toBeLessThan((after.rate as number) * 1.5);
    const small = stepped({ maxConcurrency: 1 });
    const plain = stepped({ maxConcurrency: 1 });
    for (let i = 0; i < 5; i++) {
      await one(small, 1, 200, { 'x-ratelimit-limit': '1', 'x-ratelimit-remaining': '0' });
      await one(plain, 1);
    }
    expect(small.limiter.snapshot().rate).toBe(plain.limiter.snapshot().rate);
    expect(small.limiter.snapshot().rate).toBeGreaterThan(20);
  });

  it('a budget that falls in slow start ends it at the refill its answers show, before it runs out (HyStart)', async () => {
    // 400/s behind a budget of 80 at 2 ms: slow start had reached 660/s when the budget ran out, a
    // flight of 17 refused and held for Retry-After: 1 (0.37 of the limit).
    const run = await runBatch({ server: (now) => tokenBucket(now, 400, 80, 'x'), rows: 600, latencyMs: 2, concurrency: 16 });
    const seconds = ((run.acceptedAt[569] as number) - (run.acceptedAt[0] as number)) / 1000;
    expect(570 / (seconds * 400 + 1)).toBeGreaterThanOrEqual(0.9);
    expect(run.refusedAt.length).toBeLessThanOrEqual(12);
  });

  it('treats 503 as a refusal and a lost connection as neither', async () => {
    const s = stepped();
    const p = await s.limiter.acquire();
    p.done({ error: true });
    expect(s.limiter.snapshot()).toMatchObject({ refused: 0, rate: 20 });
    await one(s, 1, 503, { 'retry-after': '3' });
    expect(s.limiter.snapshot().refused).toBe(1);
    expect(s.limiter.snapshot().pauseLeftMs).toBeGreaterThan(2900);
  });

  it('gives the slot back when the caller gives up while waiting', async () => {
    const s = stepped({ maxConcurrency: 1, maxRate: 1 });
    await one(s, 1);
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(s.limiter.acquire(controller.signal)).rejects.toThrow('stop');
    expect(s.limiter.snapshot().inFlight).toBe(0);
  });

  it('lets requests go in the order they asked, whichever timer fires first (orders list waits on the page it asked for first)', async () => {
    let t = 0;
    const timers: { at: number; wake: () => void }[] = [];
    const limiter = createAdaptiveLimiter({
      maxConcurrency: 4,
      maxRate: 10,
      now: () => t,
      // A timer list that fires the newest first: a later request's sleep may end before an earlier one's.
      sleep: (ms) => new Promise<void>((wake) => timers.push({ at: t + ms, wake })),
    });
    (await limiter.acquire()).sent();
    const order: string[] = [];
    for (const name of ['first', 'second', 'third'])
      void limiter.acquire().then((p) => {
        order.push(name);
        p.sent();
      });
    for (let i = 0; i < 20 && order.length < 3; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      const timer = timers.pop();
      if (!timer) continue;
      t = Math.max(t, timer.at);
      timer.wake();
    }
    expect(order).toEqual(['first', 'second', 'third']);
  });

  it('lets the next request go only once the one before was written (or ended unwritten), the interval counted from the write', async () => {
    const s = stepped({ maxRate: 10 });
    const first = await s.limiter.acquire();
    let second: number | undefined;
    const next = s.limiter.acquire().then((p) => {
      second = s.at();
      return p;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(second).toBeUndefined();
    s.set(40);
    first.sent();
    const p2 = await next;
    expect(second).toBe(140);
    p2.done({ error: true });
    first.done({ status: 200 });
    await s.limiter.acquire();
    expect(s.at()).toBe(240);
  });

  it('never has more in flight than --concurrency, nor starts more than --rate in any second', async () => {
    for (const concurrency of [1, 3, 16]) {
      const run = await runBatch({ server: (now) => tokenBucket(now, 1000, 1000), rows: 300, latencyMs: 50, concurrency, maxRate: 60 });
      expect(run.peakInFlight).toBeLessThanOrEqual(concurrency);
      const starts = run.starts.map((x) => x.at);
      for (const t of starts) expect(starts.filter((x) => x >= t && x < t + 999.9).length).toBeLessThanOrEqual(60);
    }
  });
});

describe('rate signals in every form a server sends them (a reset time is not one the pacer acts on)', () => {
  it.each([
    [{ 'ratelimit-policy': '100;w=60' }, { policyRate: 100 / 60 }],
    [{ 'ratelimit-policy': '"default";q=100;w=10' }, { policyRate: 10 }],
    [{ 'ratelimit-policy': '10;w=1, 1000;w=3600' }, { policyRate: 1000 / 3600 }],
    [{ ratelimit: 'limit=100, remaining=50, reset=30' }, { limit: 100, remaining: 50 }],
    [{ ratelimit: '"default";r=5;t=2' }, { remaining: 5 }],
    [
      { 'ratelimit-limit': '10', 'ratelimit-remaining': '3', 'ratelimit-reset': '1' },
      { limit: 10, remaining: 3 },
    ],
    [
      { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1000000060' },
      { limit: 5000, remaining: 0 },
    ],
    [{ 'retry-after': '2' }, { retryAfterMs: 2000 }],
    [{ ratelimit: 'remaining=abc', 'ratelimit-policy': 'w=5' }, {}],
  ])('%o', (headers, expected) => {
    const read = readRateSignals(headers as Record<string, string>, 1_000_000_000_000);
    const defined = Object.fromEntries(Object.entries(read).filter(([, v]) => v !== undefined));
    expect(defined).toEqual(expected);
  });
});

describe('a batch that stops', () => {
  it('ends the wait of a request queued behind slow start when its signal aborts, and the slot it never took stays free', async () => {
    const s = stepped({ maxConcurrency: 8 });
    const first = await s.limiter.acquire();
    first.sent();
    const stop = new AbortController();
    // Slow start lets no second request leave before the first is answered: this one queues.
    const queued = s.limiter.acquire(stop.signal);
    stop.abort(new Error('stopped'));
    await expect(queued).rejects.toThrow('stopped');
    first.done({ status: 200, headers: {} });
    expect(s.limiter.snapshot().inFlight).toBe(0);
    // The next request takes the freed slot at once: nothing waits for the aborted one.
    const next = await s.limiter.acquire();
    next.sent();
    next.done({ status: 200, headers: {} });
    expect(s.limiter.snapshot().inFlight).toBe(0);
  });
});
