/** Access and refresh tokens: issue, rotate, revoke by family, check; and the bearer token and scope each protected endpoint needs. */
import { randomBytes } from 'node:crypto';
import { CREDENTIAL_PREFIXES, type TokenResponse } from '../schemas.js';
import type { Ctx, Reply } from './http.js';
import { json } from './http.js';
import type { SandboxState } from './state.js';

function random(): string {
  return randomBytes(24).toString('base64url');
}

/** A new token family (one login). */
export function newFamily(state: SandboxState): number {
  const id = state.nextFamily++;
  state.families.set(id, { access: [], refresh: [] });
  return id;
}

export function issueTokens(state: SandboxState, familyId: number, scopes: string[], options: { withRefresh: boolean; ttl?: number }): TokenResponse {
  const ttl = options.ttl ?? state.settings.accessTokenTtl;
  const family = state.families.get(familyId);
  const access = `${CREDENTIAL_PREFIXES.accessToken}${random()}`;
  state.accessTokens.set(access, { familyId, scopes, expiresAt: state.now() + ttl * 1000, revoked: false });
  family?.access.push(access);
  state.counters.tokensIssued++;
  const answer: TokenResponse = { access_token: access, token_type: 'Bearer', expires_in: ttl, scope: scopes.join(' ') };
  if (options.withRefresh) {
    const refresh = `${CREDENTIAL_PREFIXES.refreshToken}${random()}`;
    state.refreshTokens.set(refresh, { familyId, scopes, rotated: false, revoked: false });
    family?.refresh.push(refresh);
    answer.refresh_token = refresh;
  }
  return answer;
}

export function revokeFamily(state: SandboxState, familyId: number): void {
  const family = state.families.get(familyId);
  if (!family) return;
  for (const t of family.access) {
    const record = state.accessTokens.get(t);
    if (record) record.revoked = true;
  }
  for (const t of family.refresh) {
    const record = state.refreshTokens.get(t);
    if (record) record.revoked = true;
  }
}

export type AccessCheck = { ok: true; scopes: string[] } | { ok: false; reason: 'unknown' | 'expired' | 'revoked' };

export function checkAccessToken(state: SandboxState, token: string): AccessCheck {
  const record = state.accessTokens.get(token);
  if (!record) return { ok: false, reason: 'unknown' };
  if (record.revoked) return { ok: false, reason: 'revoked' };
  if (record.expiresAt <= state.now()) return { ok: false, reason: 'expired' };
  return { ok: true, scopes: record.scopes };
}

/**
 * The spec's three scope names only (an invented one would teach users a scope the real service may
 * refuse), each for the resource it touches (docs/spec-choices.md, "Scopes per endpoint").
 */
const REQUIRED_SCOPES = {
  'GET /v1/orders': 'read_orders',
  'PUT /v1/orders/{sourceOrderId}': 'read_orders',
  'POST /v1/claims/offline': 'read_claims',
  'POST /v2/products/{productId}/children': 'read_store',
  'POST /storefront/gift-cards': 'read_store',
} as const;

type ProtectedEndpoint = keyof typeof REQUIRED_SCOPES;

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

/** Null when the bearer token and its scope allow the endpoint, else the 401/403 answer. */
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
