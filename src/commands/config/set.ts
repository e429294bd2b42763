import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { UsageError } from '../../core/errors.js';
import { keyArgument, requireKey } from './keys.js';
import { parseValue } from './values.js';
import { pickProfileName, requireKnownProfile } from '../../config/profile.js';
import { writeSetting } from '../../config/write-setting.js';
import { readSecret } from '../secret-input.js';

export interface SetOptions {
  key: string;
  value?: string;
  stdin: boolean;
  /** --from-file: read the value from this file. */
  fromFile?: string;
}

/** Registers `config set`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('set')
    .description('Set a setting of the active profile')
    .addArgument(keyArgument('setting name, e.g. base-url'))
    .argument('[value]', 'the value (a secret: use --stdin or --from-file, or leave it out to be asked)')
    .option('--stdin', 'read the value from standard input (keeps secrets out of `ps` and shell history)')
    .option('--from-file <path>', 'read the value from a file (one trailing line break is dropped)')
    .addHelpText(
      'after',
      `
Examples:
  $ printf '%s' "$CLIENT_SECRET" | opcli config set client-secret --stdin
  $ opcli config set provider-token --from-file ~/.config/giftly-token
  $ opcli config set base-url https://api.example.com
  $ opcli config set scopes read_orders,read_claims,read_store

A secret (client-secret, provider-token) given as an argument still works, with a warning: other
users see it in \`ps\`, and the shell keeps it in its history.`,
    )
    .action(async (key: string, value: string | undefined, flags: { stdin?: boolean; fromFile?: string }) => {
      await run({ key, value, stdin: !!flags.stdin, fromFile: flags.fromFile }, deps);
    });
}

/** Validates and stores one setting; secrets go to the credential store. */
export async function run(opts: SetOptions, deps: Deps): Promise<void> {
  const key = requireKey(opts.key);
  let raw = await readSecret(deps, { stdin: opts.stdin, fromFile: opts.fromFile, argument: opts.value }, `the ${key.key} value`, { secret: !!key.secret });
  if (raw === undefined) {
    if (!deps.canPrompt()) {
      throw new UsageError(
        `No value for ${key.key}.`,
        key.secret
          ? `Pipe it in (\`opcli config set ${key.key} --stdin\`) or read it from a file (\`opcli config set ${key.key} --from-file PATH\`).`
          : `Pass it as an argument, or with --stdin or --from-file PATH.`,
      );
    }
    const prompter = await deps.prompter();
    raw = key.secret
      ? await prompter.password({ message: `${key.description}:`, validate: (v) => (v ? true : 'a value is required') })
      : await prompter.input({ message: `${key.description}:` });
  }
  deps.redactor.add(key.secret ? raw : undefined);
  const value = parseValue(key, raw ?? '');
  if (key.passwordSecret) {
    const password = (value as { password?: string }).password;
    deps.redactor.add(password);
    if (password && opts.value !== undefined) {
      deps.err(
        `Warning: the password in the URL can be seen by other users of this computer (\`ps\`) and stays in your shell history; \`opcli config set ${key.key} --stdin\` keeps it out, or leave it out and use PGPASSWORD or ~/.pgpass.\n`,
      );
    }
  }
  const profile = await profileName(deps);
  const settingsStore = await deps.settings();
  if (!settingsStore.listProfiles().includes(profile) && !(await deps.credentials()).profiles().includes(profile)) {
    deps.err(`Creating profile "${profile}".\n`);
  }
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
  const settings = await deps.settings();
  const name = pickProfileName(deps.globals.profile, deps.env, settings.currentProfile());
  if (options.mustExist)
    requireKnownProfile(name, [...new Set([...settings.listProfiles(), ...(await deps.credentials()).profiles()])], deps.globals.profile, deps.env);
  return name;
}
