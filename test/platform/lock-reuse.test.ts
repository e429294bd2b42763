/**
 * Issue 43 row 3: a lock survives pid reuse. Where the platform gives no process start time
 * (Windows, macOS; `platform` injected here on Linux) the owner answers on its token's endpoint
 * while it runs, and a record whose pid now belongs to another live process is taken over; every
 * "held by" message names the check and the way out in the platform's own commands.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireFileLock } from '../../src/config/lock.js';
import { bundleScript, ROOT } from '../helpers.js';

let dir: string;
let other: ChildProcess | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opcli-lock-'));
});
afterEach(() => {
  other?.kill('SIGKILL');
  other = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** A live process that is not opcli: what a reused pid names. */
function anotherProcess(): number {
  other = spawn('sleep', ['30'], { stdio: 'ignore' });
  return other.pid as number;
}

/** A lock as an opcli on Windows or macOS left it when it died: its pid, its process token, no start time. */
function plantWindowsLock(name: string, pid: number, live: string): void {
  const path = join(dir, `${name}.lock`);
  mkdirSync(path);
  writeFileSync(
    join(path, 'owner'),
    JSON.stringify({ pid, host: hostname(), token: 'a1b2c3d4e5f6a7b8c9', at: new Date(Date.now() - 60_000).toISOString(), live }),
  );
}

const owner = (name: string) => JSON.parse(readFileSync(join(dir, `${name}.lock`, 'owner'), 'utf8'));

describe('a lock whose owner pid is now another live process', () => {
  it('is taken over at once when the owner no longer answers on its token (Windows and macOS records)', async () => {
    for (const token of ['0123456789abcdef0123456789abcdef', 'ffffffffffffffffffffffffffffffff']) {
      plantWindowsLock('journal', anotherProcess(), token);
      const lock = await acquireFileLock(dir, 'journal', { waitMs: 0, platform: 'win32' });
      expect(owner('journal').pid).toBe(process.pid);
      lock.release();
      other?.kill('SIGKILL');
    }
  });

  it('a live owner that answers keeps its lock; the waiter is told how to check the pid and remove the lock, in PowerShell on Windows', async () => {
    const held = await acquireFileLock(dir, 'credentials', { platform: 'win32' });
    try {
      // The record carries the process token and no start time, as on Windows.
      expect(owner('credentials')).toMatchObject({ pid: process.pid, live: expect.stringMatching(/^[0-9a-f]{32}$/) });
      expect(owner('credentials').start).toBeUndefined();
      const waiting = acquireFileLock(dir, 'credentials', { waitMs: 0, platform: 'win32' });
      await expect(waiting).rejects.toThrow(`pid ${process.pid} on host ${hostname()}`);
      const message = (await waiting.catch((e: Error) => e)) as Error;
      expect(message.message).toContain(`(check: \`Get-Process -Id ${process.pid}\`)`);
      expect(message.message).toContain(`remove the lock: \`Remove-Item -Recurse -Force ${join(dir, 'credentials.lock')}\``);
      expect(message.message).not.toContain('rm -r');
    } finally {
      held.release();
    }
  });

  it('on Linux the record carries the start time, and the advice is POSIX', async () => {
    const held = await acquireFileLock(dir, 'ledger', { platform: 'linux' });
    try {
      expect(owner('ledger').start).toMatch(/:\d+$/);
      expect(owner('ledger').live).toBeUndefined();
      const error = (await acquireFileLock(dir, 'ledger', { waitMs: 0 }).catch((e: Error) => e)) as Error;
      expect(error.message).toContain(`(check: \`ps -p ${process.pid} -o pid,lstart,command\`)`);
      expect(error.message).toContain(`remove the lock: \`rm -r ${join(dir, 'ledger.lock')}\``);
    } finally {
      held.release();
    }
  });

  it('an owner killed with kill -9 stops answering: once its pid names another live process, its lock is taken over', async () => {
    // A holder in a process of its own, taking the lock as on Windows (bundled from src/ by the build's esbuild).
    const script = join(dir, 'hold.mjs');
    const source = `import { acquireFileLock } from ${JSON.stringify(join(ROOT, 'src', 'config', 'lock.ts'))};
      await acquireFileLock(process.argv[2], 'ledger', { platform: 'win32' });
      process.stdout.write('held\\n');
      setInterval(() => {}, 1000);`;
    await bundleScript(source, script);
    const holder = spawn(process.execPath, [script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => holder.stdout?.once('data', () => resolve()));
      const record = owner('ledger');
      expect(record).toMatchObject({ pid: holder.pid, live: expect.stringMatching(/^[0-9a-f]{32}$/) });
      // Alive and answering: kept.
      await expect(acquireFileLock(dir, 'ledger', { waitMs: 0, platform: 'win32' })).rejects.toThrow(`pid ${holder.pid}`);
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('exit', resolve));
      // Windows gives the pid to another process: the record now names a live pid that is not opcli.
      writeFileSync(join(dir, 'ledger.lock', 'owner'), JSON.stringify({ ...record, pid: anotherProcess() }));
      const lock = await acquireFileLock(dir, 'ledger', { waitMs: 0, platform: 'win32' });
      expect(owner('ledger').pid).toBe(process.pid);
      lock.release();
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('a planted token that is not one opcli makes names no endpoint: never connected to, the lock is taken over', async () => {
    plantWindowsLock('planted', anotherProcess(), '../../etc/passwd');
    const lock = await acquireFileLock(dir, 'planted', { waitMs: 0, platform: 'darwin' });
    lock.release();
  });
});
