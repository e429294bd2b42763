/** The arguments of `opcli api` checked (nothing may leave the base URL), and the request they describe. */
import { UsageError } from '../../core/errors.js';
import type { HttpClient, HttpRequest } from '../../http/client.js';
import type { Method } from '../../http/retry.js';
import { checkText } from '../../core/flags.js';
import type { Deps } from '../../cli/deps.js';
import { SECRET_KEYS } from '../../core/redact.js';
import { warnSecretArgument } from '../secret-input.js';

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;

/** The method in capitals, or a usage error listing the known ones. */
export function parseMethod(method: string): Method {
  const upper = method.toUpperCase();
  if (!(METHODS as readonly string[]).includes(upper)) throw new UsageError(`Unknown method "${method}".`, `Use one of ${METHODS.join(', ')}.`);
  return upper as Method;
}

/** The method and path of `opcli api [METHOD] <path>`; no method is GET, or POST with --data (gh api's rule); a method given twice must agree. */
export function methodAndPath(
  first: string | undefined,
  second: string | undefined,
  flag: string | undefined,
  hasBody: boolean,
): { method: Method; path: string } {
  if (first === undefined) throw new UsageError('opcli api needs a path below the base URL.', 'For example: opcli api /v1/orders --query size=5');
  if (second !== undefined && first.includes('/'))
    throw new UsageError(
      `opcli api takes one path, after a method or alone; "${first}" and "${second}" were given.`,
      'For example: opcli api /v1/orders, or opcli api PUT /v1/orders/ord_000001 --data @order.json.',
    );
  const argument = second === undefined ? undefined : parseMethod(first);
  const option = flag === undefined ? undefined : parseMethod(flag);
  if (argument && option && argument !== option)
    throw new UsageError(`Two methods were given: ${argument} as an argument and ${option} with --method.`, 'Give the method once.');
  return { method: argument ?? option ?? (hasBody ? 'POST' : 'GET'), path: second ?? first };
}

/** Adds one `--query key=value` to the pairs before it. */
export function collectQuery(value: string, prev: [string, string][] = []): [string, string][] {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new UsageError(`--query expects key=value, got "${value}".`, 'For example: --query size=50 --query cursor=b2E6NTA');
  return [...prev, [value.slice(0, eq), value.slice(eq + 1)]];
}

/** Header names `-H` may not set: the credential and the request's framing are opcli's to write. */
const RESERVED_HEADERS = new Map<string, string>(
  Object.entries({
    authorization: "opcli sends the profile's bearer token; log in to the account you mean (or pick it with --profile), or pass --no-auth to send none.",
    'proxy-authorization': "a proxy's credentials go in the proxy setting or HTTPS_PROXY (https://user:password@host:port).",
    host: "the host comes from the profile's base URL; set base-url (or OPCLI_BASE_URL) to reach another server.",
    'content-length': 'opcli measures the body it sends.',
    'transfer-encoding': 'opcli frames the body it sends.',
    connection: 'opcli manages its connections.',
  }),
);

/** A header name as HTTP defines it (a token: letters, digits and !#$%&'*+-.^_`|~). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Header names whose values are credentials: masked in --verbose and in every message, warned about when typed (Idempotency-Key is not one). */
export const SECRET_HEADER = /^(?!idempotency-key$).*(?:auth|token|secret|key|cookie|password|session|signature|credential)/i;

/** One `-H` header: a lower-case name, its value, and `file` when it was read from `-H @FILE`. */
export type HeaderPair = [name: string, value: string, from?: 'file'];

/** Adds one `-H 'Name: value'`, or every line of the file `-H @FILE` names (curl's form, blank lines skipped). */
export function collectHeader(value: string, prev: HeaderPair[] = [], readFile?: (path: string) => string): HeaderPair[] {
  if (!value.startsWith('@') || !readFile) return [...prev, headerPair(value)];
  const lines = readFile(value.slice(1))
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '');
  return [...prev, ...lines.map((line): HeaderPair => [...headerPair(line), 'file'])];
}

/** One `Name: value` as a lower-case name and a value; refuses a bad name, a control character (CR or LF would add a header), opcli's own headers. */
function headerPair(value: string): [string, string] {
  const colon = value.indexOf(':');
  const example = "For example: -H 'X-Request-Id: 42'";
  if (colon <= 0) throw new UsageError(`--header expects 'Name: value', got ${quoteFlag(value)}.`, example);
  const name = value.slice(0, colon).trim();
  const text = value.slice(colon + 1).trim();
  if (/[\u0000-\u001f\u007f]/.test(value))
    throw new UsageError(`--header ${quoteFlag(name)} holds a control character (a CR or LF would add a header of its own); nothing was sent.`, example);
  if (!HEADER_NAME.test(name)) throw new UsageError(`--header: ${quoteFlag(name)} is not a header name (letters, digits and - only, no spaces).`, example);
  const reason = RESERVED_HEADERS.get(name.toLowerCase());
  if (reason) throw new UsageError(`--header cannot set ${name}: ${reason}`);
  return [name.toLowerCase(), text];
}

/** The `-H` pairs as headers, a repeated name's values joined with ", "; no prototype (`__proto__` is a header name like any other). */
export function headerRecord(pairs: HeaderPair[]): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [name, value] of pairs) out[name] = out[name] === undefined ? value : `${out[name]}, ${value}`;
  return out;
}

/** A flag's value quoted for a message, control characters shown as escapes. */
function quoteFlag(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

const PATH_HINT = "Pass a path below the profile's base URL, e.g. opcli api /v1/orders (percent-encode spaces as %20).";

/** Refuses a path that is not one (garbled, a URL, `//host/x`, spaces): the bearer token goes where it leads. Answers it with a leading slash. */
export function parsePath(path: string): string {
  checkText('The path argument', path, PATH_HINT);
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

// Secrets typed into arguments are sent as given, masked wherever opcli prints, and warned about:
// other users see arguments in `ps` (docs/http.md#secrets-in-arguments).

/** What `opcli api` was given on its command line. */
export interface TypedArguments {
  /** `-H` headers typed as arguments (not read from a file), by lower-case name. */
  headers: [string, string][];
  query: [string, string][];
  /** The parsed --data body, when it was typed inline. */
  inlineData?: unknown;
}

/** The keys of a parsed body, at any depth, whose names say secret (with their values). */
function secretKeys(body: unknown): [string, string][] {
  const found: [string, string][] = [];
  // The body was checked for depth when it was parsed (src/input/data.ts): a bounded walk.
  const visit = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (SECRET_KEYS.has(k.toLowerCase()) && typeof v === 'string' && v !== '') found.push([k, v]);
        else visit(v);
      }
    }
  };
  visit(body);
  return found;
}

/** Masks every secret typed as an argument in what opcli prints, and warns once for each on stderr (the value never shown). */
export function warnTypedSecrets(deps: Pick<Deps, 'err' | 'redactor'>, typed: TypedArguments): void {
  for (const [name, value] of typed.headers) {
    if (!SECRET_HEADER.test(name)) continue;
    deps.redactor.add(value);
    warnSecretArgument(deps, `the ${name} header`, '`-H @FILE` (one `Name: value` a line, as curl reads it)');
  }
  for (const [key, value] of typed.query) {
    if (!SECRET_KEYS.has(key.toLowerCase()) || value === '') continue;
    deps.redactor.add(value);
    warnSecretArgument(
      deps,
      `the ${key} query parameter`,
      'a header from a file (`-H @FILE`) where the server takes one; a query string also reaches server logs',
    );
  }
  for (const [key, value] of secretKeys(typed.inlineData)) {
    deps.redactor.add(value);
    warnSecretArgument(deps, `"${key}" in --data`, '`--data @FILE` or `--data -` (standard input)');
  }
}

/** Endpoints whose requests carry no Authorization header (spec, Authentication rule 6). */
const UNAUTHENTICATED = ['/v1/oauth/token', '/v1/oauth/revoke', '/v1/oauth/session/verify'];

/** A request as `opcli api` sends it, with the path without its query string (what errors name and the checks compare). */
export type ApiRequest = HttpRequest & { pathOnly: string; query: Record<string, string>; headers: Record<string, string> };

/** What the verb asked for. */
export interface ApiRequestInit {
  method: Method;
  path: string;
  query: [string, string][];
  /** False with --no-auth; paths of endpoints 1-3 never carry a token. */
  auth: boolean;
  paginate: boolean;
  /** `-H` headers, by lower-case name (checked by the verb). */
  headers?: Record<string, string>;
}

/**
 * The path as a server may read it, to decide which endpoint it is (`/V1//oauth/./%74oken/` is
 * `/v1/oauth/token`): matching more loosely than a server would only ever withholds the token.
 */
// CHOICE (docs/spec-choices.md#paths-that-take-no-token): case is ignored, the safe side of a server that ignores it.
export function endpointOf(path: string): string {
  let p = path.split('?')[0] ?? path;
  for (let round = 0; round < 8; round++) {
    const before = p;
    p = p.replace(/\\/g, '/').replace(/\/{2,}/g, '/');
    // The URL parser resolves `.`, `..`, `%2e` and `.%2E` segments as a server does.
    p = new URL(p.replace(/[?#]/g, '_'), 'http://opcli.invalid').pathname;
    try {
      p = decodeURIComponent(p);
    } catch {
      // A lone `%` stays as it is.
    }
    p = p.replace(/;[^/]*/g, '');
    if (p === before) break;
  }
  return p.toLowerCase().replace(/\/+$/, '') || '/';
}

/** The request the verb's options describe: no token where the spec says none, --paginate only on the order list. */
export function apiRequest(init: ApiRequestInit, json: unknown): ApiRequest {
  const pathOnly = init.path.split('?')[0] ?? init.path;
  const endpoint = endpointOf(init.path);
  if (init.paginate && (init.method !== 'GET' || endpoint !== '/v1/orders')) throw new UsageError('--paginate follows the cursors of GET /v1/orders only.');
  return {
    method: init.method,
    url: init.path,
    pathOnly,
    query: Object.fromEntries(init.query),
    json,
    auth: init.auth && !UNAUTHENTICATED.includes(endpoint),
    // The token, revoke and session-verify endpoints answer small bodies.
    smallAnswer: UNAUTHENTICATED.includes(endpoint),
    headers: init.headers ?? {},
  };
}
