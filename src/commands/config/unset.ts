import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { keyArgument, requireKey } from './keys.js';
import { profileName } from './set.js';
import { writeSetting } from '../../config/write-setting.js';

/** Registers `config unset`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('unset')
    .description('Remove a setting from the active profile')
    .addArgument(keyArgument())
    .addHelpText('after', '\nExamples:\n  $ opcli config unset trigger-id')
    .action(async (key: string) => run({ key }, deps));
}

/** Removes one setting (secrets from the credential store). */
export async function run(opts: { key: string }, deps: Deps): Promise<void> {
  const key = requireKey(opts.key);
  const profile = await profileName(deps, { mustExist: true });
  await writeSetting(profile, key, undefined, { settings: await deps.settings(), credentials: await deps.credentials() });
  deps.err(`Unset ${key.key} for profile "${profile}".\n`);
}
