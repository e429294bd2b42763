/**
 * The exact sleep the pacing uses against strict limiters (src/core/timers.ts `sleepExactOn`), on a
 * fake event loop whose timers misbehave as Node's do: the first fires early (set after a busy turn,
 * on the loop's stale time), the others late (rounded up to a whole millisecond). Virtual time only.
 */
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createDeps } from '../../src/cli/deps.js';
import { type FineTimers, realPaceClock, sleepExactOn } from '../../src/core/timers.js';

/** A loop: timers fire `skew(n)` ms off their time (the n-th timer set); each turn of immediates takes `turnMs`. */
function fakeLoop(skew: (n: number) => number, turnMs = 0.05) {
  let t = 1000;
  let n = 0;
  let turns = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const immediates = new Map<number, () => void>();
  let id = 0;
  const fine: FineTimers = {
    now: () => t,
    setTimeout: (fn, ms) => {
      timers.set(++id, { at: t + ms + skew(n++), fn });
      return id;
    },
    clearTimeout: (h) => void timers.delete(h as number),
    setImmediate: (fn) => {
      immediates.set(++id, fn);
      return id;
    },
    clearImmediate: (h) => void immediates.delete(h as number),
  };
  /** Runs the loop until nothing is left; returns when it ended. */
  const run = async () => {
    for (;;) {
      await Promise.resolve();
      const [key, fn] = immediates.entries().next().value ?? [];
      if (key !== undefined && fn) {
        immediates.delete(key);
        t += turnMs;
        turns++;
        fn();
        continue;
      }
      const next = [...timers.entries()].sort((a, b) => a[1].at - b[1].at)[0];
      if (!next) return;
      timers.delete(next[0]);
      t = Math.max(t, next[1].at);
      next[1].fn();
    }
  };
  return { fine, run, now: () => t, turns: () => turns, pending: () => timers.size + immediates.size };
}

describe('the exact sleep of the pacing', () => {
  it.each([
    ['a first timer 1.7 ms early', (n: number) => (n === 0 ? -1.7 : 0)],
    ['timers 0.9 ms late', () => 0.9],
    ['a first timer 1.2 ms early, the next 0.8 ms late', (n: number) => (n === 0 ? -1.2 : 0.8)],
  ])('with %s, it ends at its time, never before, within one turn after', async (_name, skew) => {
    for (const ms of [25, 25.64, 3.2, 0.4]) {
      const loop = fakeLoop(skew);
      const start = loop.now();
      let ended: number | undefined;
      const done = sleepExactOn(loop.fine)(ms).then(() => {
        ended = loop.now();
      });
      await loop.run();
      await done;
      expect(ended).toBeGreaterThanOrEqual(start + ms);
      expect(ended).toBeLessThanOrEqual(start + ms + 0.05 + 1e-9);
    }
  });

  it('turns the loop only for the last millisecond or so, not the whole wait', async () => {
    const loop = fakeLoop(() => 0.3);
    const done = sleepExactOn(loop.fine)(40);
    await loop.run();
    await done;
    // A timer to a millisecond before the time, late by 0.3 ms: 0.7 ms of turns of 0.05 ms.
    expect(loop.turns()).toBeGreaterThan(0);
    expect(loop.turns()).toBeLessThanOrEqual(15);
  });

  it('an abort ends it at once with the reason, and leaves no timer behind', async () => {
    const loop = fakeLoop(() => 0);
    const controller = new AbortController();
    const sleeping = sleepExactOn(loop.fine)(30, controller.signal);
    controller.abort(new Error('Ctrl-C'));
    await expect(sleeping).rejects.toThrow('Ctrl-C');
    expect(loop.pending()).toBe(0);
    await expect(sleepExactOn(loop.fine)(5, controller.signal)).rejects.toThrow('Ctrl-C');
  });
});

describe('the pacing clock of a run', () => {
  const io = { stdin: Readable.from([]), stdout: new PassThrough(), stderr: new PassThrough(), env: {}, cwd: process.cwd() };

  it('is the fine clock on a real run: fractions of a millisecond, on the epoch', () => {
    const deps = createDeps(io);
    expect(deps.pace).toBe(realPaceClock);
    const now = deps.pace.now();
    expect(Math.abs(now - Date.now())).toBeLessThan(1000);
    // A whole-millisecond clock would give integers every time.
    expect(Array.from({ length: 50 }, () => deps.pace.now()).some((x) => !Number.isInteger(x))).toBe(true);
  });

  it("is the test's own clock and sleep when it injects them (virtual time)", async () => {
    let t = 5;
    const slept: number[] = [];
    const deps = createDeps({ ...io, now: () => t, sleep: async (ms) => void slept.push((t += ms)) });
    expect(deps.pace.now()).toBe(5);
    await deps.pace.sleepExact(20);
    await deps.pace.sleep(10);
    expect(slept).toEqual([25, 35]);
  });
});
