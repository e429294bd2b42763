/**
 * Adaptive concurrency and rate for many requests to one server whose limit opcli cannot know in
 * advance. Every request asks for a permit first and reports how it went:
 *
 *   const permit = await limiter.acquire(signal);   // waits for a slot, the pacing and any pause
 *   permit.done({ status, headers });               // or permit.done({ error: true })
 *
 * - Concurrency starts modestly and grows by one per clean, fast answer (slow start), up to
 *   `maxConcurrency` (`--concurrency`); it stops growing when answers slow down (the server queues).
 * - The rate is unpaced until the server first refuses (429, or 503 overload). Then it is set just
 *   under the rate the server was seen to accept, and paced (no bursts). While answers stay clean
 *   and the pacing is what holds the work back, it probes upward a few percent a second; each
 *   refusal cuts it again. `maxRate` (`--rate`) caps it from the start.
 * - A refusal pauses every permit: for Retry-After when the server sends it, else a short backoff
 *   that doubles while refusals continue. RateLimit-* / X-RateLimit-* headers, when present, let
 *   it slow down before the budget runs out, and a stated policy (`q;w=s`) caps the rate at q/s.
 *
 * No I/O: the clock and sleep are injected, so the tests drive it with a fake clock.
 */
import { parseRetryAfter } from './retry.js';

export interface AdaptiveOptions {
  /** Upper bound of requests in flight (`--concurrency`). */
  maxConcurrency: number;
  /** Upper bound of requests started per second (`--rate`); default none. */
  maxRate?: number;
  /** Requests in flight at the start (default min(4, maxConcurrency)). */
  initialConcurrency?: number;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Longest pause a Retry-After may impose (default 60 s). */
  maxRetryAfterMs?: number;
}

/** How one request went: its status and headers, or a failure without an answer. */
export interface Outcome {
  status?: number;
  headers?: Record<string, string>;
  /** No answer (connection failure, timeout). */
  error?: boolean;
}

export interface Permit {
  /** Reports the answer and frees the slot. Call exactly once. */
  done(outcome: Outcome): void;
}

/** What the limiter knows now, for a status line and the summary. */
export interface LimiterSnapshot {
  /** Requests allowed in flight now. */
  concurrency: number;
  inFlight: number;
  /** The paced rate in requests per second, or undefined while unpaced. */
  rate?: number;
  /** Requests answered, and of those refused with 429 or 503. */
  answered: number;
  refused: number;
  /** Epoch ms until which no request starts (a refusal's pause), or 0. */
  pausedUntil: number;
}

/** The interface a batch (or the HTTP client) uses: a permit per request attempt. */
export interface RequestLimiter {
  acquire(signal?: AbortSignal): Promise<Permit>;
  snapshot(): LimiterSnapshot;
}

const PROBE_EVERY_MS = 1000;
const PROBE_STEP = 1.03;
/** The share of the accepted rate settled on after a refusal. */
const SETTLE = 0.9;
const MIN_RATE = 0.2;
const SLOW_START_UNTIL = 8;
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5000;
/** The shortest window, and the fewest accepted answers, from which a nearly spent budget sets the rate. */
const MIN_SAMPLE_MS = 1000;
const MIN_SAMPLES = 8;

/** Reads a rate-limit header under either name. */
function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  return headers?.[`ratelimit-${name}`] ?? headers?.[`x-ratelimit-${name}`];
}

/** Creates an adaptive limiter. */
export function createAdaptiveLimiter(options: AdaptiveOptions): RequestLimiter {
  const max = Math.max(1, Math.floor(options.maxConcurrency));
  const maxRate = options.maxRate !== undefined && options.maxRate > 0 ? options.maxRate : undefined;
  const now = options.now;
  let limit = Math.min(max, Math.max(1, options.initialConcurrency ?? 4));
  let inFlight = 0;
  let rate: number | undefined = maxRate;
  let nextStart = 0;
  let pausedUntil = 0;
  let backoff = FIRST_BACKOFF_MS;
  let answered = 0;
  let refused = 0;
  let fastest = Number.POSITIVE_INFINITY;
  /** Start times of accepted requests since the last refusal, to measure the rate the server takes. */
  let acceptedStarts: number[] = [];
  let windowStart = now();
  /**
   * When the current count of accepted answers began, a pause included: the answers accepted right
   * after a pause are the budget the server refilled during it, so a rate read from them without the
   * pause overshoots and draws the next round of refusals.
   */
  let cycleStart = windowStart;
  /** Set when the pacing made a request wait since the last probe: the rate is what holds work back. */
  let paceBound = false;
  let lastProbe = now();
  let lastCut = -1;
  let generation = 0;
  let growth = 0;
  const waiters: (() => void)[] = [];

  const setRate = (value: number | undefined) => {
    rate = value === undefined ? maxRate : Math.max(MIN_RATE, maxRate === undefined ? value : Math.min(maxRate, value));
  };

  const wake = () => {
    while (waiters.length > 0 && inFlight < limit) {
      inFlight++;
      (waiters.shift() as () => void)();
    }
  };

  /** The server refused: settle the rate under what it accepted, pause everyone. */
  const cut = (startedGeneration: number, retryAfterMs: number | undefined) => {
    const t = now();
    refused++;
    // A Retry-After is always honoured. Otherwise one pause per round: refusals of requests sent
    // before the last cut were already in flight and say nothing new.
    if (retryAfterMs !== undefined) pausedUntil = Math.max(pausedUntil, t + retryAfterMs);
    if (startedGeneration < lastCut) return;
    if (retryAfterMs === undefined) {
      pausedUntil = Math.max(pausedUntil, t + backoff);
      backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
    }
    // Settle under the rate the server accepted since the last cut (nothing accepted: the pause
    // alone answers, the rate is not guessed from nothing).
    if (acceptedStarts.length > 0) {
      const elapsed = Math.max(250, t - cycleStart);
      const accepted = (acceptedStarts.length / elapsed) * 1000;
      setRate(Math.max(MIN_RATE, (rate === undefined ? accepted : Math.min(rate, accepted)) * SETTLE));
    }
    // Enough slots to keep the paced rate busy, no more.
    if (rate !== undefined && Number.isFinite(fastest)) limit = Math.min(limit, Math.max(1, Math.ceil((rate * fastest) / 1000) * 2));
    generation++;
    lastCut = generation;
    acceptedStarts = [];
    cycleStart = t;
    windowStart = Math.max(t, pausedUntil);
    lastProbe = windowStart;
    paceBound = false;
  };

  return {
    async acquire(signal?: AbortSignal): Promise<Permit> {
      if (inFlight < limit && waiters.length === 0) inFlight++;
      else await new Promise<void>((resolve) => waiters.push(resolve));
      try {
        // Wait out any pause, then reserve the next paced start time. A refusal that arrives while
        // this request waits for its slot sets a pause: wait that out and reserve again.
        for (;;) {
          const t = now();
          if (pausedUntil > t) {
            await options.sleep(pausedUntil - t, signal);
            continue;
          }
          if (rate === undefined) break;
          const slot = Math.max(nextStart, t);
          nextStart = slot + 1000 / rate;
          if (slot <= t) break;
          paceBound = true;
          await options.sleep(slot - t, signal);
          if (pausedUntil <= now()) break;
        }
        signal?.throwIfAborted();
      } catch (error) {
        inFlight--;
        wake();
        throw error;
      }
      const started = now();
      const startedGeneration = generation;
      let finished = false;
      return {
        done(outcome: Outcome) {
          if (finished) return;
          finished = true;
          inFlight--;
          const t = now();
          answered++;
          const status = outcome.status;
          if (status === 429 || status === 503) {
            cut(startedGeneration, parseRetryAfter(outcome.headers?.['retry-after'], t, options.maxRetryAfterMs ?? 60_000));
          } else if (!outcome.error && status !== undefined && status < 500) {
            backoff = FIRST_BACKOFF_MS;
            acceptedStarts.push(started);
            if (acceptedStarts.length > 10_000) acceptedStarts.splice(0, 5000);
            const latency = t - started;
            fastest = Math.min(fastest, latency);
            // Grow while answers are as fast as the fastest seen (plus slack): the server is not queueing.
            // Once paced, only as many slots as keep the rate busy.
            const enough = rate === undefined ? max : Math.max(2, Math.ceil((rate * fastest) / 1000) * 2 + 1);
            // Slow start to SLOW_START_UNTIL slots (one more per answer), then one more per round trip.
            if (latency <= fastest * 2 + 5 && limit < Math.min(max, enough)) {
              growth += limit < SLOW_START_UNTIL ? 1 : 1 / limit;
              if (growth >= 1) {
                limit++;
                growth = 0;
              }
            }
            const remaining = Number(header(outcome.headers, 'remaining'));
            const policy = /^\s*(\d+(?:\.\d+)?)\s*;\s*w=(\d+(?:\.\d+)?)/.exec(outcome.headers?.['ratelimit-policy'] ?? '');
            if (policy) {
              const stated = Number(policy[1]) / Number(policy[2]);
              if (stated > 0 && (rate === undefined || rate > stated)) setRate(stated * 0.98);
            }
            const sampled = t - windowStart >= MIN_SAMPLE_MS && acceptedStarts.length >= MIN_SAMPLES;
            if (Number.isFinite(remaining) && remaining <= inFlight + 1 && startedGeneration >= lastCut && sampled) {
              // The budget is nearly spent: slow down now, before the server refuses, to the rate the
              // server accepted over a window long enough to mean something (a few answers in a
              // quarter second would read a burst's tail as the server's rate, and ratchet down).
              const accepted = (acceptedStarts.length / (t - windowStart)) * 1000;
              // Already paced and the server keeps up: a bucket kept near empty is the steady state at
              // its limit, not a reason to slow down further.
              if (rate === undefined || accepted < rate * SETTLE) setRate(accepted * 0.95);
              generation++;
              lastCut = generation;
              acceptedStarts = [];
              windowStart = t;
              cycleStart = t;
              lastProbe = t;
              paceBound = false;
            } else if (rate !== undefined && t - lastProbe >= PROBE_EVERY_MS) {
              if (paceBound && (maxRate === undefined || rate < maxRate)) setRate(rate * PROBE_STEP);
              lastProbe = t;
              paceBound = false;
            }
          }
          wake();
        },
      };
    },
    snapshot(): LimiterSnapshot {
      return { concurrency: limit, inFlight, rate, answered, refused, pausedUntil: pausedUntil > now() ? pausedUntil : 0 };
    },
  };
}
