import { type Command, Argument } from 'commander';
import { type Deps, knownProfiles } from '../../cli/deps.js';
import { lazyGroup } from '../../cli/program.js';
import { UsageError, OpcliError, ValidationError } from '../../core/errors.js';
import { pickProfileName, requireKnownProfile } from '../../config/profile.js';
import { writeSetting } from '../../config/write-setting.js';
import { readSecret } from '../secret-input.js';
import { getAtPath } from '../../config/settings.js';
import { mask } from '../../core/redact.js';
import { SETTING_KEYS, findSettingKey, type SettingKey } from '../../config/setting-keys.js';
import { type JsonFlag, jsonFields, pickFields } from '../../core/json-fields.js';
import { outputMode, printJson, printTable } from '../../core/output.js';
import { maskRecordUrl } from '../../record-pg/url.js';
import { posix, win32 } from 'node:path';
import { completesWith } from '../../core/flags.js';
import { ZodError } from 'zod';
import { textProblem } from '../../text/safe.js';

/** `opcli config`: read and write the active profile's settings. */
export const register = lazyGroup({
  name: 'config',
  description: 'Read and write profile settings (see `opcli config list` for the keys)',
  examples: `  $ opcli config set base-url https://api.example.com
  $ opcli config set client-id svc_app_123
  $ printf '%s' "$SECRET" | opcli config set client-secret --stdin
  $ opcli --profile staging config list`,
  verbs: {
    set: registerSet,
    get: registerGet,
    unset: registerUnset,
    list: registerList,
    path: registerPath,
  },
});

function registerSet(group: Command, deps: Deps): void {
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
      await runSet({ key, value, stdin: !!flags.stdin, fromFile: flags.fromFile }, deps);
    });
}

/** Validates and stores one setting; secrets go to the credential store. */
async function runSet(opts: { key: string; value?: string; stdin: boolean; fromFile?: string }, deps: Deps): Promise<void> {
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
  const stores = { settings: await deps.settings(), credentials: await deps.credentials(), envBaseUrl: deps.env.OPCLI_BASE_URL?.trim() };
  if (!knownProfiles(stores.settings, stores.credentials).includes(profile)) deps.err(`Creating profile "${profile}".\n`);
  const warnings = await writeSetting(profile, key, value, stores);
  deps.err(`Set ${key.key} for profile "${profile}".\n`);
  for (const warning of warnings) deps.err(`${warning}\n`);
}

/** The profile commands act on; with `mustExist`, a name given on purpose that matches none is refused with the closest one. */
export async function profileName(deps: Deps, options: { mustExist?: boolean } = {}): Promise<string> {
  const settings = await deps.settings();
  const name = pickProfileName(deps.globals.profile, deps.env, settings.currentProfile());
  if (options.mustExist) requireKnownProfile(name, knownProfiles(settings, await deps.credentials()), deps.globals.profile, deps.env);
  return name;
}

function registerGet(group: Command, deps: Deps): void {
  group
    .command('get')
    .description('Print one setting of the active profile (secrets masked unless --reveal)')
    .addArgument(keyArgument())
    .option('--reveal', 'print a secret in full')
    .addHelpText('after', '\nExamples:\n  $ opcli config get base-url\n  $ opcli --profile staging config get store-id')
    .action(async (key: string, flags: { reveal?: boolean }) => runGet({ key, reveal: !!flags.reveal }, deps));
}

/** Prints the stored value; exits 1 when the key is not set. */
async function runGet(opts: { key: string; reveal: boolean }, deps: Deps): Promise<void> {
  const key = requireKey(opts.key);
  const profile = await profileName(deps, { mustExist: true });
  let value: unknown;
  if (key.secret) value = (await deps.credentials()).read(profile)[key.path[0] as 'clientSecret' | 'providerToken'];
  else value = getAtPath((await deps.settings()).getProfile(profile) ?? {}, key.path);
  if (value === undefined) throw new OpcliError(`${key.key} is not set for profile "${profile}".`, { hint: `Set it with \`opcli config set ${key.key}\`.` });
  const text = Array.isArray(value) ? value.join(',') : String(value);
  deps.out(`${key.secret && !opts.reveal ? mask(text) : text}\n`);
}

function registerUnset(group: Command, deps: Deps): void {
  group
    .command('unset')
    .description('Remove a setting from the active profile')
    .addArgument(keyArgument())
    .addHelpText('after', '\nExamples:\n  $ opcli config unset trigger-id')
    .action(async (key: string) => runUnset({ key }, deps));
}

/** Removes one setting (secrets from the credential store). */
async function runUnset(opts: { key: string }, deps: Deps): Promise<void> {
  const key = requireKey(opts.key);
  const profile = await profileName(deps, { mustExist: true });
  await writeSetting(profile, key, undefined, { settings: await deps.settings(), credentials: await deps.credentials() });
  deps.err(`Unset ${key.key} for profile "${profile}".\n`);
}

/** The fields of a setting in `--json` (docs/json.md). */
export const SETTING_FIELDS = ['key', 'value', 'source', 'description'];

function registerList(group: Command, deps: Deps): void {
  group
    .command('list')
    .description('List every setting of the active profile, secrets masked, with environment overrides')
    .option('--json [fields]', 'print JSON; with fields (comma-separated), only those of each setting (docs/json.md)')
    .addHelpText('after', '\nExamples:\n  $ opcli config list\n  $ opcli --profile sandbox config list --json\n  $ opcli config list --json key,source')
    .action(async (flags: { json?: JsonFlag }) => runList({ json: !!flags.json, fields: jsonFields(flags.json, '--json', SETTING_FIELDS) }, deps));
}

const ENV_OVERRIDES: Record<string, string> = {
  'base-url': 'OPCLI_BASE_URL',
  'client-id': 'OPCLI_CLIENT_ID',
  'client-secret': 'OPCLI_CLIENT_SECRET',
  'record-url': 'OPCLI_RECORD_URL',
};

/** A URL whose password is kept apart (record-url): shown with `***` where a password is, from the environment or the credential store. */
function shownUrl(text: string, storedPassword: boolean): string {
  const masked = maskRecordUrl(text);
  if (!storedPassword || !URL.canParse(masked)) return masked;
  const url = new URL(masked);
  if (!url.password) url.password = '***';
  return url.href;
}

/** Prints key, value and where it comes from. */
async function runList(opts: { json: boolean; fields?: string[] }, deps: Deps): Promise<void> {
  const profile = await profileName(deps, { mustExist: true });
  const settings = (await deps.settings()).getProfile(profile) ?? {};
  const secrets = (await deps.credentials()).read(profile);
  const rows = SETTING_KEYS.map((key) => {
    const envName = ENV_OVERRIDES[key.key];
    const envValue = envName ? deps.env[envName] : undefined;
    const stored = key.secret ? secrets[key.path[0] as 'clientSecret' | 'providerToken'] : getAtPath(settings, key.path);
    const value = envValue || stored;
    const text = value === undefined ? undefined : Array.isArray(value) ? value.join(',') : String(value);
    const shown =
      text === undefined ? undefined : key.secret ? mask(text) : key.passwordSecret ? shownUrl(text, !envValue && !!secrets[key.passwordSecret]) : text;
    return {
      key: key.key,
      value: shown,
      source: envValue ? `env ${envName}` : stored !== undefined ? 'profile' : undefined,
      description: key.description,
    };
  });
  if (opts.json) return printJson(deps, { profile, settings: rows.map((row) => pickFields(row, opts.fields)) });
  deps.err(`Profile: ${profile}\n`);
  await printTable(
    deps,
    [
      { header: 'KEY', value: (r) => r.key },
      { header: 'VALUE', value: (r) => r.value ?? '' },
      { header: 'SOURCE', value: (r) => r.source ?? '' },
    ],
    rows,
    outputMode(deps, {}),
  );
}

function registerPath(group: Command, deps: Deps): void {
  group
    .command('path')
    .description('Print the config folder and its files (settings, credentials)')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExamples:\n  $ opcli config path\n  $ OPCLI_CONFIG_DIR=/tmp/opcli opcli config path')
    .action(async (flags: { json?: boolean }) => runPath({ json: !!flags.json }, deps));
}

/** Prints where opcli keeps its files. */
async function runPath(opts: { json: boolean }, deps: Deps): Promise<void> {
  // In the platform's separators (Windows takes both; OPCLI_CONFIG_DIR may mix them), as a person pastes them there.
  const { join, normalize } = deps.platform === 'win32' ? win32 : posix;
  const dir = deps.platform === 'win32' ? normalize(deps.configDir()) : deps.configDir();
  const files = { dir, settings: join(dir, 'settings.json'), credentials: join(dir, 'credentials.json') };
  if (opts.json) deps.out(`${JSON.stringify(files, null, 2)}\n`);
  else deps.out(`${dir}\n`);
}

/** The key named on the command line, or a usage error listing the keys. */
export function requireKey(name: string): SettingKey {
  const key = findSettingKey(name);
  if (!key) throw new UsageError(`Unknown setting "${name}".`, `Known settings: ${SETTING_KEYS.map((k) => k.key).join(', ')}.`);
  return key;
}

/** The `<key>` argument of config get, set and unset: completes to the setting keys. */
export function keyArgument(description = 'setting name'): Argument {
  return completesWith(
    new Argument('<key>', description),
    SETTING_KEYS.map((k) => k.key),
  );
}

/**
 * A setting's value as `config set` and `giftcard setup` take it: never garbled, then the key's own
 * rule (src/config/setting-keys.ts), refused naming the key (or `label`, its flag); an empty value is left to the rule.
 */
export function parseValue(key: SettingKey, raw: string, label = key.key): unknown {
  const fail = (message: string) => new ValidationError(`Invalid value for ${label}: ${message}`, [{ path: key.key, message }]);
  const problem = raw === '' ? undefined : textProblem(raw);
  if (problem) throw fail(`the value ${problem}.`);
  try {
    return key.parse(raw);
  } catch (error) {
    if (error instanceof ZodError) throw fail(error.issues[0]?.message ?? 'invalid value');
    throw error;
  }
}
