/**
 * Refresh with rotation across processes: 20 built binaries start at once sharing one config folder
 * whose access token has expired. Exactly one refresh reaches the server and nobody presents a
 * rotated-out refresh token, also when a killed process left the lock behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';
import { beforeEach, expect, test } from 'vitest';
import { CredentialStore } from '../../src/config/credentials.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { ROOT, runBinary } from '../helpers.js';
import { authSuite } from './util.js';

let sandbox: Sandbox;
let dir: string;
let issued: { accessToken?: string; refreshToken?: string };
authSuite((s) => ({ sandbox, dir, issued } = s));
beforeEach(async () => {
  const store = await CredentialStore.open(dir);
  await store.update('default', (cur) => ({ ...cur, token: cur.token && { ...cur.token, expiresAt: Date.now() - 60_000 } }));
  sandbox.resetLog();
});

async function twentyAtOnce() {
  const env = { OPCLI_CONFIG_DIR: dir };
  // Half print the token, half make an authenticated API call; all start together.
  const runs = await Promise.all(
    Array.from({ length: 20 }, (_, i) => runBinary(i % 2 ? ['auth', 'token'] : ['--verbose', 'auth', 'status', '--check'], { env, timeoutMs: 60_000 })),
  );
  const stored = JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8')).profiles.default.token;
  for (const [i, run] of runs.entries()) {
    expect(run.stderr, `process ${i}`).not.toContain('Error');
    expect(run.code, `process ${i}: ${run.stderr}`).toBe(0);
    if (i % 2) expect(run.stdout).toBe(`${stored.accessToken}\n`);
    else expect(run.stdout).toContain('token accepted');
  }
  expect(sandbox.counters.refreshes).toBe(1);
  expect(sandbox.counters.reuseDetections).toBe(0);
  expect(sandbox.requests.filter((r) => r.path === '/v1/oauth/token')).toHaveLength(1);
  const calls = sandbox.requests.filter((r) => r.path === '/v1/orders');
  expect(calls).toHaveLength(10);
  expect(calls.every((r) => r.status === 200 && r.headers.authorization === `Bearer ${stored.accessToken}`)).toBe(true);
  expect(stored.refreshToken).not.toBe(issued.refreshToken);
  expect(statSync(join(dir, 'credentials.json')).mode & 0o777).toBe(0o600);
  // Nothing printed a secret (stdout of `auth token` is the token by design; stderr never).
  const secrets = [issued.accessToken, issued.refreshToken, stored.refreshToken, sandbox.client.clientSecret] as string[];
  const output = runs.map((r, i) => r.stderr + (i % 2 ? '' : r.stdout)).join('\n');
  for (const secret of [...secrets, stored.accessToken]) expect(output).not.toContain(secret);
  return runs;
}

test('20 processes with an expired token: all succeed, one refresh, no reuse detection', { timeout: 90_000 }, async () => {
  await twentyAtOnce();
});

/**
 * A process that takes the credentials lock with opcli's own lock code (src/config/lock.ts, bundled
 * for the child) and holds it until told to release it on stdin, or until killed.
 */
function lockHolder(): { child: ChildProcess; locked: Promise<void> } {
  const bundle = join(dir, 'lock-holder.mjs');
  buildSync({ entryPoints: [join(ROOT, 'src/config/lock.ts')], bundle: true, platform: 'node', format: 'esm', outfile: bundle, logLevel: 'error' });
  const script = `
    const { withFileLock } = await import(${JSON.stringify(pathToFileURL(bundle).href)});
    await withFileLock(process.argv[1], 'credentials', () => new Promise((release) => {
      process.stdout.write('locked\\n');
      process.stdin.once('data', release);
    }));
    process.stdout.write('released\\n');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, dir], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const locked = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (c) => c.toString().includes('locked') && resolve());
    child.once('exit', (code) => reject(new Error(`lock holder exited ${code}`)));
  });
  return { child, locked };
}

test('the same with the lock left behind by a killed process', { timeout: 90_000 }, async () => {
  // A process takes the credentials lock exactly as opcli does, then dies without releasing it.
  const holder = lockHolder();
  await holder.locked;
  holder.child.kill('SIGKILL');
  await new Promise((resolve) => holder.child.once('exit', resolve));
  expect(existsSync(join(dir, 'credentials.lock'))).toBe(true);
  // Its owner is gone, so the lock is reclaimed at once, by exactly one of the twenty (one refresh,
  // no reuse detection, checked in twentyAtOnce), and nothing is left behind.
  await twentyAtOnce();
  expect(readdirSync(dir).filter((n) => n.startsWith('credentials.lock'))).toEqual([]);
});
