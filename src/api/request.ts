/**
 * `opcli api` below the verb: which paths carry the token, the --data text read as JSON, and one
 * request sent, with a redirect refused rather than followed. The pages of `--paginate` are in
 * paginate.ts. No prompt and no print: the verb shows each answer's head and body.
 */
import { OpcliError, UsageError } from '../errors.js';
import type { HttpClient } from '../http/client.js';
import type { Method } from '../http/retry.js';
import { jsonProblem } from '../text/excerpt.js';

/** Endpoints whose requests carry no Authorization header (spec, Authentication rule 6). */
const UNAUTHENTICATED = ['/v1/oauth/token', '/v1/oauth/revoke', '/v1/oauth/session/verify'];

/** A request as `opcli api` sends it. */
export interface ApiRequest {
  method: Method;
  /** As given (below the base URL), with any query string. */
  path: string;
  /** The path without its query string: what errors name and the checks compare. */
  pathOnly: string;
  query: Record<string, string>;
  json?: unknown;
  /** Whether the bearer token goes with it. */
  auth: boolean;
}

/** What the verb asked for. */
export interface ApiRequestInit {
  method: Method;
  path: string;
  query: [string, string][];
  /** False with --no-auth; paths of endpoints 1-3 never carry a token. */
  auth: boolean;
  paginate: boolean;
}

/** The request the verb's options describe: no token where the spec says none, --paginate only on the order list. */
export function apiRequest(init: ApiRequestInit, json: unknown): ApiRequest {
  const pathOnly = init.path.split('?')[0] ?? init.path;
  const endpoint = pathOnly.replace(/\/+$/, '');
  if (init.paginate && (init.method !== 'GET' || endpoint !== '/v1/orders')) throw new UsageError('--paginate follows the cursors of GET /v1/orders only.');
  return {
    method: init.method,
    path: init.path,
    pathOnly,
    query: Object.fromEntries(init.query),
    json,
    auth: init.auth && !UNAUTHENTICATED.includes(endpoint),
  };
}

/** The text of --data as JSON; `source` names where it came from (--data, a file, standard input). */
export function parseJsonBody(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${source} is not valid JSON: ${jsonProblem(error, text)}`, 'Pass JSON inline, as @file.json, or - for standard input.');
  }
}

/** A 3xx answer, refused: it carries the status and headers so the verb can show them. */
export class RedirectRefusedError extends OpcliError {
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(method: string, path: string, res: { status: number; headers: Record<string, string> }) {
    const location = res.headers.location;
    super(`${method} ${path} answered ${res.status} (a redirect${location ? ` to ${location}` : ', no Location header'}), not a success.`, {
      hint: 'opcli does not follow redirects. Check the base URL (https, host, no extra path) with `opcli config get baseUrl`, or call the Location path directly.',
      details: { status: res.status, location: location ?? null },
    });
    this.status = res.status;
    this.headers = res.headers;
  }
}

/**
 * A 3xx is not success: opcli does not follow redirects (the bearer token must not travel to
 * another host), so the answer is an error with the status and where it pointed.
 */
export function refuseRedirect(method: string, path: string, res: { status: number; headers: Record<string, string> }): void {
  if (res.status >= 300 && res.status < 400) throw new RedirectRefusedError(method, path, res);
}

/** Sends one request. A non-2xx answer throws ApiError and a 3xx RedirectRefusedError, each with the answer's head. */
export async function sendRequest(
  http: HttpClient,
  req: ApiRequest,
  signal: AbortSignal,
): Promise<{ status: number; headers: Record<string, string>; body: unknown }> {
  const res = await http.request({ method: req.method, url: req.path, query: req.query, json: req.json, auth: req.auth, signal });
  refuseRedirect(req.method, req.pathOnly, res);
  return res;
}
