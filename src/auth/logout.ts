/**
 * Logging out one profile, under the credentials lock: the refresh token is revoked first (so no new
 * access token can be minted), then the access token; both are deleted even when the server cannot
 * revoke them. No prompt and no print: warnings go to the verb's `warn`.
 */
import { boundOrigin, originOf, profileLabel } from '../config/origin.js';
import type { ResolvedProfile } from '../config/profile.js';
import type { CredentialStore } from '../config/credentials.js';
import { ApiError } from '../core/errors.js';
import type { HttpClient } from '../http/client.js';
import type { Redactor } from '../core/redact.js';
import { oauthDescription, oauthEndpoints } from '../oauth/endpoints.js';

/** What happened to one profile's login. */
export interface LogoutResult {
  profile: string;
  /** Whether a login was stored. */
  wasLoggedIn: boolean;
  /** true revoked, false revocation failed, null nothing to revoke. */
  refreshTokenRevoked: boolean | null;
  accessTokenRevoked: boolean | null;
  removed: boolean;
}

/** What a logout needs from the outside world. */
export interface LogoutEnv {
  credentials(): Promise<CredentialStore>;
  http(): Promise<HttpClient>;
  redactor: Redactor;
  /** Aborted on Ctrl-C. */
  signal: AbortSignal;
  /** A warning in words, as it happens (the verb writes it to stderr). */
  warn(message: string): void;
}

/** Revokes and deletes the stored login of `profile`; a failed revocation is warned about, never fatal. */
export async function logout(profile: ResolvedProfile, env: LogoutEnv): Promise<LogoutResult> {
  const store = await env.credentials();
  const name = profile.name;
  const label = profileLabel(name);
  return store.withLock(async () => {
    const token = store.read(name).token;
    const result: LogoutResult = { profile: name, wasLoggedIn: !!token, refreshTokenRevoked: null, accessTokenRevoked: null, removed: false };
    if (!token) return result;
    env.redactor.add(token.accessToken, token.refreshToken);
    const { clientId, clientSecret } = profile;
    env.redactor.add(clientSecret);
    // Revoking sends the token and the client secret: only to the origin both belong to (src/config/origin.ts).
    const target = originOf(profile.baseUrl);
    const issuer = boundOrigin(token.origin, profile.storedBaseUrl);
    const notThere =
      issuer === undefined || issuer !== target
        ? `the login belongs to ${issuer ?? 'a server an older opcli did not record'}`
        : profile.clientSecretOrigin !== undefined && profile.clientSecretOrigin !== target
          ? `the client secret belongs to ${profile.clientSecretOrigin}`
          : undefined;
    const revoke = async (value: string, hint: 'refresh_token' | 'access_token'): Promise<boolean> => {
      const what = hint === 'refresh_token' ? 'refresh token' : 'access token';
      if (notThere) {
        env.warn(
          `the ${what}${label} was not revoked: ${notThere} and the base URL is ${target ?? 'not set'}, so opcli does not send it there. It is deleted here, but may stay valid at ${issuer ?? 'its server'} until it expires.`,
        );
        return false;
      }
      if (!clientId || !clientSecret) {
        env.warn(
          `cannot revoke the ${what}${label}: the profile has no client id or secret. It is deleted here, but stays valid at the server until it expires.`,
        );
        return false;
      }
      try {
        await oauthEndpoints(await env.http(), profile.baseUrl).revoke(
          { token: value, client_id: clientId, client_secret: clientSecret, token_type_hint: hint },
          env.signal,
        );
        return true;
      } catch (error) {
        if (env.signal.aborted) throw error;
        const why = error instanceof ApiError ? oauthDescription(error) : error instanceof Error ? error.message : String(error);
        env.warn(`the server did not revoke the ${what}${label} (${why}). It is deleted here, but may stay valid at the server until it expires.`);
        return false;
      }
    };
    if (token.refreshToken) result.refreshTokenRevoked = await revoke(token.refreshToken, 'refresh_token');
    result.accessTokenRevoked = await revoke(token.accessToken, 'access_token');
    store.writeLocked(name, (cur) => ({ ...cur, token: undefined }));
    result.removed = true;
    return result;
  });
}
