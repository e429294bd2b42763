import type { StoredToken } from '../config/credentials.js';
import { boundOrigin, originOf } from '../config/origin.js';
import type { ResolvedProfile } from '../config/profile.js';

/** What `auth status` shows about one profile: never a secret. */
export interface LoginStatus {
  profile: string;
  baseUrl: string | null;
  /** Where the bearer token comes from: OPCLI_TOKEN, the credential store, or nowhere. */
  source: 'env' | 'store' | 'none';
  loggedIn: boolean;
  grant: StoredToken['grant'] | null;
  storeId: string | null;
  scopes: string[];
  /** ISO time, or null when unknown (OPCLI_TOKEN, a pasted token). */
  expiresAt: string | null;
  /** Seconds left (negative when expired), or null when unknown. */
  expiresIn: number | null;
  expired: boolean;
  hasRefreshToken: boolean;
  /** The origin the stored login was issued by (null: none stored, or OPCLI_TOKEN); not the base URL's: the login is not used. */
  issuedBy: string | null;
}

/** The status of a profile from its resolved settings and stored token. */
export function loginStatus(profile: ResolvedProfile, token: StoredToken | undefined, now: number): LoginStatus {
  const base = { profile: profile.name, baseUrl: profile.baseUrl ?? null };
  // No stored login to describe: OPCLI_TOKEN (logged in, nothing known of the token), or none.
  const unknownToken = { grant: null, scopes: [], expiresAt: null, expiresIn: null, expired: false, hasRefreshToken: false, issuedBy: null };
  if (profile.envToken) return { ...base, source: 'env', loggedIn: true, storeId: profile.storeId ?? null, ...unknownToken };
  if (!token) return { ...base, source: 'none', loggedIn: false, storeId: null, ...unknownToken };
  const expiresIn = token.expiresAt === undefined ? null : Math.round((token.expiresAt - now) / 1000);
  const expired = expiresIn !== null && expiresIn <= 0;
  // An expired token still counts as a login when it can be renewed without the user.
  const renewable = !!token.refreshToken || token.grant === 'client_credentials';
  // A login issued by another origin than the base URL's is never sent there (src/config/origin.ts).
  const issuedBy = boundOrigin(token.origin, profile.storedBaseUrl) ?? null;
  const elsewhere = !!profile.baseUrl && issuedBy !== originOf(profile.baseUrl);
  return {
    ...base,
    source: 'store',
    loggedIn: (!expired || renewable) && !elsewhere,
    grant: token.grant,
    storeId: token.storeId ?? profile.storeId ?? null,
    scopes: token.scopes,
    expiresAt: token.expiresAt === undefined ? null : new Date(token.expiresAt).toISOString(),
    expiresIn,
    expired,
    hasRefreshToken: !!token.refreshToken,
    issuedBy,
  };
}

/** "in 59 minutes", "2 hours ago", "unknown". */
export function relativeTime(seconds: number | null): string {
  if (seconds === null) return 'unknown';
  const abs = Math.abs(seconds);
  const [n, unit] =
    abs < 90
      ? [abs, 'second']
      : abs < 90 * 60
        ? [Math.round(abs / 60), 'minute']
        : abs < 36 * 3600
          ? [Math.round(abs / 3600), 'hour']
          : [Math.round(abs / 86400), 'day'];
  const words = `${n} ${unit}${n === 1 ? '' : 's'}`;
  return seconds >= 0 ? `in ${words}` : `${words} ago`;
}

const GRANT_WORDS: Record<StoredToken['grant'], string> = {
  authorization_code: 'browser login (authorization code + PKCE)',
  client_credentials: 'client credentials',
  token: 'token from --with-token',
};

/** Label/value pairs for a terminal or a pipe. */
export function statusPairs(s: LoginStatus): [string, string][] {
  const source =
    s.source === 'env' ? 'OPCLI_TOKEN (environment; overrides the stored login)' : s.source === 'store' ? 'credential store' : 'none (not logged in)';
  const pairs: [string, string][] = [
    ['Profile', s.profile],
    ['Base URL', s.baseUrl ?? '(not set)'],
    ['Logged in', s.loggedIn ? 'yes' : 'no'],
    ['Token source', source],
  ];
  if (s.source === 'store') {
    pairs.push(
      ['Grant', s.grant ? GRANT_WORDS[s.grant] : ''],
      ['Store', s.storeId ?? ''],
      ['Scopes', s.scopes.join(' ') || '(unknown)'],
      ['Access token expires', s.expiresAt === null ? 'unknown' : `${relativeTime(s.expiresIn)} (${s.expiresAt})`],
      ['Refresh token', s.hasRefreshToken ? 'held' : 'none'],
      [
        'Issued by',
        s.issuedBy === null
          ? 'unknown (stored by an older opcli)'
          : `${s.issuedBy}${s.issuedBy === originOf(s.baseUrl ?? undefined) ? '' : ' (not the base URL: not used)'}`,
      ],
    );
  }
  return pairs;
}
