/**
 * The processes behind the real-infrastructure fixtures (nginx, squid): each runs in the foreground as
 * a child in its own process group, is found on PATH or in the sbin folders, and is stopped by its PID:
 * SIGTERM, then SIGKILL to its group after a grace period. Whatever is still running when the test
 * process exits is killed (by an exit handler, or by a watchdog when the process was killed), so a
 * failed test never leaves a gateway or proxy behind.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const SBIN = ['/usr/local/sbin', '/usr/sbin', '/sbin'];

/** The absolute path of an executable: on PATH or in the sbin folders (not on a normal user's PATH). */
export function findTool(name: string, extraDirs: string[] = []): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...SBIN, ...extraDirs];
  for (const dir of dirs) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {}
  }
  return undefined;
}

/** The first existing file among `candidates`. */
export function findFile(candidates: string[]): string | undefined {
  return candidates.find((file) => existsSync(file));
}

/** The tools each fixture needs, with the Debian package that brings them. */
const PACKAGES: Record<string, string> = { nginx: 'nginx', squid: 'squid', openssl: 'openssl', strace: 'strace', pg_ctl: 'postgresql' };

/** Debian keeps each PostgreSQL major version's programs in /usr/lib/postgresql/<major>/bin, off PATH: newest first. */
export function postgresBinDirs(): string[] {
  let majors: string[] = [];
  try {
    majors = readdirSync('/usr/lib/postgresql').filter((name) => /^\d+$/.test(name));
  } catch {}
  return majors.sort((a, b) => Number(b) - Number(a)).map((major) => join('/usr/lib/postgresql', major, 'bin'));
}

/** Where a tool lives off PATH. */
const toolDirs = (tool: string): string[] => (tool === 'pg_ctl' ? postgresBinDirs() : []);

/**
 * Why tests needing these tools cannot run here (undefined when they can). Under CI (`CI` set, as
 * `.ci/run` sets it) a missing tool throws instead: `.ci/run` installs them, so a skip there would
 * hide a broken install.
 */
export function missingInfra(...tools: Array<'nginx' | 'squid' | 'openssl' | 'strace' | 'pg_ctl'>): string | undefined {
  const missing = tools.filter((tool) => !findTool(tool, toolDirs(tool)));
  if (missing.length === 0) return undefined;
  const reason = `${missing.join(', ')} not installed (apt-get install --no-install-recommends ${missing.map((t) => PACKAGES[t]).join(' ')}); .ci/run installs them`;
  if (process.env.CI) throw new Error(`real-infrastructure tests need ${reason}`);
  console.warn(`skipping real-infrastructure tests: ${reason}`);
  return reason;
}

/** Runs a command to completion; rejects with its stderr when it fails. */
export function run(cmd: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { encoding: 'utf8', timeout: 20_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${cmd} ${args.join(' ')} failed: ${stderr.trim() || error.message}`));
      else resolve(stdout);
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** True when the tests run as root (CI does): nginx then names its workers' user, squid drops to one. */
export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** A private temporary folder for one fixture; `OPCLI_KEEP_INFRA=1` keeps it after stop, to debug. */
export function fixtureDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `opcli-infra-${prefix}-`));
}

/** Removes a fixture's folder unless `OPCLI_KEEP_INFRA=1`. */
export function removeFixtureDir(dir: string): void {
  if (process.env.OPCLI_KEEP_INFRA === '1') console.warn(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

/** A file's text, or '' when it does not exist (yet). */
export function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Polls `check` every 20 ms until it returns a value other than undefined, or fails after `timeoutMs` with `describe()`. */
export async function pollUntil<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs: number, describe: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(describe());
    await sleep(20);
  }
}

const live = new Set<ChildProcess>();

function killAllOnExit(): void {
  for (const child of live) killGroup(child, 'SIGKILL');
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {}
}

/**
 * A watchdog for a daemon (one spawnDaemon started, or a postmaster pg_ctl started): a shell that checks every second that the test process is still alive
 * and, once it is not (a worker killed with SIGKILL runs no exit handler), stops the daemon's
 * process group as stop() would and removes its folder. It ends by itself when the daemon does.
 */
export function watchDaemon(pid: number, dir: string): void {
  const remove = process.env.OPCLI_KEEP_INFRA === '1' ? '' : 'rm -rf "$1"';
  const script = `while kill -0 ${process.pid} 2>/dev/null && kill -0 ${pid} 2>/dev/null; do sleep 1; done
kill -0 ${pid} 2>/dev/null || exit 0
kill -TERM ${pid}; sleep 3; kill -KILL -${pid} 2>/dev/null; ${remove}`;
  spawn('/bin/sh', ['-c', script, 'watchdog', dir], { detached: true, stdio: 'ignore' }).unref();
}

export interface Daemon {
  pid: number;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** True once the process has exited. */
  hasExited(): boolean;
  /** The last 16 KiB of what it wrote to stdout and stderr. */
  output(): string;
  /** SIGTERM to the PID, then SIGKILL to its process group when it has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts a foreground server process in its own process group, killed on the test process's exit if still running. */
export function spawnDaemon(cmd: string, args: string[], cwd: string): Daemon {
  const child = spawn(cmd, args, { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString()).slice(-16_384);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  // The fixture's stop() ends it; a forgotten one must not keep the test process alive.
  child.unref();
  (child.stdout as unknown as { unref?: () => void } | null)?.unref?.();
  (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
  if (live.size === 0) process.on('exit', killAllOnExit);
  live.add(child);
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (done) return;
      done = true;
      live.delete(child);
      if (live.size === 0) process.off('exit', killAllOnExit);
      resolve({ code, signal });
    };
    child.on('exit', finish);
    child.on('error', (error) => {
      out += `\n${error.message}`;
      finish(null, null);
    });
  });
  if (!child.pid) throw new Error(`could not start ${cmd}`);
  const pid = child.pid;
  watchDaemon(pid, cwd);
  return {
    pid,
    exited,
    hasExited: () => done,
    output: () => out,
    async stop(graceMs = 3000) {
      if (!done) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {}
        const cancel = new AbortController();
        const timer = sleep(graceMs, 'timeout' as const, { signal: cancel.signal }).catch(() => 'cancelled' as const);
        if ((await Promise.race([exited, timer])) === 'timeout') killGroup(child, 'SIGKILL');
        cancel.abort();
        await exited;
      }
      // Helpers or workers the server left behind (squid's auth helpers, nginx's workers after a SIGKILL).
      killGroup(child, 'SIGKILL');
    },
  };
}
