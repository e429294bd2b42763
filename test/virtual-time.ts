/**
 * Virtual time for a whole run in one process: opcli in-process (its `now` and `sleep`) and an
 * in-process sandbox (its clock) share one clock that jumps from timer to timer instead of waiting.
 *
 * Real I/O still happens (loopback HTTP, journal writes), so the clock only moves once the process
 * is quiet: no one read the clock or set a timer for a number of event-loop turns and a few real
 * milliseconds. Everything in flight then waits on a timer, and the earliest one is due. A late
 * jump can only make an event look later than it was, never earlier: a sleep of N ms always lasts
 * N ms of virtual time, which is what the tests assert.
 */
import type { Timers } from '../src/core/timers.js';
import type { SandboxClock } from '../src/sandbox/index.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

/** Event-loop turns and real milliseconds without activity before the clock may move. */
const QUIET_TURNS = 12;
const QUIET_MS = 3;

export interface VirtualTime {
  /** For the sandbox: `startSandbox({ clock })`. */
  clock: SandboxClock;
  /** For opcli: `runOpcli(argv, { now, sleep })`. */
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Calls `hook` each time the process is quiet, before the clock moves: a test may look at the
   * state of things between two instants, or hold the clock while real timers (a redraw) run.
   */
  onQuiet: (hook: (() => Promise<void> | void) | undefined) => void;
  /** Stops the driver (pending timers never fire). */
  stop: () => void;
}

export function virtualTime(start: number = Date.now()): VirtualTime {
  let now = start;
  let seq = 0;
  /** Bumped by every reading of the clock and every timer set or cleared: someone is busy. */
  let activity = 0;
  let stopped = false;
  const timers = new Map<number, Timer>();
  let wake: (() => void) | undefined;
  let hook: (() => Promise<void> | void) | undefined;

  const clock: SandboxClock = {
    now: () => {
      activity++;
      return now;
    },
    setTimeout(fn, ms) {
      activity++;
      const id = ++seq;
      timers.set(id, { at: now + Math.max(0, ms), seq: id, fn });
      wake?.();
      return id;
    },
    clearTimeout(handle) {
      activity++;
      timers.delete(handle as number);
    },
  };

  const sleep = (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      const onAbort = () => {
        clock.clearTimeout(id);
        reject(signal?.reason ?? new Error('aborted'));
      };
      const id = clock.setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });

  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

  /** Resolves once nothing has touched the clock for QUIET_TURNS turns and QUIET_MS real milliseconds. */
  async function quiet(): Promise<void> {
    for (;;) {
      const seen = activity;
      const since = performance.now();
      let turns = 0;
      while (turns < QUIET_TURNS && activity === seen) {
        await turn();
        turns++;
      }
      if (activity !== seen) continue;
      await pause(Math.max(0, QUIET_MS - (performance.now() - since)));
      if (activity === seen) return;
    }
  }

  async function drive(): Promise<void> {
    while (!stopped) {
      if (timers.size === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
        continue;
      }
      await quiet();
      if (hook) {
        await hook();
        await quiet();
      }
      if (stopped) return;
      let next: [number, Timer] | undefined;
      for (const entry of timers) if (!next || entry[1].at < next[1].at || (entry[1].at === next[1].at && entry[1].seq < next[1].seq)) next = entry;
      if (!next) continue;
      timers.delete(next[0]);
      now = Math.max(now, next[1].at);
      next[1].fn();
    }
  }
  void drive();

  return {
    clock,
    now: clock.now,
    sleep,
    onQuiet: (h) => {
      hook = h;
    },
    stop: () => {
      stopped = true;
      wake?.();
    },
  };
}

/**
 * The run's timers on `time` until `over()`, the wall clock's from then on (its clock going on from
 * where virtual time stood). A wait for a lock passes in virtual time; the requests sent after it
 * are real loopback I/O, whose deadline (on the same timers) must not be jumped to while an answer
 * is on its way.
 */
export function virtualUntil(time: VirtualTime, over: () => boolean): Timers {
  let handover: { virtual: number; real: number } | undefined;
  const switched = () => {
    if (!handover && over()) handover = { virtual: time.now(), real: Date.now() };
    return handover;
  };
  return {
    now: () => {
      const h = switched();
      return h ? h.virtual + (Date.now() - h.real) : time.now();
    },
    setTimeout: (fn, ms) => (switched() ? setTimeout(fn, ms) : time.clock.setTimeout(fn, ms)),
    clearTimeout: (handle) => (typeof handle === 'number' ? time.clock.clearTimeout(handle) : clearTimeout(handle as NodeJS.Timeout)),
  };
}
