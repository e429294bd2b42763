/**
 * Pacing for many requests to one server whose limit is not known in advance. Each request asks for a
 * permit (a slot, the spacing, its Retry-After), reports when it was written and how it went. GCRA
 * spacing (gcra.ts), the rate (aimd.ts), the server's signals (rate-signals.ts); the rules:
 * docs/http.md#rate-limits. No I/O: the clock and sleep are injected (tests run in virtual time).
 */
import { AimdRate } from './aimd.js';
import { Gcra, until } from './gcra.js';
import { readRateSignals } from './rate-signals.js';

/** Requests in flight at most (`--concurrency`), started a second at most (`--rate`), the clock, the longest Retry-After honoured (60 s). */
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
  /** Its bytes were written: the next request leaves one interval after this. At most once, before `done`. */
  sent(): void;
  /** The answer; frees the slot. Exactly once. */
  done(outcome: Outcome): void;
}

/** For a status line: slots and in flight, the pace (a second), the rate learnt, answers and refusals (429, 503), ms before a held retry or back-off. */
export interface LimiterSnapshot {
  concurrency: number;
  inFlight: number;
  rate?: number;
  learnt?: number;
  answered: number;
  refused: number;
  pauseLeftMs: number;
}

/** What a batch (or the HTTP client) uses: a permit per attempt; `retryOf`, the refused attempt's permit, holds it for that refusal's Retry-After. */
export interface RequestLimiter {
  acquire(signal?: AbortSignal, retryOf?: Permit): Promise<Permit>;
  snapshot(): LimiterSnapshot;
}

/** RFC 6298 §5.5: the pause after a refusal with nothing accepted since the last decrease doubles, here to the length of a one-second window. */
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 1000;

/** The limiter's state: slots, spacing, rate, and what the server said. */
class Steering {
  inFlight = 0;
  private readonly waiters: (() => void)[] = [];
  readonly max: number;
  readonly gate: Gcra;
  readonly control: AimdRate;
  /** When each refused request may be sent again (its Retry-After), and the latest such time. */
  readonly held = new WeakMap<Permit, number>();
  heldUntil = 0;
  /** When the pace last held a request back; the back-off; answers and refusals. */
  limitedAt = Number.NEGATIVE_INFINITY;
  private backoff = FIRST_BACKOFF_MS;
  answered = 0;
  refused = 0;
  constructor(private readonly options: AdaptiveOptions) {
    this.max = Math.max(1, Math.floor(options.maxConcurrency));
    this.gate = new Gcra(options.now, options.sleep);
    this.control = new AimdRate(options.maxRate !== undefined && options.maxRate > 0 ? options.maxRate : undefined);
  }
  /** Takes a slot: one in flight until the first answer gives the round trip. */
  /** A slot; waiting for one ends when `signal` aborts (a stopped batch: the request never left). */
  async take(signal?: AbortSignal): Promise<void> {
    while (this.inFlight >= (this.control.rate === undefined ? 1 : this.max) || this.waiters.length > 0) {
      signal?.throwIfAborted();
      let wake = () => {};
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
        this.waiters.push(resolve);
      });
      await until(woken, signal).catch((error) => {
        const at = this.waiters.indexOf(wake);
        if (at >= 0) this.waiters.splice(at, 1);
        throw error;
      });
    }
    this.inFlight++;
  }
  release(): void {
    this.inFlight--;
    for (const wake of this.waiters.splice(0)) wake();
  }
  /** The answer to `permit`'s request, sent at `start`, came at `t`. */
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
      if (!control.refused(start, t)) return;
      gate.pausedUntil = Math.max(gate.pausedUntil, t + this.backoff);
      this.backoff = Math.min(MAX_BACKOFF_MS, this.backoff * 2);
      return;
    }
    this.backoff = FIRST_BACKOFF_MS;
    // Limited by the pace: it holds a request back, or did within the last two intervals (RFC 7661).
    control.accepted(start, t, gate.waiting > 0 || t - this.limitedAt <= 2 * control.interval());
    // A budget (not a bucket of one or two, always nearly spent): HyStart's exit, ECN's mark (RFC 3168).
    if (signals.limit !== undefined && signals.limit > 2 && signals.remaining !== undefined) control.budget(start, t, signals.remaining, this.inFlight - 1);
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
      steer.release();
    },
  };
  return permit;
}

/** Creates the limiter: slots, GCRA spacing and the AIMD rate, steered by the server's signals. */
export function createAdaptiveLimiter(options: AdaptiveOptions): RequestLimiter {
  const { now, sleep } = options;
  const steer = new Steering(options);
  const { gate, control } = steer;
  return {
    async acquire(signal?: AbortSignal, retryOf?: Permit): Promise<Permit> {
      const until = retryOf && steer.held.get(retryOf);
      if (until !== undefined && until > now()) await sleep(until - now(), signal);
      signal?.throwIfAborted();
      await steer.take(signal);
      try {
        if (await gate.wait(() => control.interval(), signal)) steer.limitedAt = now();
      } catch (error) {
        steer.release();
        throw error;
      }
      return permitAt(steer, now());
    },
    snapshot(): LimiterSnapshot {
      const learnt = control.lastRefused === undefined || control.rate === undefined ? undefined : Math.min(control.rate, control.lastRefused);
      const { answered, refused, inFlight } = steer;
      const concurrency = control.rate === undefined ? 1 : steer.max;
      const pauseLeftMs = Math.max(0, gate.pausedUntil - now(), steer.heldUntil - now());
      return { concurrency, inFlight, rate: control.rate, learnt, answered, refused, pauseLeftMs };
    },
  };
}
