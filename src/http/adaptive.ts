/**
 * Pacing for many requests to one server whose limit opcli cannot know in advance, whatever kind of
 * limiter it runs (a strict leaky bucket such as nginx's limit_req without burst, a token bucket with
 * a burst, a fixed or a sliding window). Every request asks for a permit first and reports how it went:
 *
 *   const permit = await limiter.acquire(signal);   // waits for a slot, the pacing and any pause
 *   permit.done({ status, headers });               // or permit.done({ error: true })
 *
 * - Concurrency starts modestly and grows by one per clean, fast answer (slow start), up to
 *   `maxConcurrency` (`--concurrency`); it stops growing when answers slow down (the server queues).
 * - Requests are unpaced until the server first refuses (429, or 503 overload) or states a policy.
 *   From then on they leave evenly spaced at the learnt rate, never closer than its interval to the
 *   request before (a late timer never makes two leave together), and never in bursts.
 * - A refusal costs one step down: to 0.95 of the rate it was sent at, or to what the server was
 *   seen to accept over the last second, whichever is lower, never below 0.85 of it. Only before
 *   anything ran clean (the first refusals), or far above the last rate that did, is the step a
 *   halving (or straight to what the server accepted). The rate refused at is the ceiling.
 * - After a clean stretch (half a second, a few answers, requests really leaving at the pace) the
 *   rate probes upwards: halfway to the ceiling while under it; past it after three clean seconds
 *   there, by 2 %, 4 %, 8 % … per stretch, so a limit that rises is found again in seconds.
 * - A refusal with Retry-After pauses every permit for that long; refusals with nothing accepted in
 *   between (the server refuses everything) pause for a backoff that doubles (250 ms to 5 s).
 *   RateLimit-* / X-RateLimit-* headers let it slow down before the budget runs out, and a stated
 *   policy (`q;w=s`) caps the rate at q/s. `maxRate` (`--rate`) caps the rate from the start.
 *
 * No I/O: the clock and sleep are injected, so the tests drive it in virtual time.
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
  /** Epoch ms until which no request starts (a refusal's pause), or 0. */
  pausedUntil: number;
}

/** The interface a batch (or the HTTP client) uses: a permit per request attempt. */
export interface RequestLimiter {
  acquire(signal?: AbortSignal): Promise<Permit>;
  snapshot(): LimiterSnapshot;
}

/** A clean stretch: this long at one rate, with this many accepted answers to requests sent at it. */
const STRETCH_MS = 500;
const STRETCH_ANSWERS = 2;
/** The clean stretch before probing past the rate last refused. */
const CROSS_MS = 3000;
/** One refusal's step down, and the step when most recent requests were refused. */
const STEP_DOWN = 0.95;
const FAR_DOWN = 0.5;
/** Near a rate that ran clean, what the server accepted lowers a step at most this far. */
const NEAR_FLOOR = 0.85;
/** The share of the rate seen accepted over the last second that a refusal settles on. */
const SETTLE = 0.97;
/** The first probe past the ceiling (doubling each clean stretch, up to doubling the rate). */
const FIRST_OVERSHOOT = 0.02;
const MIN_RATE = 0.2;
const SLOW_START_UNTIL = 8;
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5000;
/** The window over which the accepted rate and the share refused are read. */
const WINDOW_MS = 1000;
/** The fewest accepted answers in that window from which the accepted rate means something. */
const MIN_SAMPLES = 8;

/** Reads a rate-limit header under either name. */
function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  return headers?.[`ratelimit-${name}`] ?? headers?.[`x-ratelimit-${name}`];
}

/** Times in a sliding window, oldest first, trimmed from the front without copying. */
class Window {
  private times: number[] = [];
  private flags: boolean[] = [];
  private head = 0;
  /** Entries in the window whose flag is set. */
  flagged = 0;

  push(at: number, flag = false): void {
    this.times.push(at);
    this.flags.push(flag);
    if (flag) this.flagged++;
  }

  /** Drops entries older than `from`. */
  trim(from: number): void {
    while (this.head < this.times.length && (this.times[this.head] as number) < from) {
      if (this.flags[this.head]) this.flagged--;
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.flags = this.flags.slice(this.head);
      this.head = 0;
    }
  }

  get size(): number {
    return this.times.length - this.head;
  }

  get oldest(): number | undefined {
    return this.times[this.head];
  }
}

/** Creates an adaptive limiter. */
export function createAdaptiveLimiter(options: AdaptiveOptions): RequestLimiter {
  const max = Math.max(1, Math.floor(options.maxConcurrency));
  const maxRate = options.maxRate !== undefined && options.maxRate > 0 ? options.maxRate : undefined;
  const now = options.now;
  let limit = Math.min(max, Math.max(1, options.initialConcurrency ?? 4));
  let inFlight = 0;
  let rate: number | undefined = maxRate;
  /** The rate the server last refused at (undefined: none known, or probed past). */
  let ceiling: number | undefined;
  /** The last rate that ran a clean stretch. */
  let floor: number | undefined;
  let ceilingSure = false;
  /** The ceiling last set by a refusal, kept after probing past it. */
  let lastCeiling: number | undefined;
  let overshoot = FIRST_OVERSHOOT;
  /** The earliest start of the next request, reserved in order; `lastStart` the actual last start. */
  let nextStart = 0;
  let lastStart = Number.NEGATIVE_INFINITY;
  /** Bumped whenever the rate changes: a request that reserved its slot before sleeps on the new one. */
  let epoch = 0;
  let pausedUntil = 0;
  let backoff = FIRST_BACKOFF_MS;
  /** Nothing was accepted since the last refusal: another refusal means the server refuses everything. */
  let refusedSinceAccepted = false;
  let answered = 0;
  let refused = 0;
  let fastest = Number.POSITIVE_INFINITY;
  const firstStart = now();
  /** Starts in the last second (the send rate while unpaced). */
  const starts = new Window();
  /** Answers in the last second by their start time, flagged when accepted. */
  const answers = new Window();
  /** Requests started before this generation were sent at an older rate: their refusals say nothing new. */
  let generation = 0;
  let changedAt = now();
  let acceptedSinceChange = 0;
  /** Requests started since the last change: whether the pace, not the slots, held them back. */
  let startsSinceChange = 0;
  /** Set when the pacing made a request wait since the last change: the rate is what holds work back. */
  let paceBound = false;
  let growth = 0;
  const waiters: (() => void)[] = [];

  const clamp = (value: number) => Math.max(MIN_RATE, maxRate === undefined ? value : Math.min(maxRate, value));

  /** A new rate: later requests are spaced by it, counted from the last actual start. */
  const changeRate = (value: number, t: number) => {
    rate = clamp(value);
    epoch++;
    generation++;
    nextStart = lastStart + 1000 / rate;
    changedAt = t;
    acceptedSinceChange = 0;
    startsSinceChange = 0;
    paceBound = false;
  };

  const wake = () => {
    while (waiters.length > 0 && inFlight < limit) {
      inFlight++;
      (waiters.shift() as () => void)();
    }
  };

  /** The rate requests were accepted at over the last second, when there is enough of it to read. */
  const acceptedRate = (t: number): number | undefined => {
    answers.trim(t - WINDOW_MS);
    if (t - firstStart < WINDOW_MS || answers.flagged < MIN_SAMPLES) return undefined;
    return (answers.flagged * 1000) / WINDOW_MS;
  };

  /** The rate requests were sent at lately: the pace, or while unpaced (or held back by slots) the starts of the last second. */
  const sendRate = (t: number): number => {
    starts.trim(t - WINDOW_MS);
    const oldest = starts.oldest ?? t;
    const measured = (starts.size * 1000) / Math.max(1, Math.min(WINDOW_MS, t - oldest));
    // Paced, the pace itself (timers firing late make the measure a little lower; stepping down from
    // the measure would ratchet the pace down at every refusal), unless the slots held it well below.
    if (rate === undefined) return measured;
    return measured < rate * 0.8 && t - changedAt >= WINDOW_MS ? Math.max(measured, MIN_RATE) : rate;
  };

  /** The server refused: one step down from the rate it was sent at, and pause for Retry-After. */
  const cut = (startedGeneration: number, retryAfterMs: number | undefined) => {
    const t = now();
    refused++;
    // A Retry-After is always honoured; a pause of our own only while the server refuses everything.
    if (retryAfterMs !== undefined) pausedUntil = Math.max(pausedUntil, t + retryAfterMs);
    // Refusals of requests sent before the last change were already on their way and say nothing new.
    if (startedGeneration < generation) return;
    if (refusedSinceAccepted && retryAfterMs === undefined) {
      pausedUntil = Math.max(pausedUntil, t + backoff);
      backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
    }
    refusedSinceAccepted = true;
    const current = sendRate(t);
    // Refused well past the last ceiling: the limit has moved up, so the next crossing comes soon.
    const moved = lastCeiling !== undefined && current > lastCeiling * 1.1;
    ceiling = current;
    overshoot = FIRST_OVERSHOOT;
    // In the first second a Retry-After says how long what was accepted so far has to last.
    const windowed = acceptedRate(t);
    const accepted = windowed ?? (retryAfterMs !== undefined && answers.flagged >= 3 ? (answers.flagged * 1000) / (t - firstStart + retryAfterMs) : undefined);
    // Near a rate that ran clean: one step. Far above anything known clean (the first refusals, a
    // limit that fell): halve, or settle at once under what the server accepted over the last second.
    const near = floor !== undefined && current <= floor * 1.1;
    const known = floor ?? 0;
    let next: number;
    if (accepted === undefined) next = current * (near ? STEP_DOWN : FAR_DOWN);
    else if (near) next = Math.min(current * STEP_DOWN, Math.max(accepted * SETTLE, current * NEAR_FLOOR));
    else next = Math.min(current * STEP_DOWN, Math.max(accepted * SETTLE, known));
    // What the server accepted bounds the ceiling too: a burst's budget spent makes the rate it was
    // refused at look higher than what it allows.
    if (accepted !== undefined) ceiling = Math.min(current, Math.max(next, accepted * 1.1));
    // A ceiling read over a whole second is crossed only after a longer clean stretch; one guessed
    // in the first second (a Retry-After rounded up to a second) is crossed at the first.
    ceilingSure = windowed !== undefined && !moved;
    lastCeiling = ceiling;
    changeRate(next, Math.max(t, pausedUntil));
    if (pausedUntil > nextStart) nextStart = pausedUntil;
    // Enough slots to keep the paced rate busy, no more.
    if (Number.isFinite(fastest)) limit = Math.min(limit, Math.max(1, Math.ceil(((rate as number) * fastest) / 1000) * 2));
  };

  /** A clean stretch at a rate that held work back: probe upwards. */
  const probe = (t: number) => {
    if (rate === undefined || !paceBound || t - changedAt < STRETCH_MS || acceptedSinceChange < STRETCH_ANSWERS) return;
    // Only a rate requests were really sent at is worth raising: held back by the slots (a slow
    // server, a small --concurrency) the pace says nothing, and raising it would run away.
    if ((startsSinceChange * 1000) / (t - changedAt) < rate * 0.8) return;
    floor = rate;
    if (maxRate !== undefined && rate >= maxRate) return;
    if (ceiling !== undefined && rate < ceiling * 0.99) {
      changeRate(rate + Math.max((ceiling - rate) / 2, rate * 0.005), t);
      return;
    }
    // Past the rate last refused only after a longer clean stretch: each crossing costs a refusal.
    if (ceiling !== undefined && ceilingSure && t - changedAt < CROSS_MS) return;
    const next = rate * (1 + overshoot);
    overshoot = Math.min(1, overshoot * 2);
    if (ceiling !== undefined && next > ceiling) ceiling = undefined;
    changeRate(next, t);
  };

  return {
    async acquire(signal?: AbortSignal): Promise<Permit> {
      if (inFlight < limit && waiters.length === 0) inFlight++;
      else await new Promise<void>((resolve) => waiters.push(resolve));
      try {
        // Wait out any pause, then the next paced start time, reserved in order. A change of rate
        // (a refusal, a probe) while this request sleeps makes it reserve again on the new one. Every
        // wake-up looks again: never closer to the last actual start than the interval, so a timer
        // that fired late does not let the next request follow at once (a strict leaky bucket
        // refuses that).
        let slot = 0;
        let reserved = -1;
        for (;;) {
          const t = now();
          if (pausedUntil > t) {
            await options.sleep(pausedUntil - t, signal);
            continue;
          }
          if (rate === undefined) break;
          const interval = 1000 / rate;
          const earliest = lastStart + interval;
          if (reserved !== epoch) {
            slot = Math.max(nextStart, earliest, t);
            nextStart = slot + interval;
            reserved = epoch;
          }
          const at = Math.max(slot, earliest);
          if (at - t <= 0.01) break;
          paceBound = true;
          await options.sleep(at - t, signal);
        }
        signal?.throwIfAborted();
      } catch (error) {
        inFlight--;
        wake();
        throw error;
      }
      const started = now();
      lastStart = started;
      // Trimmed as they grow: a batch of a million rows keeps only its last second.
      starts.trim(started - WINDOW_MS);
      starts.push(started);
      startsSinceChange++;
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
          answers.trim(t - WINDOW_MS);
          if (status === 429 || status === 503) {
            answers.push(started, false);
            cut(startedGeneration, parseRetryAfter(outcome.headers?.['retry-after'], t, options.maxRetryAfterMs ?? 60_000));
          } else if (!outcome.error && status !== undefined && status < 500) {
            answers.push(started, true);
            backoff = FIRST_BACKOFF_MS;
            refusedSinceAccepted = false;
            if (startedGeneration === generation) acceptedSinceChange++;
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
            learnFromHeaders(outcome.headers, startedGeneration, t);
            probe(t);
          }
          wake();
        },
      };
    },
    snapshot(): LimiterSnapshot {
      const learnt = rate !== undefined && lastCeiling !== undefined && rate < lastCeiling * 1.5 ? Math.min(rate, lastCeiling) : rate;
      return { concurrency: limit, inFlight, rate, learnt, answered, refused, pausedUntil: pausedUntil > now() ? pausedUntil : 0 };
    },
  };

  /** A stated policy caps the rate; a nearly spent budget slows it before the server refuses. */
  function learnFromHeaders(headers: Record<string, string> | undefined, startedGeneration: number, t: number): void {
    if (!headers) return;
    const policy = /^\s*(\d+(?:\.\d+)?)\s*;\s*w=(\d+(?:\.\d+)?)/.exec(headers['ratelimit-policy'] ?? '');
    if (policy) {
      const stated = Number(policy[1]) / Number(policy[2]);
      if (stated > 0 && (rate === undefined || rate > stated)) {
        changeRate(stated * 0.98, t);
        ceiling = stated;
      }
      return;
    }
    const remaining = Number(header(headers, 'remaining'));
    if (!Number.isFinite(remaining) || remaining > inFlight + 1 || startedGeneration < generation) return;
    // The budget is nearly spent: slow down now, before the server refuses, to the rate the server
    // accepted over the last second (a few answers in a quarter second would read a burst's tail as
    // the server's rate, and ratchet down). Already paced and the server keeps up: a bucket kept near
    // empty is the steady state at its limit, not a reason to slow down further.
    const accepted = acceptedRate(t);
    // Judged only over a second at one rate: while the rate climbs, the last second lags behind it.
    if (accepted !== undefined && (rate === undefined || (t - changedAt >= WINDOW_MS && accepted < rate * 0.9))) {
      changeRate(accepted * 0.95, t);
      ceiling = accepted;
    }
  }
}
