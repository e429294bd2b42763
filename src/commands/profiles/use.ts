import { Argument, type Command } from 'commander';
import { ProfileName } from '../../config/settings-schema.js';
import type { Deps } from '../../cli/deps.js';
import { completesWith } from '../completion/hints.js';
import { UsageError } from '../../core/errors.js';

/** Registers `profiles use`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('use')
    .description('Make a profile the one used when --profile and OPCLI_PROFILE are not given')
    .addArgument(completesWith(new Argument('<name>', 'profile name'), 'profiles'))
    .addHelpText('after', '\nExamples:\n  $ opcli profiles use staging')
    .action(async (name: string) => run({ name }, deps));
}

/** Selects the current profile. */
export async function run(opts: { name: string }, deps: Deps): Promise<void> {
  const parsed = ProfileName.safeParse(opts.name);
  if (!parsed.success) throw new UsageError(`Invalid profile name "${opts.name}": ${parsed.error.issues[0]?.message}.`);
  const settings = await deps.settings();
  const known = settings.listProfiles().includes(opts.name) || (await deps.credentials()).profiles().includes(opts.name);
  if (!known) deps.err(`Note: profile "${opts.name}" has no settings yet; set them with \`opcli config set\`.\n`);
  settings.setCurrentProfile(opts.name);
  deps.err(`Now using profile "${opts.name}".\n`);
}
