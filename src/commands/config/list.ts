import type { Command } from 'commander';
import { getAtPath } from '../../config/settings.js';
import { SETTING_KEYS } from '../../config/setting-keys.js';
import type { Deps } from '../../cli/deps.js';
import { mask } from '../../core/redact.js';
import { type JsonFlag, jsonFields, pickFields } from '../../core/json-fields.js';
import { outputMode, printJson, printTable } from '../../core/output.js';
import { maskRecordUrl } from '../../record-pg/url.js';

/** The fields of a setting in `--json` (docs/json.md). */
export const SETTING_FIELDS = ['key', 'value', 'source', 'description'];
import { profileName } from './set.js';

/** Registers `config list`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('list')
    .description('List every setting of the active profile, secrets masked, with environment overrides')
    .option('--json [fields]', 'print JSON; with fields (comma-separated), only those of each setting (docs/json.md)')
    .addHelpText('after', '\nExamples:\n  $ opcli config list\n  $ opcli --profile sandbox config list --json\n  $ opcli config list --json key,source')
    .action(async (flags: { json?: JsonFlag }) => run({ json: !!flags.json, fields: jsonFields(flags.json, '--json', SETTING_FIELDS) }, deps));
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
export async function run(opts: { json: boolean; fields?: string[] }, deps: Deps): Promise<void> {
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
