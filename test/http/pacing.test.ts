/**
 * The batch limiter's pacing against the four kinds of server-side limiter (a strict leaky bucket
 * like nginx's limit_req without burst, a token bucket with a burst, a fixed window, a sliding
 * window), in virtual time: every figure is a count of requests at virtual instants, never wall time.
 */
import { describe, expect, it } from 'vitest';
import { createAdaptiveLimiter, type Outcome } from '../../src/http/adaptive.js';
import { type LimiterKind, leakyBucket, type SimLimiter, simLimiter, tokenBucket, virtualTime } from './limiters.js';

/** A deterministic generator in [0, 1). */
function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Run {
  kind: LimiterKind;
  perSecond: number;
  /** Virtual seconds the batch sends for. */
  seconds: number;
  latencyMs: number;
  concurrency: number;
  maxRate?: number;
  /** Up to this many ms added to each request's way to the server and each timer (a loaded machine). */
  jitterMs?: number;
  /** At this virtual second the server's limit becomes `raiseTo`. */
  raiseAt?: number;
  raiseTo?: number;
  /** From this virtual second on, the server answers in `slowLatencyMs` (a gateway starts queueing). */
  slowFrom?: number;
  slowLatencyMs?: number;
  /** Plain timers fire up to this many ms late (Node rounds a timer up to a whole millisecond). */
  lateTimersMs?: number;
  /** The limiter gets an exact sleep (src/core/timers.ts `sleepExactOn`), which late timers do not delay. */
  exact?: boolean;
  /** A delay between a permit and the request's bytes being written (a busy event loop), by request number. */
  writeDelayMs?: (n: number) => number;
  /** The server's limiter, instead of `kind`'s default. */
  server?: (now: () => number) => SimLimiter;
}

/**
 * `concurrency` workers send requests for `seconds` virtual seconds; each asks the limiter for a
 * permit, reaches the server after half the latency (plus jitter), which decides on arrival, and
 * is answered after the other half; a refused request is sent again.
 */
async function simulate(run: Run) {
  const clock = virtualTime();
  const random = seeded(run.perSecond * 7 + run.latencyMs);
  const jitter = () => (run.jitterMs ? random() * run.jitterMs : 0);
  const late = () => (run.lateTimersMs ? random() * run.lateTimersMs : 0);
  const sleep = (ms: number) => clock.sleep(ms + jitter() + late());
  const sleepExact = run.exact ? (ms: number) => clock.sleep(ms + jitter()) : undefined;
  const server: SimLimiter = run.server?.(clock.now) ?? simLimiter(run.kind, clock.now, run.perSecond);
  const limiter = createAdaptiveLimiter({ maxConcurrency: run.concurrency, maxRate: run.maxRate, now: clock.now, sleep, sleepExact });
  const starts: number[] = [];
  const acceptedAt: number[] = [];
  const refusedAt: number[] = [];
  const rates: { at: number; rate?: number }[] = [];
  const writes: { at: number; rate?: number }[] = [];
  let inFlight = 0;
  let peakInFlight = 0;
  let raised = false;
  const end = run.seconds * 1000;
  const worker = async () => {
    while (clock.now() < end) {
      const permit = await limiter.acquire();
      const latencyMs = run.slowFrom !== undefined && clock.now() >= run.slowFrom * 1000 ? (run.slowLatencyMs as number) : run.latencyMs;
      inFlight++;
      peakInFlight = Math.max(peakInFlight, inFlight);
      starts.push(clock.now());
      rates.push({ at: clock.now(), rate: limiter.snapshot().rate });
      // The request is written (after any delay) and reaches the server after half the latency.
      const rate = limiter.snapshot().rate;
      const writeDelay = run.writeDelayMs?.(starts.length) ?? 0;
      if (writeDelay > 0) await clock.sleep(writeDelay);
      permit.sent?.();
      writes.push({ at: clock.now(), rate });
      await clock.sleep(latencyMs / 2 + jitter());
      if (!raised && run.raiseAt !== undefined && clock.now() >= run.raiseAt * 1000) {
        raised = true;
        server.setRate(run.raiseTo as number);
      }
      const decision = server.take();
      (decision.allowed ? acceptedAt : refusedAt).push(clock.now());
      await clock.sleep(latencyMs / 2);
      inFlight--;
      const outcome: Outcome = { status: decision.allowed ? 200 : 429, headers: decision.headers };
      permit.done(outcome);
    }
  };
  await clock.run(Promise.all(Array.from({ length: run.concurrency }, worker)));
  /** Accepted requests per second between two virtual seconds, as a share of `limit`. */
  const share = (from: number, to: number, limit = run.perSecond) => acceptedAt.filter((t) => t >= from * 1000 && t < to * 1000).length / ((to - from) * limit);
  return { share, acceptedAt, refusedAt, starts, rates, writes, peakInFlight, refusedShare: refusedAt.length / starts.length, snapshot: limiter.snapshot() };
}

const KINDS: LimiterKind[] = ['leaky', 'token', 'fixed', 'sliding'];

describe('pacing against four kinds of limiter (virtual time)', () => {
  const cases = KINDS.flatMap((kind) => [40, 200].flatMap((perSecond) => [2, 50].map((latencyMs) => [kind, perSecond, latencyMs] as const)));

  it.each(cases)('%s at %d/s, %d ms latency: within a tenth of the limit after 10 virtual seconds, few refusals', async (kind, perSecond, latencyMs) => {
    const r = await simulate({ kind, perSecond, seconds: 40, latencyMs, concurrency: 16 });
    expect(r.share(10, 40)).toBeGreaterThanOrEqual(0.9);
    expect(r.share(10, 40)).toBeLessThanOrEqual(1.01);
    expect(r.refusedShare).toBeLessThanOrEqual(0.03);
    // What the summary calls the rate the server allows: near the limit, not a probe past it.
    expect(r.snapshot.learnt).toBeGreaterThanOrEqual(perSecond * 0.85);
    expect(r.snapshot.learnt).toBeLessThanOrEqual(perSecond * 1.1);
  });

  /**
   * Whether `times` (with the paced rate at each) ever run faster than that rate. A strict leaky bucket
   * refuses any two closer than its interval, so there each gap is at least the interval. A server that
   * accepts bursts lets a request whose timer fired late be caught up by the next: there no gap is under
   * half the interval, and no run of them at one rate gets more than one request ahead of it.
   */
  function expectPaced(times: { at: number; rate?: number }[], strict: boolean, what: string): number {
    let paced = 0;
    let runStart = 0;
    for (let i = 1; i < times.length; i++) {
      const { at, rate } = times[i] as { at: number; rate?: number };
      const before = times[i - 1] as { at: number; rate?: number };
      if (rate === undefined) continue;
      paced++;
      const interval = 1000 / rate;
      expect(at - before.at, `${what} ${i} at ${at}`).toBeGreaterThanOrEqual(interval * (strict ? 1 : 0.5) - 0.01);
      if (before.rate !== rate) runStart = i;
      for (let j = Math.max(runStart, i - 80); j < i; j++) {
        const from = times[j] as { at: number };
        expect(i - j, `${what}s ${j}..${i} from ${from.at}`).toBeLessThanOrEqual(((at - from.at) * rate) / 1000 + 1.001);
      }
    }
    return paced;
  }

  it.each(KINDS)('%s: requests leave evenly spaced, never faster than the learnt rate (its probe included) allows', async (kind) => {
    const r = await simulate({ kind, perSecond: 40, seconds: 20, latencyMs: 20, concurrency: 16, jitterMs: 1 });
    expect(expectPaced(r.rates, kind === 'leaky', 'start')).toBeGreaterThan(r.rates.length * 0.9);
    // Never a burst of --concurrency: no 50 ms holds more than the limit's share of it and one more.
    for (const t of r.starts.filter((s) => s > 5000)) expect(r.starts.filter((s) => s >= t && s < t + 50).length).toBeLessThanOrEqual(3);
  });

  it.each(KINDS)('%s: a delay between a permit and the write never brings writes closer than the learnt rate allows', async (kind) => {
    // Every fifth request is written 20 ms after its permit (the event loop was busy), the others at once.
    const r = await simulate({ kind, perSecond: 40, seconds: 40, latencyMs: 20, concurrency: 16, writeDelayMs: (n) => (n % 5 === 0 ? 20 : 0) });
    const writes = [...r.writes].sort((a, b) => a.at - b.at);
    expect(expectPaced(writes, kind === 'leaky', 'write')).toBeGreaterThan(writes.length * 0.9);
    // A strict leaky bucket sees them as spaced as they were written: next to no refusals.
    if (kind === 'leaky') expect(r.refusedShare, `share ${r.share(10, 40)}`).toBeLessThanOrEqual(0.02);
  });

  it.each([
    ['a token bucket (burst half a second)', undefined],
    ['nginx limit_req burst=50 nodelay', (now: () => number) => leakyBucket(now, 200, 50)],
  ] as const)('%s at 200/s, timers and requests up to 2 ms late: late timers do not lower the rate', async (_name, server) => {
    // At 200/s the interval is 5 ms: a timer a millisecond late and a write a millisecond after its
    // permit, each spaced from the start before, would cost a third of the rate, and the probe would
    // stop, taking the shortfall for the slots.
    const writeDelayMs = (n: number) => ((n * 7919) % 20) / 10;
    const r = await simulate({ kind: 'token', perSecond: 200, seconds: 30, latencyMs: 50, concurrency: 16, jitterMs: 2, writeDelayMs, server });
    expect(r.share(10, 30)).toBeGreaterThanOrEqual(0.95);
    expect(r.refusedShare).toBeLessThanOrEqual(0.01);
    expect(r.snapshot.learnt).toBeGreaterThanOrEqual(200 * 0.93);
    expect(expectPaced(r.rates, false, 'start')).toBeGreaterThan(r.rates.length * 0.9);
  });

  it('a strict leaky bucket with two requests in flight from the start (orders list --all): near the limit from the start, few refusals', async () => {
    // Two requests a millisecond apart, one refused, are no rate: halving from "2,000/s" took five
    // refusals and their pauses to come down to 40/s.
    const r = await simulate({ kind: 'leaky', perSecond: 40, seconds: 12, latencyMs: 8, concurrency: 2 });
    // The start included: one refused at once, one already on its way, two probes too far up. A probe
    // refused goes back to the rate that ran clean before it, not to half of it or to what the last
    // second accepted during the climb (0.92 when it did, the second probe refused only after 2 s).
    expect(r.share(0, 12)).toBeGreaterThanOrEqual(0.935);
    expect(r.refusedAt.filter((t) => t < 2000).length).toBeLessThanOrEqual(4);
  });

  it('a strict leaky bucket with timers up to 1.5 ms late (orders list --all behind nginx): the exact sleep keeps the pace', async () => {
    const run = { kind: 'leaky', perSecond: 40, seconds: 20, latencyMs: 8, concurrency: 2, lateTimersMs: 1.5 } as const;
    const exact = await simulate({ ...run, exact: true });
    const late = await simulate(run);
    console.info(
      `strict bucket, timers up to 1.5 ms late: ${exact.share(5, 20).toFixed(3)} of the limit with the exact sleep, ${late.share(5, 20).toFixed(3)} without`,
    );
    expect(exact.share(5, 20)).toBeGreaterThanOrEqual(0.97);
    expect(exact.refusedShare).toBeLessThanOrEqual(0.02);
    // Each request leaves one interval after the one before, not a late timer after it.
    const lateness = (writes: { at: number; rate?: number }[]) => {
      const over = writes.slice(1).flatMap((w, i) => (w.rate !== undefined && w.rate === writes[i]?.rate ? [w.at - (writes[i]?.at ?? 0) - 1000 / w.rate] : []));
      return over.sort((a, b) => a - b)[over.length >> 1] ?? Number.NaN;
    };
    expect(lateness(exact.writes)).toBeLessThan(0.05);
    expect(lateness(late.writes)).toBeGreaterThan(0.3);
    // Where bursts are accepted the catch-up absorbs late timers instead: no exact sleep needed there.
    const token = await simulate({ ...run, kind: 'token', exact: true });
    expect(token.share(5, 20)).toBeGreaterThanOrEqual(0.9);
  });

  it.each(KINDS)('%s: never more in flight than --concurrency, never faster than --rate', async (kind) => {
    for (const concurrency of [1, 4, 16]) {
      const r = await simulate({ kind, perSecond: 1000, seconds: 5, latencyMs: 50, concurrency, maxRate: 60 });
      expect(r.peakInFlight).toBeLessThanOrEqual(concurrency);
      for (const t of r.starts) expect(r.starts.filter((s) => s >= t && s < t + 999.9).length).toBeLessThanOrEqual(60);
    }
    const limited = await simulate({ kind, perSecond: 100, seconds: 10, latencyMs: 50, concurrency: 16, maxRate: 60 });
    for (const t of limited.starts) expect(limited.starts.filter((s) => s >= t && s < t + 999.9).length).toBeLessThanOrEqual(60);
    expect(limited.refusedAt).toEqual([]);
  });

  it.each(KINDS)('%s: a refusal costs one step down, not a collapse', async (kind) => {
    const r = await simulate({ kind, perSecond: 40, seconds: 30, latencyMs: 20, concurrency: 16 });
    // Once settled, a refusal lowers the learnt rate by a step: it never falls under 0.8 of the limit.
    const settled = r.rates.filter((x) => x.at > 10_000);
    for (const x of settled) expect(x.rate ?? 0).toBeGreaterThan(0.8 * 40);
  });

  it.each(KINDS)('%s: finds the limit again within seconds after the server raises it from 20/s to 80/s', async (kind) => {
    const r = await simulate({ kind, perSecond: 20, seconds: 45, latencyMs: 20, concurrency: 16, raiseAt: 15, raiseTo: 80 });
    expect(r.share(5, 15, 20)).toBeGreaterThanOrEqual(0.9);
    // The rise is found within ten seconds: three at the old ceiling, then probes doubling their step.
    expect(r.share(25, 45, 80)).toBeGreaterThanOrEqual(0.9);
  });

  it.each(KINDS)('%s: keeps enough requests in flight for the learnt rate when answers slow from 10 ms to 100 ms', async (kind) => {
    // Sized by the fastest answer seen, 200/s at 10 ms needs 5 slots; at 100 ms it needs 20.
    const r = await simulate({ kind, perSecond: 200, seconds: 30, latencyMs: 10, concurrency: 32, slowFrom: 5, slowLatencyMs: 100 });
    expect(r.share(15, 30)).toBeGreaterThanOrEqual(0.9);
    expect(r.peakInFlight).toBeLessThanOrEqual(32);
    expect(r.refusedShare).toBeLessThanOrEqual(0.03);
  });

  it.each([
    [2, 0.85],
    [5, 0.75],
  ])('leaky at 40/s, requests arriving up to %d ms late (a loaded machine): settles a margin under the limit, few refusals', async (jitterMs, minShare) => {
    // A strict leaky bucket refuses two requests that arrive too close however far apart they left:
    // the rate has to settle where the arrival jitter rarely brings two within 25 ms.
    const r = await simulate({ kind: 'leaky', perSecond: 40, seconds: 40, latencyMs: 50, concurrency: 16, jitterMs });
    expect(r.share(10, 40)).toBeGreaterThanOrEqual(minShare);
    expect(r.share(10, 40)).toBeLessThanOrEqual(1);
    expect(r.refusedShare).toBeLessThanOrEqual(0.02);
    expect(r.snapshot.learnt).toBeLessThanOrEqual(40);
  });

  describe('the sandbox token bucket (a burst of one second, Retry-After 1 s) at 40/s, 50 ms latency', () => {
    const sandbox = { kind: 'token' as const, perSecond: 40, latencyMs: 50, concurrency: 16, server: (now: () => number) => tokenBucket(now, 40, 40, true) };

    it('after the first refusals, a probe past the limit costs about one refusal: at most 4 in 25 s', async () => {
      const r = await simulate({ ...sandbox, seconds: 25 });
      // The start (the burst runs out while a round trip's requests are on their way) is not counted.
      expect(r.refusedAt.filter((t) => t > 1000).length).toBeLessThanOrEqual(4);
      expect(r.share(2, 25)).toBeGreaterThanOrEqual(0.95);
    });

    it('on a loaded machine (requests up to 5 ms late) a probe that ran far up on the burst still settles near the limit', async () => {
      // Sent slower than paced, the bucket stays full while the probe climbs; its refusal comes far
      // above the limit, and the rate accepted between the refusals is what to settle on.
      const r = await simulate({ ...sandbox, seconds: 25, jitterMs: 5 });
      expect(r.refusedAt.filter((t) => t > 1000).length).toBeLessThanOrEqual(4);
      expect(r.share(2, 25)).toBeGreaterThanOrEqual(0.9);
    });

    it('probes past the limit read between refusals in small steps: never paced above 1.4 times it', async () => {
      // A full bucket hides the limit while a probe drains it: a probe that doubled its step each half
      // second would be refused at two or three times the limit, with a round trip of requests behind it.
      const r = await simulate({ ...sandbox, seconds: 25 });
      const peak = Math.max(...r.rates.filter((x) => x.at > 1000).map((x) => x.rate ?? 0));
      expect(peak).toBeLessThanOrEqual(40 * 1.4);
    });

    it('settles on what the bucket accepted between refusals without ratcheting down over two minutes', async () => {
      const r = await simulate({ ...sandbox, seconds: 120 });
      expect(r.share(60, 120)).toBeGreaterThanOrEqual(0.95);
      expect(r.refusedAt.filter((t) => t > 60_000).length).toBeLessThanOrEqual(6);
      expect(r.snapshot.learnt).toBeGreaterThanOrEqual(40 * 0.9);
      expect(r.snapshot.learnt).toBeLessThanOrEqual(40 * 1.05);
    });
  });
});
