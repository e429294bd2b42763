import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { AuthError } from '../../core/errors.js';
import { statusPairs } from '../../auth/describe.js';
import { profileStatuses } from '../../auth/status.js';
import { originOf } from '../../config/origin.js';
import * as output from '../../core/output.js';

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
  const rows = await profileStatuses(deps, opts);
  const mode = output.outputMode(deps, opts);
  if (mode === 'json') output.printJson(deps, opts.all ? rows : rows[0]);
  else {
    for (const [i, row] of rows.entries()) {
      if (i > 0) deps.out('\n');
      const pairs = statusPairs(row);
      if (row.connection) pairs.push(['Connection', row.connection]);
      if (row.accepted !== undefined && row.accepted !== null) pairs.push(['Server check', row.accepted ? 'token accepted' : 'token refused']);
      await output.printRecord(deps, pairs, mode);
    }
  }
  const first = rows[0];
  if (!opts.all && first && (!first.loggedIn || first.accepted === false)) {
    const elsewhere = first.source === 'store' && first.issuedBy !== null && first.baseUrl !== null && first.issuedBy !== originOf(first.baseUrl);
    throw new AuthError(
      first.loggedIn
        ? `The server refused the token of profile "${first.profile}".`
        : elsewhere
          ? `Profile "${first.profile}" is logged in at ${first.issuedBy}, not at its base URL ${first.baseUrl}: that login is not sent there.`
          : `Profile "${first.profile}" is not logged in.`,
      `Run \`opcli${first.profile === 'default' ? '' : ` --profile ${first.profile}`} auth login\`.`,
    );
  }
}
