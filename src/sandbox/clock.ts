/**
 * The sandbox's one clock: everything timed in it (token and code expiry, trigger credits, latency
 * and fault delays, the rate-limit bucket, session tokens, recorded request times) reads this.
 * The wall clock by default; tests pass a manual clock and move it forward instead of sleeping.
 */
import type { Timers } from '../core/timers.js';

export type TimerHandle = unknown;

/** The same shape as a run's timers (src/cli/deps.ts), so one manual clock can drive opcli and the sandbox. */
export type SandboxClock = Timers;

/** Real time and real timers. Timers do not keep the process alive on their own. */
export const wallClock: SandboxClock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return timer;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** A clock that moves only when told to; its timers fire, in order, as it passes them. */
export interface ManualClock extends SandboxClock {
  /** Moves the clock forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void;
  /** Timers scheduled and not yet fired or cleared. */
  readonly pending: number;
}

/** A manual clock starting at `start` (default: the wall clock's time now, so tokens it dates look current). */
export function manualClock(start: number = Date.now()): ManualClock {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { at: number; seq: number; fn: () => void }>();
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const id = ++seq;
      timers.set(id, { at: now + Math.max(0, ms), seq: id, fn });
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      const target = now + ms;
      for (;;) {
        let next: [number, { at: number; seq: number; fn: () => void }] | undefined;
        for (const entry of timers)
          if (entry[1].at <= target && (!next || entry[1].at < next[1].at || (entry[1].at === next[1].at && entry[1].seq < next[1].seq))) next = entry;
        if (!next) break;
        timers.delete(next[0]);
        now = Math.max(now, next[1].at);
        next[1].fn();
      }
      now = target;
    },
    get pending() {
      return timers.size;
    },
  };
}
