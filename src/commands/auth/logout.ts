import type { Command } from 'commander';
import { type LogoutResult, logout, profileLabel } from '../../auth/logout.js';
import { allProfiles } from '../../auth/status.js';
import type { Deps } from '../../cli/deps.js';
import { printJson } from '../../core/output.js';

export interface LogoutOptions {
  all: boolean;
  json: boolean;
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
  const profiles = opts.all ? await allProfiles(deps) : [await deps.profile()];
  const results: LogoutResult[] = [];
  for (const profile of profiles) {
    const result = await logout(profile, { ...deps, warn: (message) => deps.err(`Warning: ${message}\n`) });
    const label = profileLabel(profile.name);
    if (!result.wasLoggedIn) deps.err(`Not logged in${label}; nothing to do.\n`);
    else deps.err(`Logged out${label}: tokens ${result.accessTokenRevoked && result.refreshTokenRevoked !== false ? 'revoked and ' : ''}deleted.\n`);
    results.push(result);
  }
  if (opts.json) {
    printJson(deps, opts.all ? results : results[0]);
  }
  if (deps.env.OPCLI_TOKEN) deps.err('Note: OPCLI_TOKEN is still set in the environment and is used until you unset it.\n');
}
