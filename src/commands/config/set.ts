import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { UsageError } from '../../errors.js';
import { readStdinText } from '../../stdin.js';
import { requireKey } from './keys.js';
import { parseValue } from './values.js';

export interface SetOptions {
  key: string;
  value?: string;
  stdin: boolean;
}

/** Registers `config set`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('set')
    .description('Set a setting of the active profile')
    .argument('<key>', 'setting name, e.g. base-url')
    .argument('[value]', 'the value (for secrets prefer --stdin, or leave it out to be asked)')
    .option('--stdin', 'read the value from standard input (keeps secrets out of shell history)')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli config set base-url https://api.example.com
  $ opcli config set scopes read_orders,read_claims,read_store
  $ printf '%s' "$PROVIDER_TOKEN" | opcli config set provider-token --stdin`,
    )
    .action(async (key: string, value: string | undefined, flags: { stdin?: boolean }) => {
      if (value !== undefined && flags.stdin) throw new UsageError('Give the value either as an argument or with --stdin, not both.');
      await run({ key, value, stdin: !!flags.stdin }, deps);
    });
}

/** Validates and stores one setting; secrets go to the credential store. */
export async function run(opts: SetOptions, deps: Deps): Promise<void> {
  const key = requireKey(opts.key);
  let raw = opts.value;
  if (opts.stdin) raw = (await readStdinText(deps)).replace(/\r?\n$/, '');
  else if (raw === undefined) {
    if (!deps.canPrompt()) {
      throw new UsageError(`No value for ${key.key}.`, `Pass it as an argument or pipe it in: \`opcli config set ${key.key} --stdin\`.`);
    }
    const prompter = await deps.prompter();
    raw = key.secret
      ? await prompter.password({ message: `${key.description}:`, validate: (v) => (v ? true : 'a value is required') })
      : await prompter.input({ message: `${key.description}:` });
  } else if (key.secret) {
    deps.err(`Warning: a secret on the command line stays in your shell history; prefer \`--stdin\`.\n`);
  }
  deps.redactor.add(key.secret ? raw : undefined);
  const value = parseValue(key, raw ?? '');
  const profile = await profileName(deps);
  const settingsStore = await deps.settings();
  if (!settingsStore.listProfiles().includes(profile) && !(await deps.credentials()).profiles().includes(profile)) {
    deps.err(`Creating profile "${profile}".\n`);
  }
  const { writeSetting } = await import('../../config/write-setting.js');
  const stores = { settings: settingsStore, credentials: await deps.credentials(), envBaseUrl: deps.env.OPCLI_BASE_URL?.trim() };
  const warnings = await writeSetting(profile, key, value, stores);
  deps.err(`Set ${key.key} for profile "${profile}".\n`);
  for (const warning of warnings) deps.err(`${warning}\n`);
}

/**
 * The profile commands act on: --profile, OPCLI_PROFILE, the current one, or "default". With
 * `mustExist`, a name given on purpose that matches no profile is refused with the closest one.
 */
export async function profileName(deps: Deps, options: { mustExist?: boolean } = {}): Promise<string> {
  const { pickProfileName, requireKnownProfile } = await import('../../config/profile.js');
  const settings = await deps.settings();
  const name = pickProfileName(deps.globals.profile, deps.env, settings.currentProfile());
  if (options.mustExist)
    requireKnownProfile(name, [...new Set([...settings.listProfiles(), ...(await deps.credentials()).profiles()])], deps.globals.profile, deps.env);
  return name;
}
