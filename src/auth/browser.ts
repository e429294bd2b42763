/**
 * Opening the consent page. Whether a browser can be opened is decided before anything is spawned
 * (SSH, a Linux session without a display), BROWSER is honoured as gh honours it, and a command that
 * cannot be started is a rejected promise, never an unhandled 'error' event.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** No browser will be tried; `reason` says why, for the user. */
export class BrowserUnavailableError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'BrowserUnavailableError';
  }
}

/** How the link would be opened: a command and its arguments, or why not at all. */
export type BrowserPlan = { command: string; args: string[] } | { unavailable: string };

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
  if (platform === 'darwin') return { command: 'open', args: [url] };
  if (platform === 'win32') return { command: 'rundll32', args: ['url.dll,FileProtocolHandler', url] };
  if (isWsl(env, platform)) return { command: 'wslview', args: [url] };
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return { unavailable: 'there is no desktop session (neither DISPLAY nor WAYLAND_DISPLAY is set)' };
  return { command: 'xdg-open', args: [url] };
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
 * detached); rejects with BrowserUnavailableError when no browser is to be tried, or with the spawn
 * error (ENOENT, EACCES). `onExit` hears a command that exits with a failure later.
 */
export function openInBrowser(url: string, env: Record<string, string | undefined>, onExit?: (message: string) => void): Promise<void> {
  const plan = browserPlan(url, env);
  if ('unavailable' in plan) return Promise.reject(new BrowserUnavailableError(plan.unavailable));
  return new Promise((resolve, reject) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(plan.command, plan.args, { stdio: 'ignore', detached: true, env: env as NodeJS.ProcessEnv });
    } catch (error) {
      reject(error);
      return;
    }
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(new BrowserUnavailableError(error.code === 'ENOENT' ? `${plan.command} was not found` : `${plan.command} could not be started (${error.code ?? error.message})`));
    });
    child.once('spawn', () => {
      child.once('exit', (code) => {
        if (code) onExit?.(`${plan.command} exited with code ${code}`);
      });
      child.unref();
      resolve();
    });
  });
}
