/** Access and refresh tokens: issue, rotate, revoke by family, check. */
import { randomBytes } from 'node:crypto';
import { CREDENTIAL_PREFIXES } from '../schemas.js';
import type { SandboxState } from './state.js';
import type { IssuedTokens } from './types.js';

function random(): string {
  return randomBytes(24).toString('base64url');
}

/** Starts a new token family (one login). */
export function newFamily(state: SandboxState): number {
  const id = state.nextFamily++;
  state.families.set(id, { access: [], refresh: [] });
  return id;
}

/** Issues an access token, and a refresh token unless `withRefresh` is false, in a family. */
export function issueTokens(state: SandboxState, familyId: number, scopes: string[], options: { withRefresh: boolean; ttl?: number }): IssuedTokens {
  const ttl = options.ttl ?? state.settings.accessTokenTtl;
  const family = state.families.get(familyId);
  const access = `${CREDENTIAL_PREFIXES.accessToken}${random()}`;
  state.accessTokens.set(access, { familyId, scopes, expiresAt: state.now() + ttl * 1000, revoked: false });
  family?.access.push(access);
  state.counters.tokensIssued++;
  const answer: IssuedTokens = { access_token: access, token_type: 'Bearer', expires_in: ttl, scope: scopes.join(' ') };
  if (options.withRefresh) {
    const refresh = `${CREDENTIAL_PREFIXES.refreshToken}${random()}`;
    state.refreshTokens.set(refresh, { familyId, scopes, rotated: false, revoked: false });
    family?.refresh.push(refresh);
    answer.refresh_token = refresh;
  }
  return answer;
}

/** Revokes every access and refresh token of a family. */
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

/** Whether an access token is usable now, and why not. */
export function checkAccessToken(state: SandboxState, token: string): AccessCheck {
  const record = state.accessTokens.get(token);
  if (!record) return { ok: false, reason: 'unknown' };
  if (record.revoked) return { ok: false, reason: 'revoked' };
  if (record.expiresAt <= state.now()) return { ok: false, reason: 'expired' };
  return { ok: true, scopes: record.scopes };
}
