import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { type JsonFlag, jsonFields, pickFields } from '../../core/json-fields.js';
import { outputMode, printJson, printTable } from '../../core/output.js';
import { pickProfileName } from '../../config/profile.js';

/** The fields of a profile in `--json` (docs/json.md). */
export const PROFILE_FIELDS = ['name', 'active', 'baseUrl', 'loggedIn'];

/** Registers `profiles list`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('list')
    .description('List profiles, the current one marked')
    .option('--json [fields]', 'print JSON; with fields (comma-separated), only those (docs/json.md)')
    .addHelpText('after', '\nExamples:\n  $ opcli profiles list --json\n  $ opcli profiles list --json name,loggedIn')
    .action(async (flags: { json?: JsonFlag }) => run({ json: !!flags.json, fields: jsonFields(flags.json, '--json', PROFILE_FIELDS) }, deps));
}

/** Prints every profile that has settings or credentials. */
export async function run(opts: { json: boolean; fields?: string[] }, deps: Deps): Promise<void> {
  const settings = await deps.settings();
  const credentials = await deps.credentials();
  const active = pickProfileName(deps.globals.profile, deps.env, settings.currentProfile());
  const names = [...new Set([...settings.listProfiles(), ...credentials.profiles()])].sort();
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
