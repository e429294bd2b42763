import { type Command, Argument } from 'commander';
import { type Deps, knownProfiles } from '../../cli/deps.js';
import { lazyGroup } from '../../cli/program.js';
import { type JsonFlag, jsonFields, pickFields } from '../../core/json-fields.js';
import { outputMode, printJson, printTable } from '../../core/output.js';
import { pickProfileName } from '../../config/profile.js';
import { ProfileName } from '../../config/settings-schema.js';
import { completesWith } from '../../core/flags.js';
import { UsageError, ExitCode, OpcliError, PlainExit } from '../../core/errors.js';

/** `opcli profiles`: named sets of settings and credentials. */
export const register = lazyGroup({
  name: 'profiles',
  description: 'List, select and remove profiles (each has its own settings and login)',
  examples: '  $ opcli profiles list\n  $ opcli profiles use staging\n  $ opcli --profile staging auth status',
  verbs: {
    list: registerList,
    use: registerUse,
    remove: registerRemove,
  },
});

/** The fields of a profile in `--json` (docs/json.md). */
export const PROFILE_FIELDS = ['name', 'active', 'baseUrl', 'loggedIn'];

function registerList(group: Command, deps: Deps): void {
  group
    .command('list')
    .description('List profiles, the current one marked')
    .option('--json [fields]', 'print JSON; with fields (comma-separated), only those (docs/json.md)')
    .addHelpText('after', '\nExamples:\n  $ opcli profiles list --json\n  $ opcli profiles list --json name,loggedIn')
    .action(async (flags: { json?: JsonFlag }) => runList({ json: !!flags.json, fields: jsonFields(flags.json, '--json', PROFILE_FIELDS) }, deps));
}

/** Prints every profile that has settings or credentials. */
async function runList(opts: { json: boolean; fields?: string[] }, deps: Deps): Promise<void> {
  const settings = await deps.settings();
  const credentials = await deps.credentials();
  const active = pickProfileName(deps.globals.profile, deps.env, settings.currentProfile());
  const names = knownProfiles(settings, credentials).sort();
  const rows = names.map((name) => ({
    name,
    active: name === active,
    baseUrl: settings.getProfile(name)?.baseUrl ?? null,
    loggedIn: !!credentials.read(name).token,
  }));
  if (opts.json)
    return printJson(
      deps,
      rows.map((row) => pickFields(row, opts.fields)),
    );
  if (rows.length === 0) {
    deps.err('No profiles yet. Create one with `opcli config set base-url URL` or `opcli sandbox --write-profile default`.\n');
    return;
  }
  await printTable(
    deps,
    [
      { header: '', value: (r) => (r.active ? '*' : '') },
      { header: 'PROFILE', value: (r) => r.name },
      { header: 'BASE URL', value: (r) => r.baseUrl ?? '' },
      { header: 'LOGGED IN', value: (r) => (r.loggedIn ? 'yes' : 'no') },
    ],
    rows,
    outputMode(deps, {}),
  );
}

function registerUse(group: Command, deps: Deps): void {
  group
    .command('use')
    .description('Make a profile the one used when --profile and OPCLI_PROFILE are not given')
    .addArgument(completesWith(new Argument('<name>', 'profile name'), 'profiles'))
    .addHelpText('after', '\nExamples:\n  $ opcli profiles use staging')
    .action(async (name: string) => runUse({ name }, deps));
}

/** Selects the current profile. */
async function runUse(opts: { name: string }, deps: Deps): Promise<void> {
  const parsed = ProfileName.safeParse(opts.name);
  if (!parsed.success) throw new UsageError(`Invalid profile name "${opts.name}": ${parsed.error.issues[0]?.message}.`);
  const settings = await deps.settings();
  const known = settings.listProfiles().includes(opts.name) || (await deps.credentials()).profiles().includes(opts.name);
  if (!known) deps.err(`Note: profile "${opts.name}" has no settings yet; set them with \`opcli config set\`.\n`);
  settings.setCurrentProfile(opts.name);
  deps.err(`Now using profile "${opts.name}".\n`);
}

function registerRemove(group: Command, deps: Deps): void {
  group
    .command('remove')
    .description('Delete a profile: its settings and its stored credentials (run `auth logout` first to revoke them)')
    .addArgument(completesWith(new Argument('<name>', 'profile name'), 'profiles'))
    .option('-y, --yes', 'do not ask for confirmation')
    .addHelpText('after', '\nExamples:\n  $ opcli --profile old auth logout && opcli profiles remove old --yes')
    .action(async (name: string, flags: { yes?: boolean }) => runRemove({ name, yes: !!flags.yes }, deps));
}

/** Removes a profile's settings and secrets. */
async function runRemove(opts: { name: string; yes: boolean }, deps: Deps): Promise<void> {
  // A name no profile can have is a typing mistake (exit 2), not a profile that happens to be missing (exit 1).
  const parsed = ProfileName.safeParse(opts.name);
  if (!parsed.success)
    throw new UsageError(`Invalid profile name "${opts.name}": ${parsed.error.issues[0]?.message}.`, 'See `opcli profiles list` for the names.');
  const settings = await deps.settings();
  const credentials = await deps.credentials();
  if (!knownProfiles(settings, credentials).includes(opts.name))
    throw new OpcliError(`No profile named "${opts.name}".`, { hint: 'See `opcli profiles list`.' });
  if (!opts.yes) {
    if (!deps.canPrompt()) throw new UsageError(`Removing profile "${opts.name}" needs confirmation.`, 'Pass --yes to remove it without a question.');
    const ok = await (await deps.prompter()).confirm({ message: `Remove profile "${opts.name}" and its stored credentials?`, default: false });
    if (!ok) throw new PlainExit('Nothing was removed.', ExitCode.declined);
  }
  settings.removeProfile(opts.name);
  await credentials.update(opts.name, () => undefined);
  deps.err(`Removed profile "${opts.name}".\n`);
}
