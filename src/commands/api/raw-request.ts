/**
 * `opcli api` below the verb: which paths carry the token, and the request the HTTP core sends (it
 * refuses a redirect rather than following it). The pages of `--paginate` are walked in
 * src/orders/pages.ts (orderPages). No prompt and no print: the verb shows each answer's head and body.
 */
import { UsageError } from '../../core/errors.js';
import type { HttpRequest } from '../../http/client.js';
import type { Method } from '../../http/retry.js';

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
 * The path as a server may read it, for deciding which endpoint it is: dot segments resolved
 * (`%2e` too), percent-encoding decoded, repeated slashes and `;parameters` dropped, case and a
 * trailing slash ignored, until nothing changes. `/V1//oauth/./%74oken/` is `/v1/oauth/token`.
 * Matching more loosely than a server would only ever withholds the token.
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
