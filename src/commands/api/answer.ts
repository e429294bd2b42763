/** How `opcli api` shows an answer: the head on stderr, the body on stdout, a redirect as an error. */
import type { Deps } from '../../deps.js';
import { OpcliError } from '../../errors.js';
import { safeLine, safeText } from '../../text/safe.js';

/**
 * A 3xx is not success: opcli does not follow redirects (the bearer token must not travel to
 * another host), so the answer is an error with the status and where it pointed.
 */
export function refuseRedirect(method: string, path: string, res: { status: number; headers: Record<string, string> }): void {
  if (res.status < 300 || res.status >= 400) return;
  const location = res.headers.location;
  throw new OpcliError(`${method} ${path} answered ${res.status} (a redirect${location ? ` to ${location}` : ', no Location header'}), not a success.`, {
    hint: 'opcli does not follow redirects. Check the base URL (https, host, no extra path) with `opcli config get baseUrl`, or call the Location path directly.',
    details: { status: res.status, location: location ?? null },
  });
}

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
