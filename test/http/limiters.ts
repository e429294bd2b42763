/**
 * Simulated server-side rate limiters on an injected clock, for the pacing tests: each decides on a
 * request's arrival whether it is within the limit, and answers with the headers its kind sends.
 * Also virtual time, and a batch driven through the limiter against one of them.
 */
import { createAdaptiveLimiter, type Outcome, type Permit } from '../../src/http/adaptive.js';

/** Whether a request is accepted, and the headers of its answer. */
export interface Decision {
  allowed: boolean;
  headers: Record<string, string>;
}

export interface SimLimiter {
  /** Whether a request arriving now is accepted, and the headers of its answer. */
  take(): Decision;
  /** Changes the limit (requests per second) from now on. */
  setRate(perSecond: number): void;
}

/** How a token bucket announces itself: nothing, Retry-After on a refusal, or a budget in one of the header forms. */
export type Announce = 'none' | 'retry-after' | 'policy' | 'combined' | 'ietf' | 'x';

/** Whole seconds until `ms` has passed, at least 1: Retry-After's delta-seconds. */
const seconds = (ms: number) => String(Math.max(1, Math.ceil(ms / 1000)));

/**
 * nginx's limit_req: a leaky bucket in whole milliseconds; `burst` 0 (nginx's default) refuses any
 * request that arrives less than 1/rate after the last accepted one. No headers.
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

/** A token bucket of `burst` tokens (at least 1) refilled at `perSecond`, announcing itself as `announce` says. */
export function tokenBucket(now: () => number, perSecond: number, burst: number, announce: Announce = 'none'): SimLimiter {
  let rate = perSecond;
  const size = Math.max(1, burst);
  let tokens = size;
  let at = now();
  return {
    take() {
      const t = now();
      tokens = Math.min(size, tokens + ((t - at) / 1000) * rate);
      at = t;
      const allowed = tokens >= 1;
      if (allowed) tokens -= 1;
      const headers: Record<string, string> = {};
      const remaining = Math.floor(tokens);
      const reset = seconds(((size - tokens) / rate) * 1000);
      if (!allowed && announce !== 'none') headers['retry-after'] = seconds(((1 - tokens) / rate) * 1000);
      if (announce === 'policy') headers['ratelimit-policy'] = `${Math.round(rate)};w=1`;
      if (announce === 'combined') headers.ratelimit = `limit=${size}, remaining=${remaining}, reset=${reset}`;
      if (announce === 'ietf') Object.assign(headers, { 'ratelimit-limit': String(size), 'ratelimit-remaining': String(remaining), 'ratelimit-reset': reset });
      if (announce === 'x')
        Object.assign(headers, { 'x-ratelimit-limit': String(size), 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': reset });
      return { allowed, headers };
    },
    setRate(r) {
      rate = r;
    },
  };
}

/** `perSecond` requests per whole-second window, the count reset at each window; a refusal's Retry-After runs to the window's end. */
export function fixedWindow(now: () => number, perSecond: number): SimLimiter {
  let limit = perSecond;
  let window = Number.NaN;
  let count = 0;
  return {
    take(): Decision {
      const w = Math.floor(now() / 1000);
      if (w !== window) {
        window = w;
        count = 0;
      }
      if (count >= limit) return { allowed: false, headers: { 'retry-after': seconds((w + 1) * 1000 - now()) } };
      count++;
      return { allowed: true, headers: {} };
    },
    setRate(r) {
      limit = r;
    },
  };
}

/** At most `perSecond` accepted requests in any second (a sliding log). No headers. */
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

/** Virtual time: sleeps are timers that the driver fires in order once every promise has settled. */
export function virtualTime() {
  let t = 0;
  let seq = 0;
  const timers: { at: number; seq: number; resolve: () => void }[] = [];
  const sleep = (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      timers.push({ at: t + Math.max(0, ms), seq: seq++, resolve });
    });
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  async function run<T>(work: Promise<T>): Promise<T> {
    let finished = false;
    const end = () => {
      finished = true;
    };
    work.then(end, end);
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

/** A deterministic generator in [0, 1). */
export function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export interface Batch {
  /** The server's limiter on the virtual clock. */
  server: (now: () => number) => SimLimiter;
  rows: number;
  latencyMs: number;
  concurrency: number;
  maxRate?: number;
  /** The pacing's timers fire up to this many ms late (Node's fire up to a millisecond or so late). */
  lateMs?: number;
  /** After this many rows were filed, the server's limit becomes `changeTo`. */
  changeAfter?: number;
  changeTo?: number;
  /** Seeds the timers' lateness (by the millisecond they are due in) and the requests' jitter. */
  seed?: number;
  /** A gateway in front (nginx's limit_req): this share of the round trip is the upstream's, behind the limiter, and a refusal is answered without it. */
  upstreamShare?: number;
  /** Each request reaches the limiter late by an exponential draw of this mean (ms: the event loop, the journal's flush, loopback), and is answered as late. */
  jitterMs?: number;
  /** An accepted request's upstream takes longer by an exponential draw of this mean (ms). */
  serviceJitterMs?: number;
}

/** What a batch did: when each accepted request reached the server, the refusals, the peak in flight, the limiter's last snapshot. */
export interface BatchRun {
  acceptedAt: number[];
  refusedAt: number[];
  starts: { at: number; rate?: number }[];
  peakInFlight: number;
  /** When the server's limit changed (ms), if it did. */
  changedAt?: number;
  snapshot: ReturnType<ReturnType<typeof createAdaptiveLimiter>['snapshot']>;
}

/**
 * `concurrency` workers file `rows` rows: each asks the limiter for a permit, reaches the limiter after
 * half the latency outside the upstream's share, plus its jitter (the limiter decides on arrival), and
 * is answered after the rest of the latency if accepted, after the way back if refused (a gateway
 * answers a refusal itself); a refused row asks for a permit again at once with the refused one, as
 * the HTTP client does (a 429 did nothing).
 */
export async function runBatch(batch: Batch): Promise<BatchRun> {
  const clock = virtualTime();
  const late = batch.lateMs ?? 0;
  // How late the event loop is at each millisecond: every timer due in it fires that late, as Node's
  // timers of one moment fire together (a per-timer draw would let racing waiters pick the least late).
  const seed = batch.seed ?? 44;
  const lateness = (at: number) => (late * (Math.imul(Math.floor(at) ^ seed, 2654435761) >>> 0)) / 2 ** 32;
  const server = batch.server(clock.now);
  const limiter = createAdaptiveLimiter({
    maxConcurrency: batch.concurrency,
    maxRate: batch.maxRate,
    now: clock.now,
    sleep: (ms, signal) => clock.sleep(ms + lateness(clock.now() + ms), signal),
  });
  const run: BatchRun = { acceptedAt: [], refusedAt: [], starts: [], peakInFlight: 0, snapshot: limiter.snapshot() };
  const way = (batch.latencyMs * (1 - (batch.upstreamShare ?? 0))) / 2;
  const draw = seeded(seed);
  const exponential = (mean = 0) => mean * -Math.log(1 - draw());
  let next = 0;
  let inFlight = 0;
  const worker = async () => {
    while (next < batch.rows) {
      next++;
      let refused: Permit | undefined;
      for (;;) {
        const permit = await limiter.acquire(undefined, refused);
        refused = permit;
        run.starts.push({ at: clock.now(), rate: limiter.snapshot().rate });
        run.peakInFlight = Math.max(run.peakInFlight, ++inFlight);
        permit.sent();
        await clock.sleep(way + exponential(batch.jitterMs));
        const decision = server.take();
        (decision.allowed ? run.acceptedAt : run.refusedAt).push(clock.now());
        if (batch.changeAfter !== undefined && run.changedAt === undefined && run.acceptedAt.length >= batch.changeAfter) {
          run.changedAt = clock.now();
          server.setRate(batch.changeTo as number);
        }
        await clock.sleep(decision.allowed ? batch.latencyMs - way + exponential(batch.serviceJitterMs) : way);
        inFlight--;
        const outcome: Outcome = { status: decision.allowed ? 200 : 429, headers: decision.headers };
        permit.done(outcome);
        if (decision.allowed) break;
      }
    }
  };
  await clock.run(Promise.all(Array.from({ length: batch.concurrency }, worker)));
  run.snapshot = limiter.snapshot();
  return run;
}
