/** How `opcli api` shows an answer: the head on stderr, the body on stdout. */
import type { Deps } from '../../cli/deps.js';
import { safeLine, safeText } from '../../text/safe.js';

/** Prints the status line and headers (--include) on stderr, made safe. */
export function printHead(deps: Deps, status: number, headers: Record<string, string>): void {
  deps.err(
    `HTTP ${status}\n${Object.entries(headers)
      .map(([k, v]) => `${safeLine(k)}: ${safeLine(v)}`)
      .join('\n')}\n\n`,
  );
}

/** Prints the body on stdout: JSON pretty-printed, text as it came (made safe on a terminal). */
export function printBody(deps: Deps, body: unknown): void {
  if (body === undefined || body === '') return;
  // Text bodies reach a terminal made safe; a pipe gets them exactly.
  if (typeof body === 'string')
    deps.out(deps.io.stdoutIsTTY ? `${safeText(body.endsWith('\n') ? body : `${body}\n`)}` : body.endsWith('\n') ? body : `${body}\n`);
  else deps.out(`${JSON.stringify(body, null, 2)}\n`);
}
