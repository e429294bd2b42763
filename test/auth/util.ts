/** Shared pieces of the auth tests: a sandbox + config folder per test, and a log of every output for the secrets check. */
import { request } from 'undici';
import { afterEach, beforeEach } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox, SandboxOptions } from '../../src/sandbox/types.js';
import { type RunOptions, type RunResult, runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';

/** Everything any auth test printed (stdout except `auth token`, and all stderr), for the secrets check. */
export const printed: string[] = [];
/** Every secret the tests saw issued or sent. */
export const secrets = new Set<string>();

/** Runs opcli in-process against `dir`, recording what it printed. */
export async function opcli(dir: string, argv: string[], options: RunOptions = {}): Promise<RunResult> {
  const result = await runOpcli(argv, { ...options, env: { OPCLI_CONFIG_DIR: dir, ...options.env } });
  printed.push(result.stderr);
  if (!argv.includes('token') || argv.includes('login')) printed.push(result.stdout);
  return result;
}

/** GETs a URL without following redirects; returns the Location (the consent page auto-approving). */
export async function locationOf(url: string): Promise<string> {
  const res = await request(url, { method: 'GET' });
  await res.body.text();
  const location = res.headers.location;
  if (typeof location !== 'string') throw new Error(`expected a redirect from ${url}, got ${res.statusCode}`);
  return location;
}

/** GETs a URL and returns status, headers and body (no redirects followed). */
export async function get(url: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const res = await request(url, { method: 'GET' });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** Token requests the sandbox received, bodies parsed; every secret in them is remembered. */
export function tokenRequests(sandbox: Sandbox): Record<string, string>[] {
  return sandbox.requests
    .filter((r) => r.method === 'POST' && r.path === '/v1/oauth/token')
    .map((r) => {
      const body = JSON.parse(r.body || '{}') as Record<string, string>;
      for (const key of ['code', 'code_verifier', 'client_secret', 'refresh_token']) if (body[key]) secrets.add(body[key]);
      return body;
    });
}

/** Remembers the secrets of a sandbox (client secret, provider token). */
export function rememberSandbox(sandbox: Sandbox): void {
  secrets.add(sandbox.client.clientSecret);
  secrets.add(sandbox.store.providerToken);
}

/** Whether a TCP connection to the port is refused. */
export async function portRefuses(port: number): Promise<boolean> {
  const { connect } = await import('node:net');
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** Remembers the tokens stored in a config folder. */
export async function rememberStored(dir: string): Promise<void> {
  const { readFileSync, existsSync } = await import('node:fs');
  const path = `${dir}/credentials.json`;
  if (!existsSync(path)) return;
  const file = JSON.parse(readFileSync(path, 'utf8')) as { profiles?: Record<string, { token?: { accessToken?: string; refreshToken?: string } }> };
  for (const p of Object.values(file.profiles ?? {})) {
    if (p.token?.accessToken) secrets.add(p.token.accessToken);
    if (p.token?.refreshToken) secrets.add(p.token.refreshToken);
  }
}

/** The secrets that some recorded output contains (should be none). */
export function leakedSecrets(): string[] {
  const all = printed.join('\n');
  return [...secrets].filter((s) => s.length >= 6 && all.includes(s));
}

/**
 * The set-up the auth test files share: per test a new sandbox (started with `sandbox()`) and a
 * config folder with its profile, logged in unless `loggedIn` is false. Its secrets, and after the
 * test those of every token request and stored token, are remembered for leakedSecrets(); then the
 * sandbox is closed and the folder removed. `bind` hands the file the sandbox, the folder and the
 * tokens the profile was given.
 */
export function authSuite(
  bind: (s: { sandbox: Sandbox; dir: string; issued: { accessToken?: string; refreshToken?: string } }) => void,
  options: { sandbox?: () => SandboxOptions; loggedIn?: boolean } = {},
): void {
  let sandbox: Sandbox;
  let dir = '';
  let cleanup = () => {};
  beforeEach(async () => {
    sandbox = await startSandbox(options.sandbox?.());
    rememberSandbox(sandbox);
    ({ dir, cleanup } = tempConfigDir());
    const issued = await sandboxProfile(sandbox, dir, { loggedIn: options.loggedIn });
    for (const secret of [issued.accessToken, issued.refreshToken]) if (secret) secrets.add(secret);
    bind({ sandbox, dir, issued });
  });
  afterEach(async () => {
    tokenRequests(sandbox);
    await rememberStored(dir);
    await sandbox.close();
    cleanup();
  });
}
