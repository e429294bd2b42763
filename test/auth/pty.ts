/** The built binary in a pseudo-terminal (util-linux `script`), so prompts and raw-mode keys behave as for a person. */
import { spawn, spawnSync } from 'node:child_process';
import { BIN } from '../helpers.js';

/** Whether `script` from util-linux can give a child a pseudo-terminal here. */
export const havePty = spawnSync('script', ['-qfec', 'true', '/dev/null'], { stdio: 'ignore' }).status === 0;

export interface PtyRun {
  /** Everything the terminal showed so far (stdout and stderr together, as on a screen). */
  output(): string;
  /** Types into the terminal. */
  write(text: string): void;
  /** Resolves once the screen shows `pattern` (fails the test on exit or after `ms`). */
  waitFor(pattern: string | RegExp, ms?: number): Promise<RegExpMatchArray>;
  /** The exit code. */
  exit: Promise<number | null>;
}

const shellQuote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** Runs `opcli argv` in a pseudo-terminal with exactly `env` (plus a dumb TERM). */
export function runInPty(argv: string[], env: Record<string, string>): PtyRun {
  const command = [process.execPath, BIN, ...argv].map(shellQuote).join(' ');
  const child = spawn('/usr/bin/script', ['-qfec', command, '/dev/null'], {
    env: { TERM: 'dumb', SHELL: '/bin/sh', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  const listeners = new Set<() => void>();
  const onData = (c: Buffer) => {
    screen += c.toString();
    for (const l of listeners) l();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exit = new Promise<number | null>((resolve) => {
    child.on('close', (code) => {
      for (const l of listeners) l();
      resolve(code);
    });
  });
  let exited = false;
  void exit.then(() => {
    exited = true;
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  void exit.then(() => clearTimeout(killer));
  return {
    output: () => screen,
    write: (text) => child.stdin.write(text),
    exit,
    waitFor: (pattern, ms = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const m = typeof pattern === 'string' ? (screen.includes(pattern) ? ([pattern] as RegExpMatchArray) : null) : screen.match(pattern);
          if (m) {
            done();
            resolve(m);
          } else if (exited) {
            done();
            reject(new Error(`exited before showing ${pattern}; screen:\n${screen}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no ${pattern} within ${ms} ms; screen:\n${screen}`));
        }, ms);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      }),
  };
}
