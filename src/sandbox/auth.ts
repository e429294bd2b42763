/** Bearer authentication and the scope each protected endpoint needs. */
import type { Ctx, Reply } from './http.js';
import { json } from './http.js';
import type { SandboxState } from './state.js';
import { checkAccessToken } from './tokens.js';

/**
 * The scope each protected endpoint needs. The spec leaves this "not shown"; this table is the
 * sandbox's choice, and clients can read it to explain a 403.
 */
export const REQUIRED_SCOPES = {
  'GET /v1/orders': 'read_orders',
  'PUT /v1/orders/{sourceOrderId}': 'write_orders',
  'POST /v1/claims/offline': 'write_claims',
  'POST /v2/products/{productId}/children': 'write_products',
  'POST /storefront/gift-cards': 'write_gift_cards',
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
