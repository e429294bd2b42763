import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireFileLock } from '../../src/config/lock.js';

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
