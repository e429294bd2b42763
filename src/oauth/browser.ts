/**
 * Opening the consent page: decided before anything is spawned (SSH, no display), BROWSER honoured as
 * gh does, else the platform's opener through `open`. A command that cannot start is a rejected
 * promise, never an unhandled 'error' event.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import open from 'open';
import { isWsl as underWsl, powerShellPath } from 'wsl-utils';
import { childEnv } from '../core/child-env.js';

/** How the link would be opened: the BROWSER command, the platform's default opener, or why not at all. */
export type BrowserPlan = { command: string; args: string[] } | { platformDefault: true } | { unavailable: string };

/**
 * BROWSER (`%s` stands for the URL, else it is appended) wins everywhere, SSH included: the user
 * chose it. Over SSH a browser would open on the remote machine, if at all.
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
  // Linux and the BSDs need a display; WSL has Windows's desktop (its environment says so, else the kernel: wsl-utils).
  const wsl = platform === 'linux' && (env.WSL_DISTRO_NAME || env.WSL_INTEROP || underWsl);
  if (platform !== 'darwin' && platform !== 'win32' && !wsl && !env.DISPLAY && !env.WAYLAND_DISPLAY) {
    return { unavailable: 'there is no desktop session (neither DISPLAY nor WAYLAND_DISPLAY is set)' };
  }
  return { platformDefault: true };
}

/** The program `open` will start, found as `open` finds it (PowerShell through wsl-utils, as `open` asks); no `path` when missing. */
async function defaultLauncher(): Promise<{ name: string; path?: string }> {
  if (process.platform === 'win32' || underWsl) {
    const path = await powerShellPath();
    return { name: path, path: isExecutable(path) ? path : undefined };
  }
  const name = process.platform === 'darwin' ? 'open' : 'xdg-open';
  // `open` spawns with no env of its own, so the child searches this process's PATH.
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
  for (const dir of (pathList ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** Splits a command line on spaces, keeping quoted words ("…" or '…') together. */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const m of line.matchAll(re)) words.push(m[1] ?? m[2] ?? m[3] ?? '');
  return words;
}

/** Opens `url` as `browserPlan` says; resolves once the command has started. `onExit` hears a later failure. */
export async function openInBrowser(url: string, env: Record<string, string | undefined>, onExit?: (message: string) => void): Promise<void> {
  const plan = browserPlan(url, env);
  if ('unavailable' in plan) throw new Error(plan.unavailable);
  if ('command' in plan) return spawnBrowser(plan.command, plan.args, env, onExit);
  const launcher = await defaultLauncher();
  // `open` hands the child back after its own awaits, so a failed spawn's 'error' may fire before
  // anyone listens and crash the process: the launcher must be known to exist first. The child gets
  // this process's environment, which the entry (src/cli/main.ts) has cleared of opcli's secrets.
  if (!launcher.path) throw new Error(`${launcher.name} was not found`);
  const child = await open(url);
  // A child that did not start has no pid (its 'error' is dropped: the rejection below says it).
  const started = child.pid !== undefined;
  child.on('error', (error) => {
    if (started) onExit?.(`${launcher.name} failed (${error.message})`);
  });
  if (!started) throw new Error(`${launcher.name} could not be started`);
  child.once('exit', (code) => {
    if (code) onExit?.(`${launcher.name} exited with code ${code}`);
  });
}

/** Starts a BROWSER command with the link (gh's semantics): detached, output ignored, in `childEnv(env)`. */
function spawnBrowser(command: string, args: string[], env: Record<string, string | undefined>, onExit?: (message: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, args, { stdio: 'ignore', detached: true, env: childEnv(env) });
    } catch (error) {
      reject(error);
      return;
    }
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(new Error(error.code === 'ENOENT' ? `${command} was not found` : `${command} could not be started (${error.code ?? error.message})`));
    });
    child.once('spawn', () => {
      child.once('exit', (code) => {
        if (code) onExit?.(`${command} exited with code ${code}`);
      });
      child.unref();
      resolve();
    });
  });
}
