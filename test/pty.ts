/**
 * Runs the built binary in a real pseudo-terminal (util-linux `script`) at a given width, typing each
 * answer when the screen shows its question: how a person at a terminal meets prompts, progress
 * lines and tables.
 */
import { spawn, spawnSync } from 'node:child_process';
import { BIN } from './helpers.js';

/** Whether util-linux `script` is installed (pty tests are skipped without it). */
export const hasScript = spawnSync('script', ['--version']).status === 0;

/** What the pty showed: `raw` as written (escapes kept), `screen` without escape sequences. */
export interface PtyResult {
  code: number | null;
  raw: string;
  screen: string;
}

/** Runs `argv` in a pty `cols` wide; each time the screen shows an expected text, types its answer. */
export function inPty(argv: string[], environment: Record<string, string>, answers: [string, string][] = [], cols = 80): Promise<PtyResult> {
  return new Promise((resolve) => {
    const command = ['stty', 'cols', String(cols), 'rows', '40', ';', ...[process.execPath, BIN, ...argv].map((a) => `'${a.replace(/'/g, "'\\''")}'`)].join(
      ' ',
    );
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm', ...environment } });
    let raw = '';
    let next = 0;
    let seenUpTo = 0;
    child.stdout.on('data', (chunk) => {
      raw += chunk.toString();
      const pending = answers[next];
      if (pending && raw.indexOf(pending[0], seenUpTo) >= 0) {
        seenUpTo = raw.length;
        next++;
        child.stdin.write(`${pending[1]}\r`);
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, raw, screen: raw.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '') });
    });
  });
}
