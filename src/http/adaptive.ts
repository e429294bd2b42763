/**
 * Pacing for many requests to one server whose limit opcli cannot know in advance, whatever kind of
 * limiter it runs (a strict leaky bucket such as nginx's limit_req without burst, a token bucket with
 * a burst, a fixed or a sliding window). Every request asks for a permit first and reports how it went:
 *
 *   const permit = await limiter.acquire(signal);   // waits for a slot, the pacing and any pause
 *   permit.sent();                                  // when the request's bytes were written
 *   permit.done({ status, headers });               // or permit.done({ error: true })
 *
 * - Concurrency starts modestly and grows by one per clean, fast answer to 8 (slow start), up to
 *   `maxConcurrency` (`--concurrency`); it stops growing when answers slow down (the server queues).
 *   Once paced, it holds as many as the rate needs at the answers' usual latency.
 * - The parts: `Slots` (requests in flight), `SpacingGate` (src/http/spacing-gate.ts: when the next may leave),
 *   `RateEstimator` and `ProbePolicy` (src/http/rate-estimator.ts: the rate, down and up).
 * - Requests are unpaced until the server first refuses (429, or 503 overload) or states a policy.
 *   From then on they leave evenly spaced at the learnt rate, never closer than its interval to the
 *   request before (a late timer never makes two leave together), and never in bursts. The interval
 *   counts from when the request before was written (`sent()`), not from its permit: a busy event
 *   loop between the two would otherwise bring them closer at the server than the rate allows.
 *   Where the server was seen to accept requests started within a millisecond of each other (a bucket
 *   with a burst, a window), a timer that fires late is caught up instead: each request aims a little
 *   before its place (never closer than 0.6 of the interval to the one before, never more than one
 *   request ahead of the rate), else at 200/s a timer a millisecond late costs a sixth of the rate.
 *   Elsewhere (a strict leaky bucket) the wait is exact (`sleepExact`): a timer late by a millisecond
 *   costs 4 % of 40/s, and one early is refused.
 * - A refusal costs one step down: to 0.95 of the rate it was sent at, or to what the server was
 *   seen to accept over the last second, whichever is lower, never below 0.85 of it. Only before
 *   anything ran clean (the first refusals), or far above the last rate that did, is the step a
 *   halving (or straight to what the server accepted). The rate refused at is the ceiling. A server
 *   that accepts no burst, refusing a probe without a pause, sends the rate back to the one that ran
 *   clean before the probe, no lower.
 * - After a clean stretch (half a second, a few answers, requests really leaving at the pace) the
 *   rate probes upwards: halfway to the ceiling while under it; past it after three clean seconds
 *   there, by 2 %, 4 %, 8 % … per stretch, so a limit that rises is found again in seconds.
 * - Two refusals with Retry-After a second or more apart: the rate settles under what the server
 *   accepted between them, the pause included (a token bucket's refill rate, whatever its burst),
 *   and probes past it by 2 % of it a stretch up to a quarter above, waiting longer each time the
 *   same limit refuses again (a full bucket hides the limit while a probe drains it).
 * - A refusal with Retry-After pauses every permit for that long; refusals with nothing accepted in
 *   between (the server refuses everything) pause for a backoff that doubles (250 ms to 5 s).
 *   RateLimit-* / X-RateLimit-* headers let it slow down before the budget runs out, and a stated
 *   policy (`q;w=s`) caps the rate at q/s. `maxRate` (`--rate`) caps the rate from the start.
 *
 * No I/O: the clock and sleep are injected, so the tests drive it in virtual time.
 */
import { ProbePolicy, RateEstimator, retryAfterOf } from './rate-estimator.js';
import { SpacingGate } from './spacing-gate.js';

export interface AdaptiveOptions {
  /** Upper bound of requests in flight (`--concurrency`). */
  maxConcurrency: number;
  /** Upper bound of requests started per second (`--rate`); default none. */
  maxRate?: number;
  /** Requests in flight at the start (default min(4, maxConcurrency)). */
  initialConcurrency?: number;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Sleeps exactly (src/core/timers.ts `PaceClock`), for the paced waits where a strict limiter counts
   * every millisecond; default `sleep`.
   */
  sleepExact?: (ms: number, signal?: AbortSignal) => Promise<void>;
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
  /**
   * Reports that the request's bytes were written: the next paced request leaves no sooner than the
   * interval after this (and waits for it, or for `done`). Call at most once, before `done`.
   */
  sent(): void;
  /** Reports the answer and frees the slot. Call exactly once. */
  done(outcome: Outcome): void;
}

/** What the limiter knows now, for a status line and the summary. */
export interface LimiterSnapshot {
  /** Requests allowed in flight now. */
  concurrency: number;
  inFlight: number;
  /** The paced rate in requests per second, a probe above the limit included, or undefined while unpaced. */
  rate?: number;
  /**
   * The rate the server allows, as learnt: the paced rate, but no higher than the rate last refused
   * while a probe runs less than half again above it (a bucket's burst lets a probe run clean for a
   * while); `--rate` when that set it. Undefined while unpaced.
   */
  learnt?: number;
  /** Requests answered, and of those refused with 429 or 503. */
  answered: number;
  refused: number;
  /** Milliseconds before requests start again (a refusal's pause), or 0. */
  pauseLeftMs: number;
}

/** The interface a batch (or the HTTP client) uses: a permit per request attempt. */
export interface RequestLimiter {
  acquire(signal?: AbortSignal): Promise<Permit>;
  snapshot(): LimiterSnapshot;
}

const SLOW_START_UNTIL = 8;
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5000;

/**
 * The slots: requests in flight, growing from a modest start (one per clean, fast answer, then one
 * per two round trips) while unpaced; once paced, as many as the rate needs at the answers' usual latency.
 */
class Slots {
  limit: number;
  inFlight = 0;
  private growth = 0;
  private fastest = Number.POSITIVE_INFINITY;
  /** A moving average of the latency of accepted answers. */
  private usual = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(
    private readonly max: number,
    initial: number,
  ) {
    this.limit = Math.min(max, Math.max(1, initial));
  }

  /** Takes a slot, waiting for one if none is free. */
  async take(): Promise<void> {
    if (this.inFlight < this.limit && this.waiters.length === 0) this.inFlight++;
    else await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Gives a slot back and lets waiting requests take the free ones. */
  release(): void {
    this.inFlight--;
    this.wake();
  }

  /** Lets waiting requests take the free slots. */
  wake(): void {
    while (this.waiters.length > 0 && this.inFlight < this.limit) {
      this.inFlight++;
      (this.waiters.shift() as () => void)();
    }
  }

  /** An accepted answer after `latency` ms, at `rate` (undefined while unpaced). */
  accepted(latency: number, rate: number | undefined): void {
    this.fastest = Math.min(this.fastest, latency);
    this.usual = this.usual === 0 ? latency : this.usual * 0.9 + latency * 0.1;
    if (rate !== undefined) {
      // Paced, the pace bounds the rate whatever the slots: enough of them to keep it busy at the
      // usual latency (a loaded machine or a queueing gateway answers slower than the fastest seen).
      this.limit = Math.min(this.max, Math.max(2, Math.ceil((rate * Math.max(this.fastest, this.usual)) / 1000) * 2 + 1));
      return;
    }
    // Grow while answers are as fast as the fastest seen (plus slack): the server is not queueing.
    // Slow start to SLOW_START_UNTIL slots (one more per answer), then one per two round trips: when a
    // bucket's burst runs dry, a round trip of requests in flight is refused, fewer when grown slower.
    if (latency <= this.fastest * 2 + 5 && this.limit < this.max) {
      this.growth += this.limit < SLOW_START_UNTIL ? 1 : 1 / (2 * this.limit);
      if (this.growth >= 1) {
        this.limit++;
        this.growth = 0;
      }
    }
  }

  /** A refusal at `rate`: enough slots to keep the paced rate busy, no more. */
  refused(rate: number): void {
    if (Number.isFinite(this.fastest)) this.limit = Math.min(this.limit, Math.max(1, Math.ceil((rate * this.fastest) / 1000) * 2));
  }
}

/** Waits for a free slot, then for the spacing (or a pause); an abort gives the slot back. */
async function admit(slots: Slots, gate: SpacingGate, estimator: RateEstimator, signal?: AbortSignal): Promise<void> {
  await slots.take();
  try {
    if (await gate.wait(() => estimator.rate, signal)) estimator.paceBound = true;
    signal?.throwIfAborted();
  } catch (error) {
    slots.release();
    throw error;
  }
}

/** Creates an adaptive limiter: slots, a spacing gate and a rate estimator with its probe policy. */
export function createAdaptiveLimiter(options: AdaptiveOptions): RequestLimiter {
  const now = options.now;
  const maxRate = options.maxRate !== undefined && options.maxRate > 0 ? options.maxRate : undefined;
  const slots = new Slots(Math.max(1, Math.floor(options.maxConcurrency)), options.initialConcurrency ?? 4);
  const gate = new SpacingGate(now, options.sleep, options.sleepExact ?? options.sleep);
  const burstsAccepted = () => gate.tolerant;
  const estimator = new RateEstimator(maxRate, now(), (rate) => gate.respace(rate), burstsAccepted);
  const probes = new ProbePolicy(estimator);
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  let backoff = FIRST_BACKOFF_MS;
  /** Nothing was accepted since the last refusal: another refusal means the server refuses everything. */
  let refusedSinceAccepted = false;
  let answered = 0;
  let refused = 0;

  /** The server refused: pause for Retry-After (or a backoff while it refuses everything), one step down. */
  const refusal = (started: number, startedGeneration: number, t: number, retryAfterMs: number | undefined, close: boolean) => {
    refused++;
    gate.answered(close, false);
    // A Retry-After is always honoured; a pause of our own only while the server refuses everything.
    if (retryAfterMs !== undefined) gate.pause(t + retryAfterMs);
    const fresh = startedGeneration === estimator.generation;
    if (fresh && refusedSinceAccepted && retryAfterMs === undefined) {
      gate.pause(t + backoff);
      backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
    }
    if (!estimator.refused(started, startedGeneration, t, Math.max(t, gate.pausedUntil), retryAfterMs)) return;
    refusedSinceAccepted = true;
    probes.reset();
    slots.refused(estimator.rate as number);
  };

  const accepted = (outcome: Outcome, started: number, startedGeneration: number, t: number, close: boolean) => {
    // Under --rate every request keeps the whole interval: the user set the most per second.
    gate.answered(close && maxRate === undefined, true);
    backoff = FIRST_BACKOFF_MS;
    refusedSinceAccepted = false;
    estimator.accepted(started, startedGeneration, t);
    slots.accepted(t - started, estimator.rate);
    estimator.learnFromHeaders(outcome.headers, slots.inFlight, startedGeneration, t);
    probes.afterAccepted(t);
  };

  return {
    async acquire(signal?: AbortSignal): Promise<Permit> {
      await admit(slots, gate, estimator, signal);
      const started = now();
      const close = gate.granted(started);
      estimator.started(started);
      const startedGeneration = estimator.generation;
      let finished = false;
      let written = false;
      return {
        sent() {
          if (written || finished) return;
          written = true;
          gate.written(now());
        },
        done(outcome: Outcome) {
          if (finished) return;
          finished = true;
          if (!written) gate.written(undefined);
          slots.inFlight--;
          const t = now();
          answered++;
          const status = outcome.status;
          if (status === 429 || status === 503) refusal(started, startedGeneration, t, retryAfterOf(outcome.headers, t, maxRetryAfterMs), close);
          else if (!outcome.error && status !== undefined && status < 500) accepted(outcome, started, startedGeneration, t, close);
          slots.wake();
        },
      };
    },
    snapshot(): LimiterSnapshot {
      const t = now();
      const pauseLeftMs = Math.max(0, gate.pausedUntil - t);
      return { concurrency: slots.limit, inFlight: slots.inFlight, rate: estimator.rate, learnt: estimator.learnt(t), answered, refused, pauseLeftMs };
    },
  };
}
