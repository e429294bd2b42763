/** The clock and timers of a run; a test passes a manual clock (the sandbox's `manualClock()`) for virtual time. */
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

/** The clock and sleep pacing goes by (src/http/adaptive.ts): the monotonic clock, finer than whole milliseconds, and plain timers. */
export interface PaceClock {
  /** Milliseconds since the epoch, to a fraction of a millisecond. */
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** When the process started, on the epoch: read on the first pacing, not at start-up. */
let origin: number | undefined;

/** The real pacing clock's timers: the monotonic clock counted from the process's start on the epoch. */
const fineTimers: Timers = {
  now: () => (origin ??= performance.timeOrigin) + performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** The pacing clock of a real run. */
export const realPaceClock: PaceClock = { now: fineTimers.now, sleep: sleepOn(fineTimers) };

/** A time limit on a piece of work, kept by a run's timers (see `startDeadline`). */
export interface Deadline {
  /** Aborts when the time is up (with a TimeoutError-like reason) or when the parent signal aborts. */
  readonly signal: AbortSignal;
  /** True once the time is up (not when only the parent aborted). */
  readonly expired: boolean;
  /** Ends the deadline (call it when the work is done, so no timer is left behind). */
  clear(): void;
}

/** A deadline `ms` from now on `timers` (not `AbortSignal.timeout`: a test's clock decides); `parent` (Ctrl-C) aborts it too. */
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
