/**
 * The clock and timers of a run: the wall clock by default. A test passes a manual clock (the
 * sandbox's `manualClock()` has this shape, so both can share one) and every wait and deadline of
 * the run then happens in virtual time.
 */
export interface Timers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Real time and real timers. */
export const realTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** A sleep on `timers` that wakes early (rejecting with the signal's reason) when the signal aborts. */
export function sleepOn(timers: Timers): (ms: number, signal?: AbortSignal) => Promise<void> {
  return (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      const timer = timers.setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        timers.clearTimeout(timer);
        reject(signal?.reason ?? new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
}

/**
 * The clock and sleeps the pacing of many requests goes by (src/http/adaptive.ts). A strict limiter
 * such as nginx's `limit_req` without burst refuses a request that comes a millisecond early, and at
 * 40/s a timer that fires a millisecond late costs 4 % of the rate: the wall clock (`Date.now`, whole
 * milliseconds) and a plain timer (early after a busy turn, so the wait ends in another timer that
 * is rounded up to a millisecond; docs/benchmarks.md#figures-behind-the-code) are too coarse for that.
 */
export interface PaceClock {
  /** Milliseconds since the epoch, to a fraction of a millisecond. */
  now(): number;
  /** A plain timer: for pauses, where a millisecond either way does not matter. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Waits until exactly `ms` have passed on `now` (within a few microseconds). */
  sleepExact(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The clock `sleepExactOn` reads and the timers it sets; `setImmediate` runs a function after the I/O of this turn. */
export interface FineTimers extends Timers {
  setImmediate(fn: () => void): unknown;
  clearImmediate(handle: unknown): void;
}

/** The last stretch of an exact sleep spent turning the event loop instead of on a timer (ms). */
const EXACT_TURNS_MS = 1;

/**
 * A sleep that ends when `timers.now()` reaches its time, not before and hardly after: a timer for all
 * but the last millisecond (set again when it fires early), then turns of the event loop (I/O is still
 * served between them) until the time. What the turns cost in CPU: docs/benchmarks.md#current-figures
 * (at a strict limiter). Aborting `signal` rejects with its reason.
 */
export function sleepExactOn(timers: FineTimers): (ms: number, signal?: AbortSignal) => Promise<void> {
  return (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      const until = timers.now() + ms;
      let timer: unknown;
      let turn: unknown;
      const onAbort = () => {
        if (timer !== undefined) timers.clearTimeout(timer);
        if (turn !== undefined) timers.clearImmediate(turn);
        reject(signal?.reason ?? new Error('aborted'));
      };
      const check = () => {
        timer = turn = undefined;
        const left = until - timers.now();
        if (left <= 0) {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        } else if (left > EXACT_TURNS_MS) timer = timers.setTimeout(check, left - EXACT_TURNS_MS);
        else turn = timers.setImmediate(check);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      check();
    });
}

/** When the process started, on the epoch: read on the first pacing, not at start-up. */
let origin: number | undefined;

/** The real pacing clock: the monotonic clock counted from the process's start on the epoch. */
const fineTimers: FineTimers = {
  now: () => (origin ??= performance.timeOrigin) + performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  setImmediate: (fn) => setImmediate(fn),
  clearImmediate: (handle) => clearImmediate(handle as NodeJS.Immediate),
};

/** The pacing clock of a real run. */
export const realPaceClock: PaceClock = { now: fineTimers.now, sleep: sleepOn(fineTimers), sleepExact: sleepExactOn(fineTimers) };

/** A time limit on a piece of work, kept by a run's timers (see `startDeadline`). */
export interface Deadline {
  /** Aborts when the time is up (with a TimeoutError-like reason) or when the parent signal aborts. */
  readonly signal: AbortSignal;
  /** True once the time is up (not when only the parent aborted). */
  readonly expired: boolean;
  /** Ends the deadline (call it when the work is done, so no timer is left behind). */
  clear(): void;
}

/**
 * A deadline `ms` from now on `timers`, for work that is bounded in time (a poll's lookup, a login
 * waiting for the browser). On the injected timers, not `AbortSignal.timeout`, so a test's manual
 * clock decides when it passes. `parent` (Ctrl-C) aborts it too.
 */
export function startDeadline(timers: Timers, ms: number, parent?: AbortSignal): Deadline {
  const own = new AbortController();
  let expired = false;
  const timer = timers.setTimeout(
    () => {
      expired = true;
      own.abort(Object.assign(new Error(`the deadline of ${ms} ms passed`), { name: 'TimeoutError' }));
    },
    Math.max(0, ms),
  );
  const signal = parent ? AbortSignal.any([parent, own.signal]) : own.signal;
  return {
    signal,
    get expired() {
      return expired;
    },
    clear: () => timers.clearTimeout(timer),
  };
}

/** Calls `fn` once when `signal` aborts (at once when it has); returns what stops listening. */
export function whenAborted(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return () => {};
  }
  signal.addEventListener('abort', fn, { once: true });
  return () => signal.removeEventListener('abort', fn);
}
