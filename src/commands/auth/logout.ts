import type { Command } from 'commander';
import type { ResolvedProfile } from '../../config/profile.js';
import type { Deps } from '../../deps.js';

export interface LogoutOptions {
  all: boolean;
  json: boolean;
}

/** What happened to one profile's login. */
interface LogoutResult {
  profile: string;
  /** Whether a login was stored. */
  wasLoggedIn: boolean;
  /** true revoked, false revocation failed, null nothing to revoke. */
  refreshTokenRevoked: boolean | null;
  accessTokenRevoked: boolean | null;
  removed: boolean;
}

/** Registers `auth logout`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('logout')
    .description('Revoke the tokens at the server and delete them locally')
    .option('--all', 'every profile')
    .option('--json', 'print what was revoked and removed as JSON on stdout')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli auth logout
  $ opcli auth logout --all

Revokes the refresh token, then the access token, then deletes them from the credential store.
When revocation fails (server down) the tokens are still deleted here, with a warning.
The client secret and provider token stay (remove them with \`opcli config unset\`).`,
    )
    .action(async (flags: { all?: boolean; json?: boolean }) => {
      await run({ all: !!flags.all, json: !!flags.json }, deps);
    });
}

/** Logs out the active profile, or every profile. */
export async function run(opts: LogoutOptions, deps: Deps): Promise<void> {
  const profiles = opts.all ? await (await import('./status.js')).allProfiles(deps) : [await deps.profile()];
  const results: LogoutResult[] = [];
  for (const profile of profiles) results.push(await logoutOne(deps, profile));
  if (opts.json) {
    const { printJson } = await import('../../output.js');
    printJson(deps, opts.all ? results : results[0]);
  }
  if (deps.env.OPCLI_TOKEN) deps.err('Note: OPCLI_TOKEN is still set in the environment and is used until you unset it.\n');
}

/** Revokes (refresh token first, so no new access token can be minted) and deletes, under the credentials lock. */
async function logoutOne(deps: Deps, profile: ResolvedProfile): Promise<LogoutResult> {
  const [{ oauthEndpoints, oauthDescription }, { ApiError }] = await Promise.all([import('../../auth/oauth.js'), import('../../errors.js')]);
  const store = await deps.credentials();
  const name = profile.name;
  const label = name === 'default' ? '' : ` (profile "${name}")`;
  return store.withLock(async () => {
    const token = store.read(name).token;
    const result: LogoutResult = { profile: name, wasLoggedIn: !!token, refreshTokenRevoked: null, accessTokenRevoked: null, removed: false };
    if (!token) {
      deps.err(`Not logged in${label}; nothing to do.\n`);
      return result;
    }
    deps.redactor.add(token.accessToken);
    deps.redactor.add(token.refreshToken);
    const clientId = profile.clientId;
    const clientSecret = profile.clientSecret;
    deps.redactor.add(clientSecret);
    const revoke = async (value: string, hint: 'refresh_token' | 'access_token'): Promise<boolean> => {
      const what = hint === 'refresh_token' ? 'refresh token' : 'access token';
      if (!clientId || !clientSecret) {
        deps.err(
          `Warning: cannot revoke the ${what}${label}: the profile has no client id or secret. It is deleted here, but stays valid at the server until it expires.\n`,
        );
        return false;
      }
      try {
        await oauthEndpoints(await deps.http(), profile.baseUrl).revoke(
          { token: value, client_id: clientId, client_secret: clientSecret, token_type_hint: hint },
          deps.signal,
        );
        return true;
      } catch (error) {
        if (deps.signal.aborted) throw error;
        const why = error instanceof ApiError ? oauthDescription(error) : error instanceof Error ? error.message : String(error);
        deps.err(`Warning: the server did not revoke the ${what}${label} (${why}). It is deleted here, but may stay valid at the server until it expires.\n`);
        return false;
      }
    };
    if (token.refreshToken) result.refreshTokenRevoked = await revoke(token.refreshToken, 'refresh_token');
    result.accessTokenRevoked = await revoke(token.accessToken, 'access_token');
    store.writeLocked(name, (cur) => ({ ...cur, token: undefined }));
    result.removed = true;
    const revoked = result.accessTokenRevoked && result.refreshTokenRevoked !== false;
    deps.err(`Logged out${label}: tokens ${revoked ? 'revoked and ' : ''}deleted.\n`);
    return result;
  });
}
