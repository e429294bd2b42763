/** The sandbox's one clock: everything timed in it reads this; tests move a manual one instead of sleeping. */
import { realTimers, type Timers } from '../core/timers.js';

export type TimerHandle = unknown;

/** A run's timers (src/cli/deps.ts): one manual clock drives opcli and the sandbox. */
export type SandboxClock = Timers;

/** A run's real timers, except that these do not keep the process alive. */
export const wallClock: SandboxClock = { ...realTimers, setTimeout: (fn, ms) => setTimeout(fn, ms).unref() };

/** Its timers fire, in order, as it passes them. */
export interface ManualClock extends SandboxClock {
  advance(ms: number): void;
  readonly pending: number;
}

/** Starts at the wall clock's time by default, so tokens it dates look current. */
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
