import type { CredentialStore } from '../config/credentials.js';
import type { ResolvedProfile } from '../config/profile.js';
import { AuthError } from '../errors.js';
import type { TokenSource } from '../http/client.js';

/**
 * The bearer token for API calls: OPCLI_TOKEN when set (used as it is), else the profile's stored
 * access token.
 */
export function createTokenSource(profile: ResolvedProfile, credentials: () => Promise<CredentialStore>, now: () => number): TokenSource {
  if (profile.envToken) {
    const token = profile.envToken;
    return { get: async () => token };
  }
  return {
    async get() {
      const store = await credentials();
      const token = store.read(profile.name).token;
      if (!token) throw new AuthError(`Not logged in (profile "${profile.name}").`);
      if (token.expiresAt !== undefined && token.expiresAt <= now()) {
        throw new AuthError(`The access token of profile "${profile.name}" has expired.`);
      }
      return token.accessToken;
    },
  };
}
