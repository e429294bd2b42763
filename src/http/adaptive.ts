/**
 * Pacing for many requests to one server whose limit opcli cannot know in advance, whatever kind of
 * limiter it runs. Each request asks for a permit and reports how it went:
 *
 *   const permit = await limiter.acquire(signal, refusedPermit?);  // a slot, the spacing, a Retry-After
 *   permit.sent();                                                 // when its bytes were written
 *   permit.done({ status, headers });                              // or permit.done({ error: true })
 *
 * Published designs, one a file: GCRA spacing (gcra.ts), TCP's slow start then AIMD on the rate
 * (aimd.ts), every rate signal a server sends (rate-signals.ts). The rules: docs/http.md#rate-limits.
 * No I/O: the clock and sleep are injected, so the tests drive it in virtual time.
 */
import { AimdRate } from './aimd.js';
import { Gcra } from './gcra.js';
import { readRateSignals } from './rate-signals.js';

/** Requests in flight at most (`--concurrency`), started per second at most (`--rate`), the clock, the longest Retry-After honoured (60 s). */
export interface AdaptiveOptions {
  maxConcurrency: number;
  maxRate?: number;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  maxRetryAfterMs?: number;
}

/** How one request went: its status and headers, or (`error`) no answer at all (connection failure, timeout). */
export interface Outcome {
  status?: number;
  headers?: Record<string, string>;
  error?: boolean;
}

export interface Permit {
  /** Reports that the request's bytes were written: the next leaves one interval after this. At most once, before `done`. */
  sent(): void;
  /** Reports the answer and frees the slot. Call exactly once. */
  done(outcome: Outcome): void;
}

/**
 * What the limiter knows now, for a status line and the summary: requests allowed and in flight, the
 * pace (requests a second, undefined before the first answer), the rate the server allows as learnt
 * (the pace, no higher than the rate of the last decrease), requests answered and refused (429, 503),
 * and the ms before a held retry (or a back-off) may start.
 */
export interface LimiterSnapshot {
  concurrency: number;
  inFlight: number;
  rate?: number;
  learnt?: number;
  answered: number;
  refused: number;
  pauseLeftMs: number;
}

/** The interface a batch (or the HTTP client) uses: a permit per request attempt. */
export interface RequestLimiter {
  /** A permit for the next attempt; `retryOf`, the permit of the attempt refused before it, holds it for that refusal's Retry-After. */
  acquire(signal?: AbortSignal, retryOf?: Permit): Promise<Permit>;
  snapshot(): LimiterSnapshot;
}

const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5000;

/** Requests in flight, up to `max`; the first request goes alone, until its answer gives the round trip. */
class Slots {
  inFlight = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(readonly max: number) {}

  /** Takes a slot (of `limit`), waiting for one. */
  async take(limit: () => number): Promise<void> {
    while (this.inFlight >= limit() || this.waiters.length > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.inFlight++;
  }

  /** Gives a slot back. */
  release(): void {
    this.inFlight--;
    for (const wake of this.waiters.splice(0)) wake();
  }
}

/** What the limiter steers by: the slots, the GCRA spacing and the AIMD rate, and what the server said. */
class Steering {
  readonly slots: Slots;
  readonly gate: Gcra;
  readonly control: AimdRate;
  /** When each refused request may be sent again (its Retry-After), by its permit; and the latest such time. */
  readonly held = new WeakMap<Permit, number>();
  heldUntil = 0;
  /** When the pace last held a request back. */
  limitedAt = Number.NEGATIVE_INFINITY;
  /** The pause after a refusal with nothing accepted since the last decrease (doubling, RFC 6298 §5.5). */
  private backoff = FIRST_BACKOFF_MS;
  answered = 0;
  refused = 0;

  constructor(private readonly options: AdaptiveOptions) {
    this.slots = new Slots(Math.max(1, Math.floor(options.maxConcurrency)));
    this.gate = new Gcra(options.now, options.sleep);
    this.control = new AimdRate(options.maxRate !== undefined && options.maxRate > 0 ? options.maxRate : undefined);
  }

  /** Requests allowed in flight: one until the first answer gives the round trip. */
  limit = () => (this.control.rate === undefined ? 1 : this.slots.max);

  /** The answer to the request of `permit`, sent at `start`, came at `t`. */
  answer(permit: Permit, outcome: Outcome, start: number, t: number): void {
    this.answered++;
    const { control, gate } = this;
    const status = outcome.status;
    if (outcome.error || status === undefined || (status >= 500 && status !== 503)) {
      control.unanswered();
      return;
    }
    control.answered(start, t);
    const signals = readRateSignals(outcome.headers, t, this.options.maxRetryAfterMs ?? 60_000);
    if (signals.policyRate !== undefined) control.stated(signals.policyRate);
    if (status === 429 || status === 503) {
      this.refused++;
      if (signals.retryAfterMs !== undefined) {
        this.held.set(permit, t + signals.retryAfterMs);
        this.heldUntil = Math.max(this.heldUntil, t + signals.retryAfterMs);
      }
      if (control.refused(start, t) !== 'timeout') return;
      gate.pause(t + this.backoff);
      this.backoff = Math.min(MAX_BACKOFF_MS, this.backoff * 2);
      return;
    }
    this.backoff = FIRST_BACKOFF_MS;
    // Limited by the pace: it holds a request back, or did within the last two intervals (RFC 7661).
    control.accepted(start, t, gate.waiting > 0 || t - this.limitedAt <= 2 * control.interval());
    // A budget about to run out (not a bucket of one or two: that is always nearly spent).
    const { limit: size, remaining } = signals;
    if (size !== undefined && remaining !== undefined && size > 2 && remaining < this.slots.inFlight + 1) control.refused(start, t, true);
  }
}

/** A permit for a request let go at `start`: its write spaces the next, its answer steers the rate. */
function permitAt(steer: Steering, start: number): Permit {
  const now = steer.gate.now;
  let written = false;
  let finished = false;
  const permit: Permit = {
    sent() {
      if (written || finished) return;
      written = true;
      steer.gate.written(now());
    },
    done(outcome: Outcome) {
      if (finished) return;
      finished = true;
      if (!written) steer.gate.written(undefined);
      steer.answer(permit, outcome, start, now());
      steer.slots.release();
    },
  };
  return permit;
}

/** Creates the limiter: slots, GCRA spacing and the AIMD rate, steered by the server's signals. */
export function createAdaptiveLimiter(options: AdaptiveOptions): RequestLimiter {
  const { now, sleep } = options;
  const steer = new Steering(options);
  const { slots, gate, control } = steer;
  return {
    async acquire(signal?: AbortSignal, retryOf?: Permit): Promise<Permit> {
      const until = retryOf && steer.held.get(retryOf);
      if (until !== undefined && until > now()) await sleep(until - now(), signal);
      signal?.throwIfAborted();
      await slots.take(steer.limit);
      try {
        if (await gate.wait(() => control.interval(), signal)) steer.limitedAt = now();
      } catch (error) {
        slots.release();
        throw error;
      }
      return permitAt(steer, now());
    },
    snapshot(): LimiterSnapshot {
      const next = Math.max(gate.pausedUntil, steer.heldUntil);
      const learnt = control.lastRefused === undefined || control.rate === undefined ? undefined : Math.min(control.rate, control.lastRefused);
      const { answered, refused } = steer;
      return { concurrency: steer.limit(), inFlight: slots.inFlight, rate: control.rate, learnt, answered, refused, pauseLeftMs: Math.max(0, next - now()) };
    },
  };
}
