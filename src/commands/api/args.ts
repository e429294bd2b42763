/**
 * The arguments of `opcli api`: a method it knows, `--query` pairs, and a path below the profile's
 * base URL with nothing that could leave it.
 */
import { UsageError } from '../../errors.js';
import type { HttpClient } from '../../http/client.js';
import type { Method } from '../../http/retry.js';
import { textProblem } from '../../text/flag-text.js';

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;

/** The method in capitals, or a usage error listing the known ones. */
export function parseMethod(method: string): Method {
  const upper = method.toUpperCase();
  if (!(METHODS as readonly string[]).includes(upper)) throw new UsageError(`Unknown method "${method}".`, `Use one of ${METHODS.join(', ')}.`);
  return upper as Method;
}

/** Adds one `--query key=value` to the pairs before it. */
export function collectQuery(value: string, prev: [string, string][] = []): [string, string][] {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new UsageError(`--query expects key=value, got "${value}".`, 'For example: --query size=50 --query cursor=b2E6NTA');
  return [...prev, [value.slice(0, eq), value.slice(eq + 1)]];
}

const PATH_HINT = "Pass a path below the profile's base URL, e.g. opcli api GET /v1/orders (percent-encode spaces as %20).";

/**
 * Refuses a path that is not one: empty or garbled, a full or protocol-relative URL (`//host/x`,
 * whose host a URL parser would take), or one with spaces. The bearer token goes where the path
 * leads, so anything that could name another host stops here. Answers it with a leading slash.
 */
export function parsePath(path: string): string {
  const problem = textProblem(path);
  if (problem) throw new UsageError(`The path argument ${problem}.`, PATH_HINT);
  if (/^[a-z][a-z0-9+.-]*:/i.test(path)) throw new UsageError(`The path argument "${path}" is a URL, not a path below the base URL.`, PATH_HINT);
  if (/^[/\\]{2}|^\\/.test(path)) throw new UsageError(`The path argument "${path}" starts like a URL of another host (//host/...).`, PATH_HINT);
  if (/\s/.test(path)) throw new UsageError(`The path argument "${path}" holds a space.`, PATH_HINT);
  // A fragment is never sent, yet what the server and opcli take for the path could differ on it.
  if (path.includes('#'))
    throw new UsageError(
      `The path argument "${path}" holds a fragment (#…), which is not part of a request.`,
      'Remove the # and what follows it; percent-encode a literal # as %23.',
    );
  return path.startsWith('/') ? path : `/${path}`;
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
