import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { AuthError } from '../../errors.js';

export interface StatusOptions {
  json: boolean;
  all: boolean;
  /** Also ask the server whether the token is accepted (one GET /v1/orders?size=1, refreshing first when needed). */
  check: boolean;
}

/** Registers `auth status`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('status')
    .description('Show the login of the active profile (or --all): grant, store, scopes, expiry, token source')
    .option('--json', 'print JSON on stdout')
    .option('--all', 'every profile')
    .option('--check', 'also make one authenticated call to see that the server accepts the token')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli auth status
  $ opcli auth status --all --json
  $ opcli auth status --check          # refreshes if needed, then asks the server

Never prints a secret. Exit codes: 0 logged in, 4 not logged in (or, with --check, refused).`,
    )
    .action(async (flags: { json?: boolean; all?: boolean; check?: boolean }) => {
      await run({ json: !!flags.json, all: !!flags.all, check: !!flags.check }, deps);
    });
}

/** Prints the login status of one or every profile. */
export async function run(opts: StatusOptions, deps: Deps): Promise<void> {
  const [{ loginStatus, statusPairs }, output] = await Promise.all([import('../../auth/describe.js'), import('../../output.js')]);
  const active = await deps.profile();
  const profiles = opts.all ? await allProfiles(deps) : [active];
  const store = await deps.credentials();
  const rows = profiles.map((p) => ({
    ...loginStatus(p, store.read(p.name).token, deps.now()),
    ...(opts.check && p.name === active.name ? { accepted: null as boolean | null } : {}),
  }));
  if (opts.check && !opts.all) {
    const row = rows[0] as (typeof rows)[number] & { accepted: boolean | null };
    row.accepted = row.loggedIn ? await check(deps) : false;
    // A refresh during the check changed the stored token: show the new one.
    if (row.source === 'store') Object.assign(row, loginStatus(active, store.read(active.name).token, deps.now()), { accepted: row.accepted });
  }
  const mode = output.outputMode(deps, opts);
  if (mode === 'json') output.printJson(deps, opts.all ? rows : rows[0]);
  else {
    for (const [i, row] of rows.entries()) {
      if (i > 0) deps.out('\n');
      const pairs = statusPairs(row);
      if ('accepted' in row && row.accepted !== null) pairs.push(['Server check', row.accepted ? 'token accepted' : 'token refused']);
      await output.printRecord(deps, pairs, mode);
    }
  }
  const first = rows[0];
  if (!opts.all && first && (!first.loggedIn || ('accepted' in first && first.accepted === false))) {
    throw new AuthError(
      first.loggedIn ? `The server refused the token of profile "${first.profile}".` : `Profile "${first.profile}" is not logged in.`,
      `Run \`opcli${first.profile === 'default' ? '' : ` --profile ${first.profile}`} auth login\`.`,
    );
  }
}

/** One cheap authenticated call: 2xx or 403 (valid token, missing scope) mean accepted; 401 refused. */
async function check(deps: Deps): Promise<boolean> {
  const { ApiError } = await import('../../errors.js');
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

/**
 * Every profile that has settings or secrets. The environment's overrides (OPCLI_BASE_URL,
 * OPCLI_CLIENT_*, OPCLI_TOKEN) apply to the active profile only: applied to every profile, one
 * profile's tokens would be sent to the host another one is meant for.
 */
export async function allProfiles(deps: Deps) {
  const { pickProfileName, resolveProfile } = await import('../../config/profile.js');
  const [settings, store] = await Promise.all([deps.settings(), deps.credentials()]);
  const active = pickProfileName(deps.globals.profile, deps.env, settings.currentProfile());
  const names = [...new Set([...settings.listProfiles(), ...store.profiles()])].sort();
  return names.map((name) => resolveProfile(name, settings.getProfile(name), store.read(name), name === active ? deps.env : {}));
}
