/**
 * The README's quick start pasted as one block (issue 39 row 2): `opcli sandbox --write-profile
 * default &` and, at once, the first command that reads the profile. The command waits for the
 * sandbox that is still writing it (src/config/sandbox-starting.ts), and says so when it waits too long.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { WAIT_LIMIT_MS } from '../../src/config/sandbox-starting.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { BIN, runBinary, runOpcli, sandboxProfile, tempConfigDir, until } from '../helpers.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function folder() {
  const cfg = tempConfigDir();
  cleanups.push(cfg.cleanup);
  return cfg.dir;
}

/** A live process that is not this one, standing for a sandbox that is still starting. */
function otherProcess(): ChildProcess {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  cleanups.push(() => child.kill());
  return child;
}

describe('the quick start pasted as one block', () => {
  test('sandbox --write-profile default in the background, then auth login and orders list at once: both succeed', async () => {
    const dir = folder();
    const env = { OPCLI_CONFIG_DIR: dir, CI: 'true', NO_COLOR: '1' };
    const sandbox = spawn(process.execPath, [BIN, 'sandbox', '--write-profile', 'default'], { env: { PATH: process.env.PATH, ...env }, stdio: 'ignore' });
    cleanups.push(
      () =>
        new Promise((resolve) => {
          if (sandbox.exitCode !== null) return resolve(undefined);
          sandbox.once('exit', resolve);
          sandbox.kill('SIGTERM');
        }),
    );
    // No sleep: the login starts while the sandbox is still starting. What a shell gives a pasted
    // block, and no more: the `&` process runs first, so its first act (the shim's marker) comes
    // before a second Node reaches its profile. A loaded machine can delay one process past the
    // other's start-up; the test waits for that first act rather than for time to pass.
    await until(() => existsSync(join(dir, 'sandbox-starting.default.json')) || existsSync(join(dir, 'credentials.json')));
    const login = await runBinary(['auth', 'login', '--client-credentials', '--store-id', 'store_1001'], { env });
    expect(login.stderr).not.toContain('has no client-id');
    expect(login.code).toBe(0);
    expect(login.stderr).toContain('Logged in');
    const list = await runBinary(['orders', 'list', '--size', '5', '--json'], { env });
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toHaveLength(5);
    expect(existsSync(join(dir, 'sandbox-starting.default.json'))).toBe(false);
  });
});

describe('a command meets a profile a sandbox is still writing', () => {
  test('it waits until the sandbox wrote the profile, then reads it (in-process, on an injected clock)', async () => {
    const dir = folder();
    const sb = await startSandbox();
    cleanups.push(() => sb.close());
    const starter = otherProcess();
    const marker = join(dir, 'sandbox-starting.default.json');
    writeFileSync(marker, JSON.stringify({ pid: starter.pid, at: Date.now() }));
    let slept = 0;
    const r = await runOpcli(['auth', 'login', '--client-credentials', '--store-id', 'store_1001'], {
      env: { OPCLI_CONFIG_DIR: dir },
      sleep: async () => {
        // The sandbox finishes writing during the third wait.
        if (++slept === 3) {
          await sandboxProfile(sb, dir, { loggedIn: false });
          rmSync(marker);
        }
      },
    });
    expect(slept).toBe(3);
    expect(r.stderr).toContain('Logged in');
    expect(r.code).toBe(0);
    expect(sb.requests.map((q) => q.path)).toEqual(['/v1/oauth/token']);
  });

  test('a sandbox that never finishes: after the limit, the error names it, not missing credentials (exit 1)', async () => {
    const dir = folder();
    const starter = otherProcess();
    writeFileSync(join(dir, 'sandbox-starting.default.json'), JSON.stringify({ pid: starter.pid, at: Date.now() }));
    let now = 0;
    const r = await runOpcli(['auth', 'login', '--client-credentials', '--store-id', 'store_1001'], {
      env: { OPCLI_CONFIG_DIR: dir },
      now: () => now,
      sleep: async (ms) => {
        now += ms;
      },
    });
    expect(now).toBeGreaterThanOrEqual(WAIT_LIMIT_MS);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Error: Profile "default" is being written by a sandbox that is still starting (pid ${starter.pid}).`);
    expect(r.stderr).toContain('Wait until `opcli sandbox` prints its URLs, then run the command again.');
    expect(r.stderr).not.toContain('client-id');
  });

  test('a mark left by a process that is gone, or by this process, is not waited for', async () => {
    const dir = folder();
    const gone = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await new Promise((resolve) => gone.once('exit', resolve));
    for (const pid of [gone.pid, process.pid]) {
      writeFileSync(join(dir, 'sandbox-starting.default.json'), JSON.stringify({ pid, at: Date.now() }));
      let slept = 0;
      const r = await runOpcli(['auth', 'login', '--client-credentials', '--store-id', 'store_1001'], {
        env: { OPCLI_CONFIG_DIR: dir },
        sleep: async () => {
          slept++;
        },
      });
      expect(slept).toBe(0);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('Profile "default" has no client-id and client-secret.');
    }
  });
});
