/** The path argument of `opcli api`: a path below the profile's base URL, and nothing that could leave it. */
import { UsageError } from '../../errors.js';
import type { HttpClient } from '../../http/client.js';
import { textProblem } from '../../text/flag-text.js';

const PATH_HINT = "Pass a path below the profile's base URL, e.g. opcli api GET /v1/orders (percent-encode spaces as %20).";

/**
 * Refuses a path that is not one: empty or garbled, a full or protocol-relative URL (`//host/x`,
 * whose host a URL parser would take), or one with spaces. The bearer token goes where the path
 * leads, so anything that could name another host stops here.
 */
export function checkPath(path: string): void {
  const problem = textProblem(path);
  if (problem) throw new UsageError(`The path argument ${problem}.`, PATH_HINT);
  if (/^[a-z][a-z0-9+.-]*:/i.test(path)) throw new UsageError(`The path argument "${path}" is a URL, not a path below the base URL.`, PATH_HINT);
  if (/^[/\\]{2}|^\\/.test(path)) throw new UsageError(`The path argument "${path}" starts like a URL of another host (//host/...).`, PATH_HINT);
  if (/\s/.test(path)) throw new UsageError(`The path argument "${path}" holds a space.`, PATH_HINT);
}

/** Refuses a path that resolves outside the base URL (`/../`, `%2e%2e`): the token is for the service alone. */
export function refuseLeavingBase(http: HttpClient, path: string): void {
  const base = http.baseUrl;
  if (!base) return; // resolve() says what to configure
  const root = new URL(`${base.replace(/\/+$/, '')}/`);
  const target = http.resolve(path);
  if (target.origin === root.origin && `${target.pathname}/`.startsWith(root.pathname)) return;
  throw new UsageError(
    `The path argument "${path}" leads to ${target.origin}${target.pathname}, outside the profile's base URL ${root.origin}${root.pathname}.`,
    PATH_HINT,
  );
}
