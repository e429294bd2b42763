/**
 * When the next paced request may leave (the adaptive limiter's spacing gate, src/http/adaptive.ts):
 * after any pause, at the start reserved in order, after the request before was written, never closer
 * to the last start than the rate's interval, or, where the server accepts bursts, catching up a late
 * timer. No I/O: the clock and sleeps are injected.
 */
/** How close to the last start a request may leave to catch up with the paced grid, as a share of the interval, where the server accepts bursts. */
const CATCH_UP = 0.6;
/** Requests started this close (ms) after the one before and accepted, from which the server is taken to accept bursts. */
const CLOSE_MS = 1;
const CLOSE_ACCEPTED = 3;

/**
 * When the next request may leave: after any pause, at the paced start reserved in order, after the
 * request before was written, and never closer to the last actual start than the rate's interval
 * (or, where the server accepts bursts, than CATCH_UP of it, and never ahead of the theoretical time).
 */
export class SpacingGate {
  /** The earliest start of the next request, reserved in order; `lastStart` the actual last start (the later of its permit and its write). */
  private nextStart = 0;
  lastStart = Number.NEGATIVE_INFINITY;
  /** Permits granted whose request was neither written nor done: a paced request waits for them. */
  private unwritten = 0;
  private readonly writeWaiters: (() => void)[] = [];
  /** Bumped whenever the rate changes: a request that reserved its slot before sleeps on the new one. */
  private epoch = 0;
  pausedUntil = 0;
  /** The server accepts bursts: a late timer is caught up by the next request, down to CATCH_UP of the interval (a strict leaky bucket refuses that). */
  tolerant = false;
  /** A cell-rate pacer's theoretical time of the next start: no run of caught-up requests gets ahead of the rate. */
  private theoretical = 0;
  /** The interval the last permit was paced at (0 unpaced). */
  private interval = 0;
  /** The last permit's time, and the answers to requests started within CLOSE_MS of the one before. */
  private lastGranted = Number.NEGATIVE_INFINITY;
  private closeAccepted = 0;
  private closeRefused = 0;

  constructor(
    private readonly now: () => number,
    private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
    private readonly sleepExact: (ms: number, signal?: AbortSignal) => Promise<void>,
  ) {}

  /** A new rate: later requests are spaced by it, counted from the last actual start (and after any pause). */
  respace(rate: number): void {
    this.epoch++;
    this.nextStart = Math.max(this.lastStart + 1000 / rate, this.pausedUntil);
    this.theoretical = this.nextStart;
  }

  /** No request starts before `until`. */
  pause(until: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, until);
  }

  /** A permit was granted at `t`: its request is not written yet. Returns whether it came within CLOSE_MS of the one before. */
  granted(t: number): boolean {
    const close = t - this.lastGranted <= CLOSE_MS;
    this.lastGranted = t;
    this.lastStart = t;
    this.theoretical = Math.max(this.theoretical, t) + this.interval;
    this.unwritten++;
    return close;
  }

  /** An answer (`ok`: accepted) to a request started within CLOSE_MS of the one before (`close`). */
  answered(close: boolean, ok: boolean): void {
    if (!close) return;
    if (ok) this.closeAccepted++;
    else this.closeRefused++;
    // A few such accepted, more than refused: the server accepts bursts (a strict bucket refuses them).
    if (this.closeAccepted >= CLOSE_ACCEPTED && this.closeAccepted > this.closeRefused) this.tolerant = true;
  }

  /** A granted request was written at `t` (`at` undefined: it ended without being written): the interval counts from the later of its permit and `t`. */
  written(at: number | undefined): void {
    if (at !== undefined) {
      this.lastStart = Math.max(this.lastStart, at);
      this.theoretical = Math.max(this.theoretical, at + this.interval);
    }
    this.unwritten--;
    for (const wake of this.writeWaiters.splice(0)) wake();
  }

  /** Resolves when a granted request is written or done; rejects when `signal` aborts first. */
  private untilWritten(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal?.reason);
      this.writeWaiters.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Waits out any pause, then (paced) for the request before to be written, then the next paced
   * start time, reserved in order. A change of rate while
   * this request sleeps makes it reserve again on the new one. Every wake-up looks again: never
   * closer to the last actual start than the interval, so a timer that fired late does not let the
   * next request follow at once (a strict leaky bucket refuses that). Returns whether the pace made it wait.
   */
  async wait(rateOf: () => number | undefined, signal?: AbortSignal): Promise<boolean> {
    let slot = 0;
    let reserved = -1;
    let waited = false;
    for (;;) {
      const t = this.now();
      if (this.pausedUntil > t) {
        await this.sleep(this.pausedUntil - t, signal);
        continue;
      }
      const rate = rateOf();
      this.interval = rate === undefined ? 0 : 1000 / rate;
      if (rate === undefined) return waited;
      if (this.unwritten > 0) {
        // The request before has its permit but is not written yet (a busy event loop, a connection
        // being made): spaced from its permit, this one could reach the server right behind it.
        signal?.throwIfAborted();
        await this.untilWritten(signal);
        continue;
      }
      const interval = 1000 / rate;
      // Where the server accepts bursts, each request aims a little before its place on the grid, so
      // a timer that fires up to that late still leaves on time (a cell-rate pacer's tolerance).
      const early = this.tolerant ? interval * (1 - CATCH_UP) : 0;
      const earliest = this.lastStart + interval - early;
      if (reserved !== this.epoch) {
        slot = Math.max(this.nextStart - early, earliest, t);
        this.nextStart = Math.max(this.nextStart, slot) + interval;
        reserved = this.epoch;
      }
      const at = this.tolerant ? Math.max(slot, earliest, this.theoretical - early) : Math.max(slot, earliest);
      if (at - t <= 0.01) return waited;
      waited = true;
      // A strict bucket refuses a request a millisecond early and a late timer costs it its rate:
      // the exact sleep. Where bursts are accepted, the catch-up above absorbs late timers more cheaply.
      await (this.tolerant ? this.sleep : this.sleepExact)(at - t, signal);
    }
  }
}
