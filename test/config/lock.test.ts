import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireFileLock } from '../../src/config/lock.js';
import { processStart } from '../../src/config/process-start.js';
import { virtualTime } from '../virtual-time.js';

/** A lock folder as another opcli process would have left it: its owner record names `pid` on this host. */
function plantLock(dir: string, name: string, pid: number): void {
  const path = join(dir, `${name}.lock`);
  mkdirSync(path);
  writeFileSync(join(path, 'owner'), JSON.stringify({ pid, host: hostname(), token: 'planted' }));
}

/** The state letter of a Linux process (R, S, Z, ...), or undefined once it is gone. */
function state(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2);
  } catch {
    return undefined;
  }
}

let holder: ChildProcess | undefined;
let dir: string | undefined;
afterEach(() => {
  holder?.kill('SIGKILL');
  holder = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * A zombie on demand: sh starts a child, prints its pid and becomes `sleep`, which never reaps it;
 * the child exits only once its parent is `sleep` (so sh cannot reap it first, as it did when the
 * child was `sleep 0`) and stays a zombie (state Z) while the sleep runs. This is what a batch
 * killed with kill -9 looks like under a parent, or an init, that reaps late.
 */
async function zombie(): Promise<{ zombiePid: number; parentPid: number }> {
  const exitOnceParentIsSleep = 'until [ "$(cat /proc/$parent/comm)" = sleep ]; do sleep 0.01; done';
  holder = spawn('sh', ['-c', `parent=$$; (${exitOnceParentIsSleep}) & echo $!; exec sleep 30`], { stdio: ['ignore', 'pipe', 'ignore'] });
  const child = holder;
  const zombiePid = await new Promise<number>((resolve) => child.stdout?.once('data', (chunk) => resolve(Number(String(chunk).trim()))));
  for (let i = 0; i < 500 && state(zombiePid) !== 'Z'; i++) await new Promise((r) => setTimeout(r, 10));
  return { zombiePid, parentPid: child.pid as number };
}

describe.runIf(process.platform === 'linux')('file lock owners (Linux)', () => {
  it("takes over at once a lock whose owner has exited but is not reaped yet (a zombie), and never a live owner's", async () => {
    dir = mkdtempSync(join(tmpdir(), 'opcli-lock-'));
    const { zombiePid, parentPid } = await zombie();
    expect(state(zombiePid)).toBe('Z');

    // The live owner (the sleeping parent) keeps its lock: a waiter gives up after its wait.
    plantLock(dir, 'live', parentPid);
    await expect(acquireFileLock(dir, 'live', { waitMs: 0 })).rejects.toThrow(/Another opcli process holds the live lock/);

    // The zombie still answers kill(pid, 0), but it is dead: its lock is taken without waiting.
    plantLock(dir, 'dead', zombiePid);
    const lock = await acquireFileLock(dir, 'dead', { waitMs: 0 });
    const owner = JSON.parse(readFileSync(join(dir, 'dead.lock', 'owner'), 'utf8')) as { pid: number };
    expect(owner.pid).toBe(process.pid);
    lock.release();
  });
});

/** A lock folder with an owner record of this host, as a planted or an older lock holds it (`at`: when it says it was taken). */
function plantOwner(dir: string, name: string, owner: Record<string, unknown>): string {
  const path = join(dir, `${name}.lock`);
  mkdirSync(path);
  writeFileSync(join(path, 'owner'), JSON.stringify({ host: hostname(), token: 'planted', ...owner }));
  return path;
}

const tookIt = async (dir: string, name: string) => {
  const lock = await acquireFileLock(dir, name, { waitMs: 0 });
  const owner = JSON.parse(readFileSync(join(dir, `${name}.lock`, 'owner'), 'utf8')) as { pid: number };
  lock.release();
  return owner.pid === process.pid;
};

/**
 * Issue 38, row 8: a lock owner `{"pid":1,"host":<this host>}` planted made every `giftcard issue`
 * fail after 15 s. A lock whose owner cannot be alive here is taken over at once.
 */
describe('a lock whose owner cannot be the process its pid names', () => {
  it('pid 1 (init), 0 or -1 (process groups) on this host: taken over at once', async () => {
    dir = mkdtempSync(join(tmpdir(), 'opcli-lock-'));
    for (const [i, pid] of [1, 0, -1].entries()) {
      plantOwner(dir, `planted-${i}`, { pid, at: new Date().toISOString() });
      expect(await tookIt(dir, `planted-${i}`)).toBe(true);
    }
  });

  it('a live holder keeps its lock, and the message names it and the way out', async () => {
    dir = mkdtempSync(join(tmpdir(), 'opcli-lock-'));
    const path = plantOwner(dir, 'live', { pid: process.pid, at: new Date().toISOString() });
    const refused = acquireFileLock(dir, 'live', { waitMs: 0 });
    await expect(refused).rejects.toThrow(`pid ${process.pid} on host ${hostname()}`);
    await expect(refused).rejects.toThrow(
      `if no opcli runs as pid ${process.pid} on host ${hostname()} (check: \`ps -p ${process.pid} -o pid,lstart,command\`), remove the lock: \`rm -r ${path}\``,
    );
  });

  describe.runIf(process.platform === 'linux')('on Linux, by when the process started', () => {
    /** A live process (sleep) started now, and its /proc start time. */
    function sleeper(): number {
      holder = spawn('sleep', ['30'], { stdio: 'ignore' });
      return holder.pid as number;
    }

    it('a live pid whose process started after the record was written is not its owner: taken over', async () => {
      dir = mkdtempSync(join(tmpdir(), 'opcli-lock-'));
      const pid = sleeper();
      const path = plantOwner(dir, 'reused', { pid, at: new Date(Date.now() - 3_600_000).toISOString() });
      // Written an hour ago (its file's time), by a process that started just now: not its owner.
      const hourAgo = new Date(Date.now() - 3_600_000);
      utimesSync(join(path, 'owner'), hourAgo, hourAgo);
      expect(await tookIt(dir, 'reused')).toBe(true);
    });

    it('a record with the start of its process is that process: kept; the same pid with another start: taken over', async () => {
      dir = mkdtempSync(join(tmpdir(), 'opcli-lock-'));
      const pid = sleeper();
      const start = processStart(pid) as string;
      expect(start).toMatch(/^[0-9a-f-]+:\d+$/);
      plantOwner(dir, 'same', { pid, start, at: new Date().toISOString() });
      await expect(acquireFileLock(dir, 'same', { waitMs: 0 })).rejects.toThrow(/Another opcli process holds the same lock/);
      plantOwner(dir, 'other', { pid, start: `${start.split(':')[0]}:1`, at: new Date().toISOString() });
      expect(await tookIt(dir, 'other')).toBe(true);
      // pid 1 whose start matches (opcli as a container's only process) keeps its lock.
      plantOwner(dir, 'init', { pid: 1, start: processStart(1), at: new Date().toISOString() });
      if (processStart(1)) await expect(acquireFileLock(dir, 'init', { waitMs: 0 })).rejects.toThrow(/holds the init lock/);
    });

    it('a lock opcli takes records the start of its process', async () => {
      dir = mkdtempSync(join(tmpdir(), 'opcli-lock-'));
      const lock = await acquireFileLock(dir, 'mine', { waitMs: 0 });
      const owner = JSON.parse(readFileSync(join(dir, 'mine.lock', 'owner'), 'utf8')) as { start?: string };
      expect(owner.start).toBe(processStart(process.pid));
      lock.release();
    });
  });
});

describe("waiting for a lock, on virtual time (the run's timers)", () => {
  it('a waiter takes the lock only once its holder lets go, within a poll of the release, however long that is', async () => {
    dir = mkdtempSync(join(tmpdir(), 'opcli-lock-'));
    for (const releaseAfter of [40, 1_000, 3_000]) {
      const vt = virtualTime();
      try {
        const holder = await acquireFileLock(dir, 'held', { waitMs: 0 });
        const start = vt.now();
        let released = false;
        vt.onQuiet(() => {
          if (!released && vt.now() - start >= releaseAfter) {
            released = true;
            holder.release();
          }
        });
        const waiter = await acquireFileLock(dir, 'held', { waitMs: 60_000, timers: vt.clock });
        const took = vt.now() - start;
        expect(released).toBe(true);
        // Polls are 10-50 ms apart: the release is seen at the latest two polls after the moment it was due.
        expect(took).toBeGreaterThanOrEqual(releaseAfter);
        expect(took).toBeLessThanOrEqual(releaseAfter + 100);
        waiter.release();
      } finally {
        vt.stop();
      }
    }
  });

  it('a waiter gives up once its wait has passed, naming the wait, and never before', async () => {
    dir = mkdtempSync(join(tmpdir(), 'opcli-lock-'));
    const holder = await acquireFileLock(dir, 'busy', { waitMs: 0 });
    try {
      for (const waitMs of [0, 1_000, 5_000]) {
        const vt = virtualTime();
        try {
          const start = vt.now();
          await expect(acquireFileLock(dir, 'busy', { waitMs, timers: vt.clock })).rejects.toThrow(`did not release it in ${waitMs / 1000} s`);
          expect(vt.now() - start).toBeGreaterThanOrEqual(waitMs);
          expect(vt.now() - start).toBeLessThanOrEqual(waitMs + 50);
        } finally {
          vt.stop();
        }
      }
    } finally {
      holder.release();
    }
  });
});
