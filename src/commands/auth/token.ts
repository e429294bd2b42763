import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';

export type TokenOptions = Record<string, never>;

/** Registers `auth token`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('token')
    .description('Print a valid access token (refreshed first when needed) and nothing else')
    .addHelpText(
      'after',
      `
Examples:
  $ curl -H "Authorization: Bearer $(opcli auth token)" "$BASE_URL/v1/orders?size=5"
  $ opcli --profile staging auth token

The token is the only thing on stdout; keep it out of logs. Exit codes: 0 ok, 4 not logged in.`,
    )
    .action(async () => {
      await run({}, deps);
    });
}

/** Prints the access token of the active profile (OPCLI_TOKEN when set). */
export async function run(_opts: TokenOptions, deps: Deps): Promise<void> {
  const token = await (await deps.tokens()).get();
  deps.out(`${token}\n`);
}
