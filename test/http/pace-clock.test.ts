/** The clock a run's pacing goes by (src/core/timers.ts `realPaceClock`): fine on a real run, the test's own when injected. */
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createDeps } from '../../src/cli/deps.js';
import { realPaceClock } from '../../src/core/timers.js';

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
    await deps.pace.sleep(20);
    await deps.pace.sleep(10);
    expect(slept).toEqual([25, 35]);
  });
});
