import type { CredentialStore, StoredToken } from '../config/credentials.js';
import { boundOrigin, loginRefusal, originOf, profileFlag, tokenUrlOf } from '../config/origin.js';
import { originContext, type ResolvedProfile } from '../config/profile.js';
import { ApiError, AuthError } from '../core/errors.js';
import { type HttpClient, neverLeft, type TokenSource } from '../http/client.js';
import type { Redactor } from '../core/redact.js';
import { clientCredentials, oauthDescription, toStoredToken, tokenClient, tokenRefusal } from './endpoints.js';

/** CHOICE (docs/spec-choices.md#refresh-margin): a token that expires within this margin is refreshed before it is used. */
export const REFRESH_MARGIN_MS = 5 * 60_000;

/** The token source of a profile, plus a forced refresh for `auth refresh`. */
export interface AuthTokenSource extends TokenSource {
  /** Refreshes now (or adopts what another process stored since `seen` was read); returns the stored token. */
  refresh(seen?: string): Promise<StoredToken>;
}

/**
 * Whether a stored token is refreshed before use: within REFRESH_MARGIN_MS of expiry, or of half its
 * lifetime when shorter (else a 5-minute token would be refreshed before every request).
 */
export function needsRefresh(token: StoredToken, now: number): boolean {
  if (token.expiresAt === undefined) return false;
  const margin = Math.min(REFRESH_MARGIN_MS, (token.expiresAt - token.obtainedAt) / 2);
  return token.expiresAt - now <= margin;
}

/** What a token source uses: the credential store, the HTTP client, the clock, the redactor, a --verbose line, Ctrl-C. */
export interface TokenSourceEnv {
  credentials(): Promise<CredentialStore>;
  http(): Promise<HttpClient>;
  now(): number;
  redactor: Redactor;
  debug(text: string): void;
  signal: AbortSignal;
}

/** OPCLI_TOKEN as the run's token: sent as it is, to the base URL's origin only; it cannot be refreshed. */
function envTokenSource(deps: Pick<TokenSourceEnv, 'redactor'>, token: string, baseOrigin: string | undefined): AuthTokenSource {
  deps.redactor.add(token);
  return {
    // OPCLI_TOKEN was given for this run's base URL: it goes there, and nowhere else.
    get: async (target) => {
      if (target && baseOrigin && target.origin !== baseOrigin) {
        throw new AuthError(
          `OPCLI_TOKEN is sent only to the base URL's origin ${baseOrigin}, and this request goes to ${target.origin}; nothing was sent.`,
          'Point the request at the base URL, or set OPCLI_BASE_URL to the server the token is for.',
        );
      }
      return token;
    },
    // An OPCLI_TOKEN that is refused cannot be refreshed; the user is told where the token came from.
    refreshAfterUnauthorized: async () => {
      throw new AuthError(
        'The server refused the access token from OPCLI_TOKEN (401: invalid or expired).',
        'The token came from the OPCLI_TOKEN environment variable, not from `opcli auth login`: set a valid token in it, or unset OPCLI_TOKEN to use the stored login.',
      );
    },
    refresh: async () => {
      throw new AuthError(
        'OPCLI_TOKEN is set, so there is no stored login to refresh.',
        'Unset OPCLI_TOKEN to use the stored login, or set a new token in it.',
      );
    },
  };
}

/**
 * The bearer token for API calls: OPCLI_TOKEN as it is, else the stored token, refreshed near expiry
 * and once after a 401. One refresh per process at a time (a shared promise), and across processes
 * under the credentials lock, where a token another process refreshed meanwhile is adopted.
 */
export function createTokenSource(deps: TokenSourceEnv, profile: ResolvedProfile): AuthTokenSource {
  const baseOrigin = originOf(profile.baseUrl);
  if (profile.envToken) return envTokenSource(deps, profile.envToken, baseOrigin);
  const name = profile.name;
  // The stored login goes only to the origin that issued it, checked on every request: the common case is one string comparison.
  const assertBound = (token: StoredToken, target: URL | undefined) => {
    const bound = boundOrigin(token.origin, profile.storedBaseUrl);
    const to = target ? target.origin : baseOrigin;
    if (bound !== undefined && bound === to) return;
    const refused = loginRefusal(bound, to, originContext(profile));
    if (refused) throw refused;
  };
  let inflight: Promise<StoredToken> | undefined;
  const singleFlight = (replacing: string | undefined): Promise<StoredToken> => {
    inflight ??= refreshLocked(deps, profile, replacing).finally(() => {
      inflight = undefined;
    });
    return inflight;
  };
  const current = async (): Promise<StoredToken> => {
    const token = (await deps.credentials()).read(name).token;
    if (!token) throw new AuthError(`Not logged in (profile "${name}").`, `Run \`opcli${profileFlag(name)} auth login\`.`);
    deps.redactor.add(token.accessToken, token.refreshToken);
    return token;
  };
  // The token last read or obtained. A batch makes thousands of requests: reading and parsing the
  // credential file for each would cost more than the request. The store is read again when the
  // token nears expiry, and after a 401 (another process may have rotated it).
  let cached: StoredToken | undefined;
  return {
    async get(target) {
      if (cached && !needsRefresh(cached, deps.now())) {
        assertBound(cached, target);
        return cached.accessToken;
      }
      const token = await current();
      assertBound(token, target);
      cached = token;
      if (!needsRefresh(token, deps.now())) return token.accessToken;
      deps.debug(`auth: the access token of profile "${name}" expires within 5 minutes; refreshing`);
      cached = await singleFlight(token.accessToken);
      return cached.accessToken;
    },
    async refreshAfterUnauthorized(sent) {
      cached = undefined;
      const token = (await deps.credentials()).read(name).token;
      // A pasted token has nothing to refresh with: let the 401 be reported.
      if (token && token.accessToken === sent && token.grant === 'token') return undefined;
      deps.debug(`auth: the server refused the access token (401); refreshing once`);
      return (await singleFlight(sent)).accessToken;
    },
    async refresh(seen) {
      cached = await singleFlight(seen ?? (await current()).accessToken);
      return cached;
    },
  };
}

/** Where a refresh or client-credentials re-run of `token` may go: its own token endpoint, if the base URL is on its origin. */
function refreshTarget(token: StoredToken, profile: ResolvedProfile): { origin?: string; tokenUrl?: string } {
  const origin = boundOrigin(token.origin, profile.storedBaseUrl);
  const refused = loginRefusal(origin, originOf(profile.baseUrl), originContext(profile));
  if (refused) throw refused;
  return { origin, tokenUrl: token.tokenUrl ?? (profile.baseUrl ? tokenUrlOf(profile.baseUrl) : undefined) };
}

/** One refresh under the credentials lock; `replacing` is the access token found stale or refused (another one stored is adopted). */
async function refreshLocked(deps: TokenSourceEnv, profile: ResolvedProfile, replacing: string | undefined): Promise<StoredToken> {
  const store = await deps.credentials();
  const name = profile.name;
  return store.withLock(async () => {
    const token = store.read(name).token;
    if (!token) throw new AuthError(`Not logged in (profile "${name}"): the login was removed, perhaps by \`opcli auth logout\` in another terminal.`);
    deps.redactor.add(token.accessToken, token.refreshToken);
    // Checked first: a login another process stored meanwhile (at another server) is not adopted either.
    const bound = refreshTarget(token, profile);
    if (replacing !== undefined && token.accessToken !== replacing && (token.expiresAt === undefined || token.expiresAt > deps.now())) {
      deps.debug('auth: another opcli process refreshed already; using its tokens');
      return token;
    }
    if (token.grant === 'client_credentials') return rerunClientCredentials(deps, profile, store, token, bound);
    if (!token.refreshToken) {
      throw new AuthError(
        token.grant === 'token'
          ? `The access token of profile "${name}" (given with --with-token) has expired or was refused, and there is no refresh token.`
          : `The access token of profile "${name}" has expired and no refresh token is stored.`,
        token.grant === 'token' ? 'Pass a new one: `opcli auth login --with-token < token.txt`.' : 'Run `opcli auth login` to log in again.',
      );
    }
    const sent = token.refreshToken;
    const { clientId, clientSecret, oauth, started } = await tokenClient(deps, profile, bound.tokenUrl);
    let response: Awaited<ReturnType<typeof oauth.token>>;
    try {
      // No abort signal: once sent, a refresh is let finish, so a Ctrl-C cannot lose the rotated pair.
      response = await oauth.token({ grant_type: 'refresh_token', client_id: clientId, client_secret: clientSecret, refresh_token: sent });
    } catch (error) {
      if (error instanceof ApiError && error.code === 'invalid_grant') {
        // Only forget the login when the store still holds the very token that was refused.
        store.writeLocked(name, (cur) => (cur.token?.refreshToken === sent ? { ...cur, token: undefined } : cur));
        throw new AuthError(
          `The login of profile "${name}" has ended: the server refused the refresh token (${oauthDescription(error)}).`,
          'Run `opcli auth login` to log in again.',
        );
      }
      if (!provablyRefused(error)) {
        // The server may have rotated the token and the answer was lost or unreadable. Sending the
        // old token again would be refresh-token reuse, which revokes the whole login; so it is not.
        const again = store.read(name).token;
        if (
          again &&
          again.refreshToken !== sent &&
          boundOrigin(again.origin, profile.storedBaseUrl) === bound.origin &&
          again.expiresAt !== undefined &&
          again.expiresAt > deps.now()
        )
          return again;
        store.writeLocked(name, (cur) => (cur.token?.refreshToken === sent ? { ...cur, token: { ...cur.token, refreshToken: undefined } } : cur));
        throw new AuthError(
          `The answer to the token refresh of profile "${name}" was lost (${error instanceof Error ? error.message : String(error)}). The old refresh token may already be rotated out, so it is not sent again.`,
          'Run `opcli auth login` to log in again.',
          error,
        );
      }
      throw tokenRefusal(error, profile, 'The token refresh');
    }
    // The rotated pair keeps the origin and endpoint that issued it (an older opcli's login is bound now).
    const next = { ...toStoredToken(response, token.grant, started, token.storeId), ...bound };
    deps.redactor.add(next.accessToken, next.refreshToken);
    // Rotation: the new refresh token replaces the old one before the new access token is used.
    store.writeLocked(name, (cur) => ({ ...cur, token: next }));
    deps.debug('auth: refreshed; the rotated token pair is stored');
    return next;
  });
}

/** Client credentials carry no refresh token: the same grant is run again for the same store. */
async function rerunClientCredentials(
  deps: TokenSourceEnv,
  profile: ResolvedProfile,
  store: CredentialStore,
  token: StoredToken,
  bound: { origin?: string; tokenUrl?: string },
): Promise<StoredToken> {
  const storeId = token.storeId ?? profile.storeId;
  if (!storeId)
    throw new AuthError(
      'The client-credentials token has expired and the store it was for is unknown.',
      'Run `opcli auth login --client-credentials --store-id <id>`.',
    );
  let next: StoredToken;
  try {
    next = { ...(await clientCredentials(deps, profile, { storeId, scopes: token.requestedScopes, tokenUrl: bound.tokenUrl }, deps.signal)), ...bound };
  } catch (error) {
    throw tokenRefusal(error, profile, `The client-credentials grant for store ${storeId}`);
  }
  deps.redactor.add(next.accessToken);
  store.writeLocked(profile.name, (cur) => ({ ...cur, token: next }));
  deps.debug('auth: a new client-credentials token is stored');
  return next;
}

/** Whether a failed token request provably changed nothing: a 4xx, or nothing left; else it may have rotated the refresh token. */
function provablyRefused(error: unknown): boolean {
  if (error instanceof ApiError) return error.status >= 400 && error.status < 500;
  return neverLeft(error);
}
