/**
 * The learnt rate of the adaptive limiter (src/http/adaptive.ts): the rate estimator, which steps
 * down on refusals and reads the server's headers, and the probe policy, which raises the rate
 * after a clean stretch. No I/O and no timers: every method takes the time it is told.
 */
import { parseRetryAfter } from './retry.js';

/** A clean stretch: this long at one rate, with this many accepted answers to requests sent at it. */
const STRETCH_MS = 500;
const STRETCH_ANSWERS = 2;
/** The clean stretch before probing past the rate last refused. */
const CROSS_MS = 3000;
const MAX_CROSS_MS = 12_000;
/** A rate read between refusals this close to the one before is the same limit again. */
const AGAIN_LOW = 0.8;
const AGAIN_HIGH = 1.1;
/** A rate read between refusals under this share of the rate refused at is not trusted. */
const BETWEEN_FLOOR = 0.7;
/** Past a known ceiling, up to this share above it, the probe climbs by a fixed step (FIRST_OVERSHOOT of it) per stretch. */
const NEAR_CEILING = 1.25;
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
/** The window over which the accepted rate and the share refused are read. */
const WINDOW_MS = 1000;
/** The window over which the rate shown as learnt is checked against what the server accepted. */
const SUSTAINED_MS = 5000;
/** The fewest accepted answers in that window from which the accepted rate means something. */
const MIN_SAMPLES = 8;
/** The shortest time the send rate is read over: a few requests sent within a millisecond are no rate. */
const MIN_MEASURE_MS = 50;
/** Reads a rate-limit header under either name. */
function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  return headers?.[`ratelimit-${name}`] ?? headers?.[`x-ratelimit-${name}`];
}

/** Times in a sliding window, oldest first, trimmed from the front without copying. */
export class Window {
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

/**
 * The rate the server allows, as learnt from refusals, from what it accepted and from its headers.
 * `onChange` hears of every new rate, so the spacing gate reserves the next start on it.
 */
export class RateEstimator {
  rate: number | undefined;
  /** The rate the server last refused at (undefined: none known, or probed past). */
  ceiling: number | undefined;
  /** The last rate that ran a clean stretch. */
  floor: number | undefined;
  /** The ceiling was read over a whole second (not guessed in the first), so crossing it waits longer. */
  ceilingSure = false;
  /** The ceiling last set by a refusal, kept after probing past it. */
  lastCeiling: number | undefined;
  /** Requests started before this generation were sent at an older rate: their refusals say nothing new. */
  generation = 0;
  changedAt: number;
  acceptedSinceChange = 0;
  /** When the last refusal that said something new came, and the answers accepted since (by answer time). */
  private lastRefusedAt: number | undefined;
  private acceptedSinceRefusal = 0;
  /** The rate accepted between the last two refusals, and the clean stretch before probing past a sure ceiling. */
  private lastBetween: number | undefined;
  crossWaitMs = CROSS_MS;
  /** The last ceiling was read from what a bucket accepted over its Retry-After pauses: probes past it climb in small steps. */
  measured = false;
  /** The server sends how much of its budget remains. */
  private budgetStated = false;
  /** Requests started since the last change: whether the pace, not the slots, held them back. */
  startsSinceChange = 0;
  /** Set when the pacing made a request wait since the last change: the rate is what holds work back. */
  paceBound = false;
  /** Starts in the last second (the send rate while unpaced). */
  private readonly starts = new Window();
  /** Answers in the last second by their start time, flagged when accepted. */
  private readonly answers = new Window();
  private readonly firstStart: number;
  /** Accepted answers over the last few seconds, by answer time: what the server sustains. */
  private readonly sustained = new Window();

  constructor(
    readonly maxRate: number | undefined,
    t: number,
    private readonly onChange: (rate: number) => void,
    /** Whether the server was seen to accept requests started together (a burst): a rate that ran clean may have run on it. */
    private readonly burstsAccepted: () => boolean = () => false,
  ) {
    this.rate = maxRate;
    this.firstStart = t;
    this.changedAt = t;
  }

  /** A new rate from `t` on: the requests sent before it belong to an older generation. */
  change(value: number, t: number): void {
    this.rate = Math.max(MIN_RATE, this.maxRate === undefined ? value : Math.min(this.maxRate, value));
    this.generation++;
    this.changedAt = t;
    this.acceptedSinceChange = 0;
    this.startsSinceChange = 0;
    this.paceBound = false;
    this.onChange(this.rate);
  }

  /** A request left at `t`. */
  started(t: number): void {
    // Trimmed as they grow: a batch of a million rows keeps only its last second.
    this.starts.trim(t - WINDOW_MS);
    this.starts.push(t);
    this.startsSinceChange++;
  }

  /** A request that left at `start` was accepted (answered `t`). */
  accepted(start: number, startedGeneration: number, t: number): void {
    this.answers.trim(t - WINDOW_MS);
    this.answers.push(start, true);
    this.sustained.trim(t - SUSTAINED_MS);
    this.sustained.push(t);
    this.acceptedSinceRefusal++;
    if (startedGeneration === this.generation) this.acceptedSinceChange++;
  }

  /** The rate requests were accepted at over the last second, when there is enough of it to read. */
  acceptedRate(t: number): number | undefined {
    this.answers.trim(t - WINDOW_MS);
    if (t - this.firstStart < WINDOW_MS || this.answers.flagged < MIN_SAMPLES) return undefined;
    return (this.answers.flagged * 1000) / WINDOW_MS;
  }

  /** The rate requests were sent at lately: the pace, or while unpaced (or held back by slots) the starts of the last second. */
  sendRate(t: number): number {
    this.starts.trim(t - WINDOW_MS);
    const oldest = this.starts.oldest ?? t;
    const measured = (this.starts.size * 1000) / Math.max(MIN_MEASURE_MS, Math.min(WINDOW_MS, t - oldest));
    // Paced, the pace itself (timers firing late make the measure a little lower; stepping down from
    // the measure would ratchet the pace down at every refusal), unless the slots held it well below.
    if (this.rate === undefined) return measured;
    return measured < this.rate * 0.8 && t - this.changedAt >= WINDOW_MS ? Math.max(measured, MIN_RATE) : this.rate;
  }

  /**
   * A request that left at `start` was refused (answered `t`): one step down from the rate it was sent
   * at, the new rate counted from `resumeAt` (the end of any pause). Returns false when its refusal
   * says nothing new (it was sent at an older rate).
   */
  refused(start: number, startedGeneration: number, t: number, resumeAt: number, retryAfterMs: number | undefined): boolean {
    this.answers.trim(t - WINDOW_MS);
    this.answers.push(start, false);
    // Refusals of requests sent before the last change were already on their way and say nothing new.
    if (startedGeneration < this.generation) return false;
    const current = this.sendRate(t);
    // Between two refusals with Retry-After a bucket went from empty to empty: what it accepted in
    // between, over the whole time (the pause included), is the rate it refills at, however big its burst.
    const between =
      retryAfterMs !== undefined && this.lastRefusedAt !== undefined && t - this.lastRefusedAt >= WINDOW_MS && this.acceptedSinceRefusal >= MIN_SAMPLES
        ? (this.acceptedSinceRefusal * 1000) / (t - this.lastRefusedAt)
        : undefined;
    this.lastRefusedAt = t;
    this.acceptedSinceRefusal = 0;
    // Far under the rate refused at, what was accepted says more about how slowly the client sent (or
    // how much of a long pause a small bucket wasted) than about the limit: the step below decides.
    // Near the ceiling read before (the first guess from Retry-After, or the last such reading), it
    // is trusted however far a probe got above it on the burst.
    const consistent =
      between !== undefined &&
      this.measured &&
      this.lastCeiling !== undefined &&
      between >= this.lastCeiling * AGAIN_LOW &&
      between <= this.lastCeiling * NEAR_CEILING;
    if (between !== undefined && (between >= current * BETWEEN_FLOOR || consistent)) {
      // Refused again near the same limit: it holds. What was accepted reads low when the client sent
      // under the limit for a while (or the pause outlasted a small burst), so the rate settled on
      // never falls below the one read before (no ratchet), and the next crossing waits longer.
      const again = this.lastBetween !== undefined && between >= this.lastBetween * AGAIN_LOW && between <= this.lastBetween * AGAIN_HIGH;
      const basis = again ? Math.max(between, this.lastBetween as number) : between;
      this.crossWaitMs = again ? Math.min(MAX_CROSS_MS, this.crossWaitMs * 2) : CROSS_MS;
      this.lastBetween = basis;
      const next = Math.min(current * STEP_DOWN, basis * SETTLE);
      // A rate that ran clean above it did so on the burst: it is no floor.
      if (this.floor !== undefined && this.floor > basis) this.floor = next;
      this.ceiling = Math.min(current, Math.max(next, basis));
      this.ceilingSure = true;
      this.measured = true;
      this.lastCeiling = this.ceiling;
      this.change(next, resumeAt);
      return true;
    }
    // Refused well past the last ceiling: the limit has moved up, so the next crossing comes soon.
    const moved = this.lastCeiling !== undefined && current > this.lastCeiling * 1.1;
    this.ceiling = current;
    // In the first second a Retry-After says how long what was accepted so far has to last.
    const windowed = this.acceptedRate(t);
    const accepted =
      windowed ?? (retryAfterMs !== undefined && this.answers.flagged >= 3 ? (this.answers.flagged * 1000) / (t - this.firstStart + retryAfterMs) : undefined);
    // Near a rate that ran clean: one step. Far above anything known clean (the first refusals, a
    // limit that fell): halve, or settle at once under what the server accepted over the last second.
    const near = this.floor !== undefined && current <= this.floor * 1.1;
    let next: number;
    if (accepted === undefined) next = current * (near ? STEP_DOWN : FAR_DOWN);
    else if (near) next = Math.min(current * STEP_DOWN, Math.max(accepted * SETTLE, current * NEAR_FLOOR));
    else next = Math.min(current * STEP_DOWN, Math.max(accepted * SETTLE, this.floor ?? 0));
    // A server that accepts no burst (a strict leaky bucket), refusing a probe without a pause: back to
    // the rate that ran clean just before it, no lower. No burst can have carried that rate, what was
    // accepted over the last second lags behind the climb, and a wrong guess costs one refused request.
    const floor = this.floor;
    if (retryAfterMs === undefined && !this.burstsAccepted() && floor !== undefined && current > floor * 1.01)
      next = Math.max(next, Math.min(floor, current * STEP_DOWN));
    // What the server accepted bounds the ceiling too: a burst's budget spent makes the rate it was
    // refused at look higher than what it allows.
    if (accepted !== undefined) this.ceiling = Math.min(current, Math.max(next, accepted * 1.1));
    // A ceiling read over a whole second is crossed only after a longer clean stretch; one guessed
    // in the first second (a Retry-After rounded up to a second) is crossed at the first.
    this.ceilingSure = windowed !== undefined && !moved;
    // A first guess from Retry-After (a bucket whose burst lasts as long as the pause) is crossed in
    // small steps too, unless the server states its budget: then a probe sees it run out before a refusal.
    this.measured = windowed === undefined && accepted !== undefined && !this.budgetStated;
    this.lastCeiling = this.ceiling;
    this.change(next, resumeAt);
    return true;
  }

  /** A stated policy caps the rate; a nearly spent budget slows it before the server refuses. */
  learnFromHeaders(headers: Record<string, string> | undefined, inFlight: number, startedGeneration: number, t: number): void {
    if (!headers) return;
    if (header(headers, 'remaining') !== undefined) this.budgetStated = true;
    const policy = /^\s*(\d+(?:\.\d+)?)\s*;\s*w=(\d+(?:\.\d+)?)/.exec(headers['ratelimit-policy'] ?? '');
    if (policy) {
      const stated = Number(policy[1]) / Number(policy[2]);
      if (stated > 0 && (this.rate === undefined || this.rate > stated)) {
        this.change(stated * 0.98, t);
        this.ceiling = stated;
      }
      return;
    }
    const remaining = Number(header(headers, 'remaining'));
    if (!Number.isFinite(remaining) || remaining > inFlight + 1 || startedGeneration < this.generation) return;
    // The budget is nearly spent: slow down now, before the server refuses, to the rate the server
    // accepted over the last second (a few answers in a quarter second would read a burst's tail as
    // the server's rate, and ratchet down). Already paced and the server keeps up: a bucket kept near
    // empty is the steady state at its limit, not a reason to slow down further.
    const accepted = this.acceptedRate(t);
    // Judged only over a second at one rate: while the rate climbs, the last second lags behind it.
    if (accepted !== undefined && (this.rate === undefined || (t - this.changedAt >= WINDOW_MS && accepted < this.rate * 0.9))) {
      this.change(accepted * 0.95, t);
      this.ceiling = accepted;
    }
  }

  /**
   * The rate the server allows, as learnt: the pace, but no higher than the rate last refused while a
   * probe runs less than half again above it (a bucket's burst lets a probe run clean for a while),
   * at `t`.
   */
  learnt(t: number): number | undefined {
    const { rate, lastCeiling } = this;
    const paced = rate !== undefined && lastCeiling !== undefined && rate < lastCeiling * 1.5 ? Math.min(rate, lastCeiling) : rate;
    // Nor higher than what the server accepted over the last five seconds, once refused and read over
    // them all: a bucket's burst lets a probe run clean well above the limit before its refusal.
    this.sustained.trim(t - SUSTAINED_MS);
    const oldest = this.sustained.oldest;
    if (paced === undefined || lastCeiling === undefined || oldest === undefined || t - this.firstStart < SUSTAINED_MS) return paced;
    return Math.min(paced, (this.sustained.size * 1000) / SUSTAINED_MS);
  }
}

/** When and how far the rate probes upwards: after a clean stretch, halfway to the ceiling, or past it by a doubling step. */
export class ProbePolicy {
  private overshoot = FIRST_OVERSHOOT;

  constructor(private readonly estimator: RateEstimator) {}

  /** A refusal: the next probe past the ceiling starts small again. */
  reset(): void {
    this.overshoot = FIRST_OVERSHOOT;
  }

  /** An accepted answer at `t`: after a clean stretch at a rate that held work back, probe upwards. */
  afterAccepted(t: number): void {
    const e = this.estimator;
    const rate = e.rate;
    if (rate === undefined || !e.paceBound || t - e.changedAt < STRETCH_MS || e.acceptedSinceChange < STRETCH_ANSWERS) return;
    // Only a rate requests were really sent at is worth raising: held back by the slots (a slow
    // server, a small --concurrency) the pace says nothing, and raising it would run away.
    if ((e.startsSinceChange * 1000) / (t - e.changedAt) < rate * 0.8) return;
    e.floor = rate;
    if (e.maxRate !== undefined && rate >= e.maxRate) return;
    const ceiling = e.ceiling;
    if (ceiling !== undefined && rate < ceiling * 0.99) {
      e.change(rate + Math.max((ceiling - rate) / 2, rate * 0.005), t);
      return;
    }
    // Past the rate last refused only after a longer clean stretch: each crossing costs a refusal.
    if (ceiling !== undefined && e.ceilingSure && t - e.changedAt < e.crossWaitMs) return;
    // Near the rate last refused, a probe climbs a small fixed step each stretch: a bucket's burst hides
    // the limit for a while, and a probe that doubled meanwhile would be refused far above it.
    const last = e.lastCeiling;
    let next: number;
    if (last !== undefined && e.measured && rate < last * NEAR_CEILING) next = rate + last * FIRST_OVERSHOOT;
    else {
      next = rate * (1 + this.overshoot);
      this.overshoot = Math.min(1, this.overshoot * 2);
    }
    if (ceiling !== undefined && next > ceiling) e.ceiling = undefined;
    e.change(next, t);
  }
}

/** The pause a refusal's Retry-After asks for, capped at `maxMs`, or undefined. */
export function retryAfterOf(headers: Record<string, string> | undefined, t: number, maxMs: number): number | undefined {
  return parseRetryAfter(headers?.['retry-after'], t, maxMs);
}
