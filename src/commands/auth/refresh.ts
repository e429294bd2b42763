import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { loginStatus, relativeTime } from '../../auth/describe.js';
import { createTokenSource } from '../../oauth/token-source.js';
import { printJson } from '../../core/output.js';

export interface RefreshOptions {
  json: boolean;
}

/** Registers `auth refresh`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('refresh')
    .description('Refresh the access token now (rotates the refresh token)')
    .option('--json', 'print the new login status as JSON on stdout')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli auth refresh
  $ opcli --profile staging auth refresh --json

Tokens are refreshed on their own when they expire within 5 minutes; this forces it.
A client-credentials login runs its grant again. Exit codes: 0 ok, 1 retry later, 4 log in again.`,
    )
    .action(async (flags: { json?: boolean }) => {
      await run({ json: !!flags.json }, deps);
    });
}

/** Forces a refresh of the active profile's token under the credentials lock. */
export async function run(opts: RefreshOptions, deps: Deps): Promise<void> {
  const profile = await deps.profile();
  const token = await createTokenSource(deps, profile).refresh();
  const status = loginStatus(profile, token, deps.now());
  deps.err(`Refreshed; the new access token expires ${relativeTime(status.expiresIn)}.\n`);
  if (opts.json) printJson(deps, status);
}
