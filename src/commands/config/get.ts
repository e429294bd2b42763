import type { Command } from 'commander';
import { getAtPath } from '../../config/settings.js';
import type { Deps } from '../../cli/deps.js';
import { OpcliError } from '../../core/errors.js';
import { mask } from '../../core/redact.js';
import { keyArgument, requireKey } from './keys.js';
import { profileName } from './set.js';

export interface GetOptions {
  key: string;
  reveal: boolean;
}

/** Registers `config get`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('get')
    .description('Print one setting of the active profile (secrets masked unless --reveal)')
    .addArgument(keyArgument())
    .option('--reveal', 'print a secret in full')
    .addHelpText('after', '\nExamples:\n  $ opcli config get base-url\n  $ opcli --profile staging config get store-id')
    .action(async (key: string, flags: { reveal?: boolean }) => run({ key, reveal: !!flags.reveal }, deps));
}

/** Prints the stored value; exits 1 when the key is not set. */
export async function run(opts: GetOptions, deps: Deps): Promise<void> {
  const key = requireKey(opts.key);
  const profile = await profileName(deps, { mustExist: true });
  let value: unknown;
  if (key.secret) value = (await deps.credentials()).read(profile)[key.path[0] as 'clientSecret' | 'providerToken'];
  else value = getAtPath((await deps.settings()).getProfile(profile) ?? {}, key.path);
  if (value === undefined) throw new OpcliError(`${key.key} is not set for profile "${profile}".`, { hint: `Set it with \`opcli config set ${key.key}\`.` });
  const text = Array.isArray(value) ? value.join(',') : String(value);
  deps.out(`${key.secret && !opts.reveal ? mask(text) : text}\n`);
}
