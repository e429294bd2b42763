import type { StoredToken } from '../config/credentials.js';
import { originOf, profileFlag, tokenUrlOf } from '../config/origin.js';
import { type ResolvedProfile, requireClient } from '../config/profile.js';
import { ApiError, AuthError, RedirectError } from '../core/errors.js';
import type { HttpClient } from '../http/client.js';
import type { Redactor } from '../core/redact.js';
import { PATHS } from '../api/service.js';
import type { RevokeRequest, TokenRequest, TokenResponse } from '../schemas.js';

/** Start-up fast path (ARCHITECTURE.md): the schemas are loaded by a token call, so a one-off with a valid login loads no zod. */
const schemas = () => import('../schemas.js');

/**
 * Endpoints 1 (token) and 2 (revoke) at `baseUrl` over the shared HTTP client, JSON bodies checked
 * before sending and no Authorization header; the token endpoint at `tokenUrl` when given.
 */
export function oauthEndpoints(http: HttpClient, baseUrl: string | undefined, tokenUrl?: string) {
  const url = (path: string) => (baseUrl ? `${baseUrl.replace(/\/+$/, '')}${path}` : path);
  return {
    async token(body: TokenRequest, signal?: AbortSignal): Promise<TokenResponse> {
      const { TokenRequest, TokenResponse } = await schemas();
      const checked = TokenRequest.parse(body);
      return (await http.request({ method: 'POST', url: tokenUrl ?? url(PATHS.token), json: checked, auth: false, smallAnswer: true, signal }, TokenResponse))
        .body;
    },
    async revoke(body: RevokeRequest, signal?: AbortSignal): Promise<void> {
      const checked = (await schemas()).RevokeRequest.parse(body);
      await http.request({ method: 'POST', url: url(PATHS.revoke), json: checked, auth: false, smallAnswer: true, signal });
    },
  };
}

/**
 * What a token request of a profile starts from: its app's id and secret (redacted; refused when bound
 * to another origin), the endpoints (`tokenUrl` must be on the base URL's origin), and its start time.
 */
export async function tokenClient(env: { redactor: Redactor; http(): Promise<HttpClient>; now(): number }, profile: ResolvedProfile, tokenUrl?: string) {
  const { clientId, clientSecret } = requireClient(profile);
  env.redactor.add(clientSecret);
  if (tokenUrl !== undefined && originOf(tokenUrl) !== originOf(profile.baseUrl)) {
    // The callers check the login's origin first; this is the last guard (a hand-edited file) before the secret is sent.
    throw new AuthError(
      `The token endpoint stored with the login of profile "${profile.name}" (${originOf(tokenUrl) ?? tokenUrl}) is not on the base URL's origin (${originOf(profile.baseUrl) ?? 'none'}); nothing was sent.`,
      `Log in again: \`opcli${profileFlag(profile.name)} auth login\`.`,
    );
  }
  return { clientId, clientSecret, oauth: oauthEndpoints(await env.http(), profile.baseUrl, tokenUrl), started: env.now() };
}

/** The client-credentials grant for `storeId` (a login, or its renewal with the login's scope filter, not the scopes granted). */
export async function clientCredentials(
  env: Parameters<typeof tokenClient>[0],
  profile: ResolvedProfile,
  grant: { storeId: string; scopes?: string[]; tokenUrl?: string },
  signal: AbortSignal,
): Promise<StoredToken> {
  const { storeId, scopes } = grant;
  const { clientId, clientSecret, oauth, started } = await tokenClient(env, profile, grant.tokenUrl);
  const body = {
    grant_type: 'client_credentials' as const,
    client_id: clientId,
    client_secret: clientSecret,
    store_id: storeId,
    ...(scopes ? { scopes } : {}),
  };
  return { ...toStoredToken(await oauth.token(body, signal), 'client_credentials', started, storeId), requestedScopes: scopes };
}

/** Where a new login from `profile` is bound: the base URL's origin and its token endpoint. */
export function bindingOf(profile: ResolvedProfile): Pick<StoredToken, 'origin' | 'tokenUrl'> {
  return profile.baseUrl ? { origin: originOf(profile.baseUrl), tokenUrl: tokenUrlOf(profile.baseUrl) } : {};
}

/** A token response as it is stored: absolute expiry, the granted scopes, the grant it came from. */
export function toStoredToken(response: TokenResponse, grant: StoredToken['grant'], now: number, storeId?: string): StoredToken {
  return {
    accessToken: response.access_token,
    refreshToken: response.refresh_token,
    expiresAt: now + response.expires_in * 1000,
    scopes: response.scope.split(' ').filter(Boolean),
    grant,
    storeId,
    obtainedAt: now,
  };
}

/** The server's own words from an OAuth error answer. */
export function oauthDescription(error: ApiError): string {
  const body = error.body as { error?: string; error_description?: string; message?: string } | undefined;
  return body?.error_description ?? body?.message ?? body?.error ?? `HTTP ${error.status}`;
}

/** A refusal of the token endpoint as an AuthError in words; anything else (network, 5xx, a redirect) unchanged. */
export function tokenRefusal(error: unknown, profile: ResolvedProfile, what: string): unknown {
  if (!(error instanceof ApiError) || error instanceof RedirectError || error.status >= 500 || error.status === 429) return error;
  const words = oauthDescription(error);
  if (error.code === 'invalid_client') {
    return new AuthError(
      `${what} failed: the server does not accept this app's client id and secret (${words}).`,
      `Check them with \`opcli config list\` (profile "${profile.name}"), then \`opcli config set client-secret --stdin\`.`,
    );
  }
  return new AuthError(`${what} failed: ${words} (${error.code ?? error.status}).`);
}
