import { Argument, type Command } from 'commander';
import { ProfileName } from '../../config/settings-schema.js';
import type { Deps } from '../../cli/deps.js';
import { completesWith } from '../completion/hints.js';
import { ExitCode, OpcliError, PlainExit, UsageError } from '../../core/errors.js';

/** Registers `profiles remove`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('remove')
    .description('Delete a profile: its settings and its stored credentials (run `auth logout` first to revoke them)')
    .addArgument(completesWith(new Argument('<name>', 'profile name'), 'profiles'))
    .option('-y, --yes', 'do not ask for confirmation')
    .addHelpText('after', '\nExamples:\n  $ opcli --profile old auth logout && opcli profiles remove old --yes')
    .action(async (name: string, flags: { yes?: boolean }) => run({ name, yes: !!flags.yes }, deps));
}

/** Removes a profile's settings and secrets. */
export async function run(opts: { name: string; yes: boolean }, deps: Deps): Promise<void> {
  // A name no profile can have is a typing mistake (exit 2), not a profile that happens to be missing (exit 1).
  const parsed = ProfileName.safeParse(opts.name);
  if (!parsed.success)
    throw new UsageError(`Invalid profile name "${opts.name}": ${parsed.error.issues[0]?.message}.`, 'See `opcli profiles list` for the names.');
  const settings = await deps.settings();
  const credentials = await deps.credentials();
  const hasSettings = settings.listProfiles().includes(opts.name);
  const hasSecrets = credentials.profiles().includes(opts.name);
  if (!hasSettings && !hasSecrets) throw new OpcliError(`No profile named "${opts.name}".`, { hint: 'See `opcli profiles list`.' });
  if (!opts.yes) {
    if (!deps.canPrompt()) throw new UsageError(`Removing profile "${opts.name}" needs confirmation.`, 'Pass --yes to remove it without a question.');
    const ok = await (await deps.prompter()).confirm({ message: `Remove profile "${opts.name}" and its stored credentials?`, default: false });
    if (!ok) throw new PlainExit('Nothing was removed.', ExitCode.declined);
  }
  settings.removeProfile(opts.name);
  await credentials.update(opts.name, () => undefined);
  deps.err(`Removed profile "${opts.name}".\n`);
}
