/** `auth status` below the verb (no prompt, no print), and every profile, as `auth logout --all` walks them. */
import { pickProfileName, type ResolvedProfile, resolveProfile } from '../config/profile.js';
import type { CredentialStore } from '../config/credentials.js';
import type { SettingsStore } from '../config/settings.js';
import { ApiError } from '../core/errors.js';
import type { HttpClient } from '../http/client.js';
import type { Globals } from '../core/ports.js';
import { type LoginStatus, loginStatus } from './describe.js';

/** One profile's status; with --check, the active profile's also says whether the server accepted its token (null: not asked). */
export type ProfileStatus = LoginStatus & {
  accepted?: boolean | null;
  /** With --check: how the base URL is reached, through which proxy or directly, and why (docs/http.md#proxies). */
  connection?: string;
};

/** What listing the profiles reads: the settings, the secrets, --profile and the environment. */
export interface ProfilesEnv {
  settings(): Promise<SettingsStore>;
  credentials(): Promise<CredentialStore>;
  globals: Pick<Globals, 'profile'>;
  env: Record<string, string | undefined>;
}

/** What the status reads besides: the active profile, the HTTP client for --check, the clock, Ctrl-C. */
export interface StatusEnv extends ProfilesEnv {
  profile(): Promise<ResolvedProfile>;
  http(): Promise<HttpClient>;
  now(): number;
  signal: AbortSignal;
}

/**
 * Every profile that has settings or secrets. The environment's overrides apply to the active profile
 * only: applied to every profile, one profile's tokens would go to the host meant for another.
 */
export async function allProfiles(deps: ProfilesEnv): Promise<ResolvedProfile[]> {
  const [settings, store] = await Promise.all([deps.settings(), deps.credentials()]);
  const active = pickProfileName(deps.globals.profile, deps.env, settings.currentProfile());
  const names = [...new Set([...settings.listProfiles(), ...store.profiles()])].sort();
  return names.map((name) => resolveProfile(name, settings.getProfile(name), store.read(name), name === active ? deps.env : {}));
}

/** The status of the active profile (or every one); `check` asks the server about the active token (refreshed first when due). */
export async function profileStatuses(deps: StatusEnv, opts: { all: boolean; check: boolean }): Promise<ProfileStatus[]> {
  const active = await deps.profile();
  const profiles = opts.all ? await allProfiles(deps) : [active];
  const store = await deps.credentials();
  const rows: ProfileStatus[] = profiles.map((p) => ({
    ...loginStatus(p, store.read(p.name).token, deps.now()),
    ...(opts.check && p.name === active.name ? { accepted: null } : {}),
  }));
  if (opts.check && !opts.all) {
    const row = rows[0] as ProfileStatus;
    if (active.baseUrl) row.connection = (await deps.http()).routeOf(active.baseUrl).reason;
    row.accepted = row.loggedIn ? await tokenAccepted(deps) : false;
    // A refresh during the check changed the stored token: show the new one.
    if (row.source === 'store') Object.assign(row, loginStatus(active, store.read(active.name).token, deps.now()), { accepted: row.accepted });
  }
  return rows;
}

/** One cheap authenticated call: 2xx or 403 (valid token, missing scope) mean accepted; 401 refused. */
async function tokenAccepted(deps: Pick<StatusEnv, 'http' | 'signal'>): Promise<boolean> {
  try {
    const http = await deps.http();
    await http.request({ method: 'GET', url: '/v1/orders', query: { size: 1 }, signal: deps.signal });
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return true;
    if (error instanceof ApiError && error.status === 401) return false;
    throw error;
  }
}
