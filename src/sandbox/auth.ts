/** Bearer authentication and the scope each protected endpoint needs. */
import type { Ctx, Reply } from './http.js';
import { json } from './http.js';
import type { SandboxState } from './state.js';
import { checkAccessToken } from './tokens.js';

/**
 * The scope each protected endpoint needs. The spec names only read_orders, read_claims and
 * read_store and leaves the full list and the mapping "not shown", so the sandbox uses those three
 * names only (an invented name would teach users a scope the real service may refuse): each
 * endpoint needs the scope of the resource it touches (docs/spec-choices.md, "Scopes per endpoint").
 */
export const REQUIRED_SCOPES = {
  'GET /v1/orders': 'read_orders',
  'PUT /v1/orders/{sourceOrderId}': 'read_orders',
  'POST /v1/claims/offline': 'read_claims',
  'POST /v2/products/{productId}/children': 'read_store',
  'POST /storefront/gift-cards': 'read_store',
} as const;

export type ProtectedEndpoint = keyof typeof REQUIRED_SCOPES;

const DESCRIPTIONS = {
  missing: 'the request carries no bearer token (Authorization: Bearer <access token>)',
  unknown: 'the access token is not known',
  expired: 'the access token has expired; refresh it',
  revoked: 'the access token has been revoked',
} as const;

function unauthorized(reason: keyof typeof DESCRIPTIONS): Reply {
  return json(
    401,
    { error: 'invalid_token', error_description: DESCRIPTIONS[reason] },
    { 'www-authenticate': `Bearer error="invalid_token", error_description="${DESCRIPTIONS[reason]}"` },
  );
}

/** Checks the bearer token and its scope for an endpoint: null when allowed, else the 401/403 answer. */
export function authorize(state: SandboxState, ctx: Ctx, endpoint: ProtectedEndpoint): Reply | null {
  const header = ctx.headers.authorization ?? '';
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!m?.[1]) return unauthorized('missing');
  const check = checkAccessToken(state, m[1]);
  if (!check.ok) return unauthorized(check.reason);
  const scope = REQUIRED_SCOPES[endpoint];
  if (!check.scopes.includes(scope)) {
    return json(
      403,
      {
        error: 'insufficient_scope',
        message: `${endpoint} needs the scope ${scope}, which this access token does not carry`,
        required_scope: scope,
      },
      { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
    );
  }
  return null;
}
