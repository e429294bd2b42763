/**
 * Simulated server-side rate limiters of four kinds, on an injected clock, for the pacing tests:
 * each decides on a request's arrival whether it is within the limit.
 */
import { createRateLimiter } from '../../src/sandbox/rate-limit.js';

export interface SimLimiter {
  /** Whether a request arriving now is accepted, and the headers of its answer. */
  take(): { allowed: boolean; headers: Record<string, string> };
  /** Changes the limit (requests per second) from now on. */
  setRate(perSecond: number): void;
}

export type LimiterKind = 'leaky' | 'token' | 'fixed' | 'sliding';

/**
 * nginx's limit_req: a leaky bucket in whole milliseconds; `burst` 0 (nginx's default) refuses any
 * request that arrives less than 1/rate after the last accepted one.
 */
export function leakyBucket(now: () => number, perSecond: number, burst = 0): SimLimiter {
  let rate = perSecond * 1000;
  let excess = 0;
  let last: number | undefined;
  return {
    take() {
      const t = Math.floor(now());
      const ms = last === undefined ? 0 : t - last;
      let next = last === undefined ? 0 : excess - (rate * ms) / 1000 + 1000;
      if (next < 0) next = 0;
      if (next > burst * 1000) return { allowed: false, headers: {} };
      excess = next;
      last = t;
      return { allowed: true, headers: {} };
    },
    setRate(r) {
      rate = r * 1000;
    },
  };
}

/** The sandbox's token bucket (src/sandbox/rate-limit.ts): a burst, then `perSecond`. */
export function tokenBucket(now: () => number, perSecond: number, burst: number, retryAfter = false): SimLimiter {
  const bucket = createRateLimiter(now);
  bucket.set({ perSecond, burst, retryAfter });
  return {
    take() {
      const d = bucket.take('t');
      return { allowed: d?.allowed !== false, headers: d?.headers ?? {} };
    },
    setRate(r) {
      bucket.set({ perSecond: r, burst: Math.max(1, Math.round((burst / perSecond) * r)), retryAfter });
    },
  };
}

/** `perSecond` requests per whole-second window (counted from zero), the count reset at each window. */
export function fixedWindow(now: () => number, perSecond: number): SimLimiter {
  let limit = perSecond;
  let window = -1;
  let count = 0;
  return {
    take() {
      const w = Math.floor(now() / 1000);
      if (w !== window) {
        window = w;
        count = 0;
      }
      if (count >= limit) return { allowed: false, headers: {} };
      count++;
      return { allowed: true, headers: {} };
    },
    setRate(r) {
      limit = r;
    },
  };
}

/** At most `perSecond` accepted requests in any second (a sliding log). */
export function slidingWindow(now: () => number, perSecond: number): SimLimiter {
  let limit = perSecond;
  const accepted: number[] = [];
  return {
    take() {
      const t = now();
      while (accepted.length > 0 && (accepted[0] as number) <= t - 1000) accepted.shift();
      if (accepted.length >= limit) return { allowed: false, headers: {} };
      accepted.push(t);
      return { allowed: true, headers: {} };
    },
    setRate(r) {
      limit = r;
    },
  };
}

/** A limiter of `kind` at `perSecond` (the token bucket with a burst of half a second's worth). */
export function simLimiter(kind: LimiterKind, now: () => number, perSecond: number): SimLimiter {
  if (kind === 'leaky') return leakyBucket(now, perSecond);
  if (kind === 'token') return tokenBucket(now, perSecond, Math.max(1, Math.round(perSecond / 2)));
  if (kind === 'fixed') return fixedWindow(now, perSecond);
  return slidingWindow(now, perSecond);
}

/** Virtual time: sleeps are timers that the driver fires in order once every promise has settled. */
export function virtualTime() {
  let t = 0;
  let seq = 0;
  const timers: { at: number; seq: number; resolve: () => void }[] = [];
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      timers.push({ at: t + Math.max(0, ms), seq: seq++, resolve });
    });
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  async function run<T>(work: Promise<T>): Promise<T> {
    let finished = false;
    work.then(
      () => {
        finished = true;
      },
      () => {
        finished = true;
      },
    );
    for (;;) {
      await settle();
      if (finished) return work;
      timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = timers.shift();
      if (!next) throw new Error('nothing left to run: the work is stuck');
      t = Math.max(t, next.at);
      next.resolve();
    }
  }
  return { now: () => t, sleep, run };
}
