/**
 * A one-line progress display on stderr for long work (orders list --all, the record lookup of
 * orders update). Only on a terminal: on a pipe or in a log it writes nothing. Redrawn at most every
 * `intervalMs` of the injected clock, and erased when done so the data and footer stay clean.
 */
import type { Deps } from '../deps.js';
import { safeLine } from './safe.js';

export { count } from './count.js';

export interface Progress {
  /**
   * Shows `text` (made safe), unless the last redraw was less than the interval ago; `force` draws
   * anyway. A function is called only when the line is drawn: nothing is formatted per page or row
   * for a pipe, or between redraws.
   */
  update(text: string | (() => string), force?: boolean): void;
  /** Erases the line. */
  done(): void;
}

const NONE: Progress = { update() {}, done() {} };

/** A progress line for `deps`' stderr, or one that does nothing when stderr is not a terminal. */
export function createProgress(deps: Deps, intervalMs = 100): Progress {
  if (!deps.io.stderrIsTTY) return NONE;
  let last = Number.NEGATIVE_INFINITY;
  let shown = false;
  const width = () => Math.max(20, ((deps.io.stderr as { columns?: number }).columns ?? 80) - 1);
  return {
    update(text, force = false) {
      const now = deps.now();
      if (!force && now - last < intervalMs) return;
      last = now;
      let line = safeLine(typeof text === 'function' ? text() : text);
      if (line.length > width()) line = `${line.slice(0, width() - 1)}…`;
      deps.io.stderr.write(`\r\x1b[2K${line}`);
      shown = true;
    },
    done() {
      if (shown) deps.io.stderr.write('\r\x1b[2K');
      shown = false;
    },
  };
}
