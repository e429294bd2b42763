/** Pacing for a server whose limit is unknown: a permit a request (gcra.ts) at the rate (aimd.ts) its signals steer (rate-signals.ts); docs/http.md#rate-limits. */
import type { PaceClock } from '../core/timers.js';
import { AimdRate } from './aimd.js';
import { Gcra } from './gcra.js';
import { readRateSignals } from './rate-signals.js';

export type AdaptiveOptions = PaceClock & { maxConcurrency: number; maxRate?: number };

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

export type LimiterSnapshot = ReturnType<AdaptiveLimiter['snapshot']>;

/** What a batch (or the HTTP client) uses: a permit per attempt; `retryOf`, the refused attempt's permit, holds it for that refusal's Retry-After. */
export interface RequestLimiter {
  acquire(signal?: AbortSignal, retryOf?: Permit): Promise<Permit>;
  snapshot(): LimiterSnapshot;
}

/** RFC 6298 §5.5: the pause after a refusal with nothing accepted since the last decrease doubles, here to the length of a one-second window. */
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 1000;

class AdaptiveLimiter implements RequestLimiter {
  readonly gate: Gcra;
  readonly control: AimdRate;
  private readonly held = new WeakMap<Permit, number>();
  private limitedAt = Number.NEGATIVE_INFINITY;
  private backoff = FIRST_BACKOFF_MS;
  private answered = 0;
  private refused = 0;
  constructor(private readonly options: AdaptiveOptions) {
    this.gate = new Gcra(options);
    this.control = new AimdRate(options.maxRate !== undefined && options.maxRate > 0 ? options.maxRate : undefined);
    this.gate.notBefore = (t, inFlight) => this.control.notBefore(t, inFlight);
    this.gate.slots = () => (this.control.rate === undefined ? 1 : Math.max(1, Math.floor(options.maxConcurrency)));
  }
  async acquire(signal?: AbortSignal, retryOf?: Permit): Promise<Permit> {
    const { now, sleep } = this.options;
    const until = retryOf && this.held.get(retryOf);
    if (until !== undefined && until > now()) await sleep(until - now(), signal);
    signal?.throwIfAborted();
    if (await this.gate.wait(() => this.control.interval(), signal)) this.limitedAt = now();
    const start = now();
    let state: 'let go' | 'written' | 'done' = 'let go';
    const permit: Permit = {
      sent: () => {
        if (state !== 'let go') return;
        state = 'written';
        this.gate.written(now());
      },
      done: (outcome: Outcome) => {
        if (state === 'done') return;
        const unwritten = state === 'let go';
        state = 'done';
        this.answer(permit, outcome, start, now());
        this.gate.written(undefined, unwritten);
      },
    };
    return permit;
  }
  snapshot() {
    const { control, gate, answered, refused } = this;
    const learnt = control.lastRefused === undefined || control.rate === undefined ? undefined : Math.min(control.rate, control.lastRefused);
    const pauseLeftMs = Math.max(0, Math.max(gate.pausedUntil, control.heldUntil) - this.options.now());
    return { concurrency: gate.slots(), inFlight: gate.inFlight, rate: control.rate, learnt, answered, refused, pauseLeftMs };
  }
  private answer(permit: Permit, outcome: Outcome, start: number, t: number): void {
    this.answered++;
    const { control, gate } = this;
    const status = outcome.status;
    if (outcome.error || status === undefined || (status >= 500 && status !== 503)) {
      control.unanswered();
      return;
    }
    control.answered(start, t);
    const signals = readRateSignals(outcome.headers, t);
    if (signals.policyRate !== undefined) control.stated(signals.policyRate);
    gate.catchUp = this.refused === 0 && status !== 429 && status !== 503 && (gate.catchUp || signals.policyRate !== undefined);
    if (status === 429 || status === 503) {
      this.refused++;
      const until = t + (signals.retryAfterMs ?? 0);
      this.held.set(permit, until);
      if (!control.refused(start, t, until)) return;
      gate.pausedUntil = Math.max(gate.pausedUntil, t + this.backoff);
      this.backoff = Math.min(MAX_BACKOFF_MS, this.backoff * 2);
      return;
    }
    this.backoff = FIRST_BACKOFF_MS;
    // Limited by the pace: it holds a request back, or did within the last two intervals (RFC 7661).
    control.accepted(start, t, gate.waiting > 0 || t - this.limitedAt <= 2 * control.interval());
    // A budget (not a bucket of one or two, always nearly spent): HyStart's exit, ECN's mark (RFC 3168); in flight, the slots taken or asked for.
    if (signals.limit !== undefined && signals.limit > 2 && signals.remaining !== undefined)
      control.budget(start, t, signals.remaining, Math.min(gate.slots(), gate.inFlight + gate.asking) - 1);
  }
}

export function createAdaptiveLimiter(options: AdaptiveOptions): RequestLimiter {
  return new AdaptiveLimiter(options);
}
