/**
 * Test helpers: a temporary config folder per test, the CLI run in-process with injected deps and
 * captured streams, the built binary run as a subprocess, and a logged-in profile on a sandbox.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { runCli } from '../src/cli/program.js';
import { type Deps, type DepsInit, createDeps, type Prompter } from '../src/cli/deps.js';
import type { Sandbox, SandboxOptions } from '../src/sandbox/types.js';

export const ROOT = join(import.meta.dirname, '..');
export const BIN = join(ROOT, 'bin', 'opcli.cjs');

/** Bundles a TypeScript `source` that imports the project's modules into one script at `outfile`, for a test to run as its own process. */
export async function bundleScript(source: string, outfile: string): Promise<void> {
  const { build } = await import('esbuild');
  await build({ stdin: { contents: source, resolveDir: ROOT, loader: 'ts' }, bundle: true, platform: 'node', format: 'esm', outfile, logLevel: 'silent' });
}

/** A fresh private config folder; removed by the returned cleanup. */
export function tempConfigDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'opcli-test-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  deps: Deps;
}

export interface RunOptions extends Partial<Omit<DepsInit, 'stdin' | 'stdout' | 'stderr' | 'env'>> {
  env?: Record<string, string | undefined>;
  /** Text on standard input (a pipe). */
  stdin?: string;
  /** Pretend every stream is a terminal. */
  tty?: boolean;
  prompter?: Prompter;
  /** Called with each piece of stderr as it is written (to wait for a line mid-run). */
  onStderr?: (text: string) => void;
}

/** A stdout and a stderr for an in-process run, and what was written to each so far. */
export function capturedStreams(onStderr?: (text: string) => void) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => {
    out += c.toString();
  });
  stderr.on('data', (c) => {
    err += c.toString();
    onStderr?.(c.toString());
  });
  return { stdout, stderr, out: () => out, err: () => err };
}

/** Runs opcli in-process with captured stdout/stderr; the env always has a temp OPCLI_CONFIG_DIR when given one. */
export async function runOpcli(argv: string[], options: RunOptions = {}): Promise<RunResult> {
  const { stdout, stderr, out, err } = capturedStreams(options.onStderr);
  const { env, stdin, tty, onStderr: _, ...rest } = options;
  const deps = createDeps({
    ...rest,
    stdin: Readable.from(stdin !== undefined ? [Buffer.from(stdin)] : []),
    stdout,
    stderr,
    stdinIsTTY: tty ?? false,
    stdoutIsTTY: tty ?? false,
    stderrIsTTY: tty ?? false,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    cwd: options.cwd ?? process.cwd(),
  });
  const code = await runCli(argv, deps);
  return { code, stdout: out(), stderr: err(), deps };
}

export interface SpawnResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the built binary (`bin/opcli.cjs`) as a subprocess. */
export function runBinary(
  argv: string[],
  options: { env?: Record<string, string | undefined>; input?: string; cwd?: string; timeoutMs?: number; wrap?: [string, ...string[]] } = {},
): Promise<SpawnResult> {
  // `wrap`: a program that runs the binary (strace and its flags): `wrap… node bin/opcli.cjs argv…`.
  const [command, ...args] = options.wrap ? [...options.wrap, process.execPath] : [process.execPath];
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args, BIN, ...argv], {
      cwd: options.cwd ?? ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c) => {
      stderr += c.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    // A command that never reads its input (a help page the shim answers from a file) may exit
    // before this write lands: EPIPE on stdin is then expected, not a failure of the test.
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Resolves once `done()` holds, checked every 5 ms: waiting for an event another process causes, not for time. */
export function until(done: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (!done()) return;
      clearInterval(timer);
      resolve();
    }, 5);
  });
}

/** A prompter that answers from a script and fails the test when asked something unexpected. */
export function scriptedPrompter(answers: Record<string, unknown>): Prompter & { asked: string[] } {
  const asked: string[] = [];
  const answer = (message: string) => {
    asked.push(message);
    const key = Object.keys(answers).find((k) => message.includes(k));
    if (key === undefined) throw new Error(`unexpected prompt: ${message}`);
    return answers[key];
  };
  return {
    asked,
    input: async (o) => String(answer(o.message)),
    password: async (o) => String(answer(o.message)),
    confirm: async (o) => Boolean(answer(o.message)),
    select: async (o) => answer(o.message) as never,
  };
}

/**
 * Writes a profile for `sandbox` into `dir` (base URL, client, store, provider settings) and, unless
 * `loggedIn` is false, stores a token pair the sandbox issued, so commands run authenticated.
 */
export async function sandboxProfile(
  sandbox: Sandbox,
  dir: string,
  options: { profile?: string; loggedIn?: boolean; scopes?: string[]; accessTokenTtl?: number } = {},
): Promise<{ accessToken?: string; refreshToken?: string }> {
  const { SettingsStore } = await import('../src/config/settings.js');
  const { CredentialStore } = await import('../src/config/credentials.js');
  const profile = options.profile ?? 'default';
  const { writeSandboxProfile } = await import('../src/config/sandbox-profile.js');
  const credentials = await CredentialStore.open(dir);
  await writeSandboxProfile(sandbox, await SettingsStore.open(dir), credentials, profile);
  let tokens: ReturnType<Sandbox['issueTokens']> | undefined;
  if (options.loggedIn !== false) tokens = sandbox.issueTokens({ scopes: options.scopes, accessTokenTtl: options.accessTokenTtl });
  await credentials.update(profile, (cur) => ({
    ...cur,
    token: tokens
      ? {
          accessToken: tokens.access_token,
          refreshToken: tokens.refresh_token,
          expiresAt: Date.now() + tokens.expires_in * 1000,
          scopes: tokens.scope.split(' '),
          grant: 'authorization_code',
          obtainedAt: Date.now(),
        }
      : undefined,
  }));
  return { accessToken: tokens?.access_token, refreshToken: tokens?.refresh_token };
}

/** Deps with no network and no terminal, for unit tests of a verb's run(). */
export function quietDeps(env: Record<string, string | undefined> = {}): Deps {
  return createDeps({ stdin: Readable.from([]), stdout: new PassThrough(), stderr: new PassThrough(), env, cwd: ROOT });
}

/**
 * One sandbox for a test file (started with `options.sandbox`), and per test a fresh config folder
 * with a profile for it (`profile`: logged in by default, logged out, or none at all), an empty
 * request log and no faults. `bind` hands the file the sandbox, the folder, the environment of a
 * run there and the profile's access token.
 */
export function profileSuite(
  bind: (s: { sandbox: Sandbox; dir: string; env: Record<string, string>; accessToken?: string }) => void,
  options: { sandbox?: SandboxOptions; profile?: 'logged-in' | 'logged-out' | 'none' } = {},
): void {
  let sandbox: Sandbox;
  let cleanup = () => {};
  beforeAll(async () => {
    const { startSandbox } = await import('../src/sandbox/index.js');
    sandbox = await startSandbox(options.sandbox);
  });
  afterAll(async () => {
    await sandbox.close();
  });
  beforeEach(async () => {
    const temp = tempConfigDir();
    cleanup = temp.cleanup;
    const profile = options.profile ?? 'logged-in';
    const { accessToken } = profile === 'none' ? {} : await sandboxProfile(sandbox, temp.dir, { loggedIn: profile === 'logged-in' });
    sandbox.setFaults([]);
    sandbox.resetLog();
    bind({ sandbox, dir: temp.dir, env: { OPCLI_CONFIG_DIR: temp.dir }, accessToken });
  });
  afterEach(() => cleanup());
}

/** The prototype of Node's FileHandle (not exported by node:fs/promises), for fault injection into its methods. */
export async function fileHandlePrototype(): Promise<Pick<FileHandle, 'datasync' | 'write'>> {
  const probe = await open(process.execPath, 'r');
  const proto = Object.getPrototypeOf(probe) as Pick<FileHandle, 'datasync' | 'write'>;
  await probe.close();
  return proto;
}
