/**
 * Progress of long work on stderr, in the run's style: a line redrawn on a terminal (erased when
 * done), plain sentences every 10 s in a log or the accessible mode, or nothing (`none`).
 */
import type { DisplayPorts } from '../core/ports.js';
import { terminalWidth } from '../core/output.js';
import { safeLine } from './safe.js';

export type ProgressStyle = 'line' | 'plain' | 'none';

/** A plain progress sentence is written at most this often (CI logs stay short). */
export const PLAIN_EVERY_MS = 10_000;

/** The style of this run: none when asked; plain when asked, in the accessible mode or when stderr is not a terminal; else the redrawn line. */
export function progressStyle(deps: DisplayPorts): ProgressStyle {
  const mode = deps.globals.progress ?? 'auto';
  if (mode === 'none') return 'none';
  if (mode === 'plain' || deps.globals.accessible || !deps.io.stderrIsTTY) return 'plain';
  return 'line';
}

export interface Progress {
  readonly style: ProgressStyle;
  /** Shows `text` (made safe) unless the last redraw was less than the interval ago (`force`: a line anyway); a function is called only when written. */
  update(text: string | (() => string), force?: boolean): void;
  /** Takes the redrawn line off the screen before other output is written (the next update draws it again). */
  clear(): void;
  /** Erases the redrawn line (a plain sentence stays: it is part of the log). */
  done(): void;
}

const NONE: Progress = { style: 'none', update() {}, clear() {}, done() {} };

/** The terminal's width for a redrawn line (core/output.ts `terminalWidth`), less one so the cursor stays on it. */
export function lineWidth(deps: DisplayPorts): number {
  return terminalWidth(deps, 'stderr') - 1;
}

/** Progress on `deps`' stderr in the run's style (see `progressStyle`); a redrawn line at most every `intervalMs`. */
export function createProgress(deps: DisplayPorts, intervalMs = 100): Progress {
  const style = progressStyle(deps);
  if (style === 'none') return NONE;
  if (style === 'plain') {
    // The first sentence after one interval: a short run prints only its summary.
    let last = deps.now();
    return {
      style,
      update(text) {
        const now = deps.now();
        if (now - last < PLAIN_EVERY_MS) return;
        last = now;
        deps.io.stderr.write(`${safeLine(typeof text === 'function' ? text() : text)}\n`);
      },
      clear() {},
      done() {},
    };
  }
  let last = Number.NEGATIVE_INFINITY;
  let shown = false;
  return {
    style,
    update(text, force = false) {
      const now = deps.now();
      if (!force && now - last < intervalMs) return;
      last = now;
      const width = lineWidth(deps);
      let line = safeLine(typeof text === 'function' ? text() : text);
      if (line.length > width) line = `${line.slice(0, width - 1)}…`;
      deps.io.stderr.write(`\r\x1b[2K${line}`);
      shown = true;
    },
    clear() {
      if (shown) deps.io.stderr.write('\r\x1b[2K');
      shown = false;
      // The next update redraws at once.
      last = Number.NEGATIVE_INFINITY;
    },
    done() {
      if (shown) deps.io.stderr.write('\r\x1b[2K');
      shown = false;
    },
  };
}
