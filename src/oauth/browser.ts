/**
 * Opening the consent page. Whether a browser can be opened is decided before anything is spawned
 * (SSH, a Linux session without a display), BROWSER is honoured as gh honours it (its own spawn, in
 * `childEnv`'s environment), and the platform's default opener is started through `open` (xdg-open,
 * macOS open, PowerShell on Windows and WSL), which inherits the process environment the entry has
 * cleared of opcli's secrets.
 * A command that cannot be started is a rejected promise, never an unhandled 'error' event.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import open from 'open';
import { isWsl as underWsl, powerShellPath } from 'wsl-utils';
import { childEnv } from '../core/child-env.js';

/** No browser will be tried; `reason` says why, for the user. */
export class BrowserUnavailableError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'BrowserUnavailableError';
  }
}

/**
 * How the link would be opened: the user's BROWSER command and its arguments, the platform's
 * default opener (xdg-open, macOS open, PowerShell), or why not at all.
 */
export type BrowserPlan = { command: string; args: string[] } | { platformDefault: true } | { unavailable: string };

/**
 * Decides how to open `url`. BROWSER (a command, with `%s` standing for the URL, else the URL is
 * appended) wins everywhere, SSH included, because the user chose it. Otherwise: over SSH
 * (SSH_CONNECTION, SSH_TTY, SSH_CLIENT) a browser would open on the remote machine, if at all; on
 * Linux and the BSDs without DISPLAY or WAYLAND_DISPLAY there is no desktop (WSL excepted: Windows
 * has one).
 */
export function browserPlan(url: string, env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): BrowserPlan {
  const browser = env.BROWSER?.trim();
  if (browser) {
    const words = splitCommand(browser);
    const [command, ...rest] = words;
    if (!command) return { unavailable: 'BROWSER is empty' };
    const hasSlot = rest.some((w) => w.includes('%s'));
    return { command, args: hasSlot ? rest.map((w) => w.replaceAll('%s', url)) : [...rest, url] };
  }
  if (env.SSH_CONNECTION || env.SSH_TTY || env.SSH_CLIENT) return { unavailable: 'this is an SSH session, so a browser here could not reach you' };
  if (platform === 'darwin' || platform === 'win32' || isWsl(env, platform)) return { platformDefault: true };
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return { unavailable: 'there is no desktop session (neither DISPLAY nor WAYLAND_DISPLAY is set)' };
  return { platformDefault: true };
}

/**
 * The program `open` will start for the platform default, found the way `open` finds it: macOS
 * `open` and `xdg-open` on PATH, PowerShell at its fixed path on Windows and under WSL (wsl-utils,
 * the module `open` itself asks). `path` is left out when it is missing or not executable.
 */
async function defaultLauncher(platform: NodeJS.Platform): Promise<{ name: string; path?: string }> {
  if (platform === 'win32' || underWsl) {
    const path = await powerShellPath();
    return { name: path, path: isExecutable(path) ? path : undefined };
  }
  const name = platform === 'darwin' ? 'open' : 'xdg-open';
  // `open` spawns with no env of its own, so the child searches this process's PATH. (Run from
  // node_modules rather than the bundle, `open` prefers the xdg-open script it ships; requiring one
  // on PATH there too only makes the check stricter.)
  return { name, path: onPath(name, process.env.PATH) };
}

function isExecutable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` on `pathList`, as the shell would find it. */
function onPath(name: string, pathList: string | undefined): string | undefined {
  if (isAbsolute(name)) return isExecutable(name) ? name : undefined;
  for (const dir of (pathList ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isWsl(env: Record<string, string | undefined>, platform: NodeJS.Platform): boolean {
  if (platform !== 'linux') return false;
  if (env.WSL_DISTRO_NAME || env.WSL_INTEROP) return true;
  try {
    return /microsoft/i.test(readFileSync('/proc/version', 'utf8'));
  } catch {
    return false;
  }
}

/** Splits a command line on spaces, keeping quoted words ("…" or '…') together. */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const m of line.matchAll(re)) words.push(m[1] ?? m[2] ?? m[3] ?? '');
  return words;
}

/**
 * Opens `url` as `browserPlan` says. Resolves once the command has started (it is left running,
 * detached); rejects with BrowserUnavailableError when no browser is to be tried or the command
 * cannot be started. `onExit` hears a command that exits with a failure later.
 */
export async function openInBrowser(url: string, env: Record<string, string | undefined>, onExit?: (message: string) => void): Promise<void> {
  const plan = browserPlan(url, env);
  if ('unavailable' in plan) throw new BrowserUnavailableError(plan.unavailable);
  if ('command' in plan) return spawnBrowser(plan.command, plan.args, env, { onExit });
  const launcher = await defaultLauncher(process.platform);
  // `open` spawns and hands the child back only after its own awaits; a failed spawn reports its
  // 'error' on the next tick, possibly before anyone could listen, and an 'error' nobody hears
  // crashes the process (issue 12: "spawn xdg-open ENOENT"). So the launcher must be known to
  // exist and be executable before `open` is called. `open` passes the child this process's
  // environment, which the entry (src/cli/main.ts) has already cleared of opcli's secrets (childEnv).
  if (!launcher.path) throw new BrowserUnavailableError(`${launcher.name} was not found`);
  const child = await open(url);
  // A child that did start has a pid at once; one that did not never gets one (its 'error' is then
  // heard here and dropped: the rejection below says it).
  const started = child.pid !== undefined;
  child.on('error', (error) => {
    if (started) onExit?.(`${launcher.name} failed (${error.message})`);
  });
  if (!started) throw new BrowserUnavailableError(`${launcher.name} could not be started`);
  child.once('exit', (code) => {
    if (code) onExit?.(`${launcher.name} exited with code ${code}`);
  });
}

/**
 * Starts a browser command with the link (gh's semantics for BROWSER): detached, output ignored,
 * in `childEnv(env)`. `name` is how messages call it (default: the command).
 */
function spawnBrowser(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  options: { onExit?: (message: string) => void; name?: string },
): Promise<void> {
  const { onExit, name = command } = options;
  return new Promise((resolve, reject) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, args, { stdio: 'ignore', detached: true, env: childEnv(env) });
    } catch (error) {
      reject(error);
      return;
    }
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(new BrowserUnavailableError(error.code === 'ENOENT' ? `${name} was not found` : `${name} could not be started (${error.code ?? error.message})`));
    });
    child.once('spawn', () => {
      child.once('exit', (code) => {
        if (code) onExit?.(`${name} exited with code ${code}`);
      });
      child.unref();
      resolve();
    });
  });
}
