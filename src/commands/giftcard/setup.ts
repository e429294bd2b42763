/**
 * `opcli giftcard setup`: the provider settings from flags, or asked on a terminal in plain words
 * (Enter keeps the current value), written once each is checked, then tested (`--check` only tests).
 */
import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { findSettingKey } from '../../config/setting-keys.js';
import { getAtPath } from '../../config/settings.js';
import { OpcliError, UsageError } from '../../core/errors.js';
import { completeValues } from '../../core/flags.js';
import * as output from '../../core/output.js';
import { DEFAULT_CURRENCY } from '../../giftcard/money.js';
import { providerClient } from '../../giftcard/provider.js';
import * as setup from '../../giftcard/setup.js';
import { CURRENCY_CODES } from '../../schemas.js';
import { parseValue, profileName } from '../config/index.js';
import { readSecret } from '../secret-input.js';

/** The settings `setup` asks for, in order, each question short enough to fit 80 columns with its value. */
const SETUP_QUESTIONS = {
  'provider-name': 'Provider name, one word (e.g. giftly):',
  'provider-api-url': 'Provider API address (e.g. https://api.giftly.example):',
  'provider-token': 'Credit API token (hidden as you type):',
  'shop-url': 'Store domain at the provider (e.g. shop.example):',
  'trigger-id': 'Trigger workflow id, or its execute URL',
  'trigger-url': 'Trigger execute URL, without the id:',
  'native-url': 'Storefront gift card address, last fallback',
  currency: 'Currency of the amounts you issue:',
} as const;
/** The settings a person may leave empty: the question says what Enter does (keep the stored value, or skip). */
const OPTIONAL = new Set<string>(['trigger-id', 'native-url']);
type SetupKey = keyof typeof SETUP_QUESTIONS;

/** Asks for each provider setting and answers the values that changed, as typed. */
async function askSettings(deps: Deps, profile: string): Promise<Record<string, string>> {
  const settings = (await deps.settings()).getProfile(profile) ?? {};
  const secrets = (await deps.credentials()).read(profile);
  const prompter = await deps.prompter();
  const values: Record<string, string> = {};
  deps.err(`Gift card provider settings for profile "${profile}". Enter keeps the value in parentheses.\n`);
  for (const [name, question] of Object.entries(SETUP_QUESTIONS)) {
    const key = findSettingKey(name);
    if (!key) continue;
    // A whole execute URL pasted for the trigger id already gave the trigger URL.
    if (name === 'trigger-url' && values['trigger-id'] && setup.normaliseValues({ 'trigger-id': values['trigger-id'] }).values['trigger-url']) continue;
    const validate = (v: string) => {
      if (!v) return true;
      try {
        parseValue(key, setup.normaliseValues({ [name]: v }).values[name] as string);
        return true;
      } catch (error) {
        return error instanceof Error ? error.message : 'invalid value';
      }
    };
    if (key.secret) {
      const keep = secrets.providerToken ? ' Enter keeps the stored one.' : '';
      const answer = await prompter.password({ message: `${question}${keep}`, validate });
      if (answer) {
        deps.redactor.add(answer);
        values[name] = answer;
      }
      continue;
    }
    const stored = getAtPath(settings, key.path);
    const current = typeof stored === 'string' ? stored : undefined;
    // An optional setting says what Enter does: keep what is stored, or skip it.
    const message = OPTIONAL.has(name) ? `${question} (Enter ${current ? 'keeps the stored one' : 'to skip'}):` : question;
    // The currency shows its default (USD) when none is stored; Enter then keeps the default, nothing is written.
    const shown = current ?? (name === 'currency' ? DEFAULT_CURRENCY : undefined);
    const answer = (await prompter.input({ message, default: shown, validate })).trim();
    // Kept as typed: the caller normalises every value once and says what it changed.
    if (answer && answer !== shown) values[name] = answer;
  }
  return values;
}

/** Flag values of `giftcard setup`: settings to write (undefined: keep) and whether to check. */
export interface SetupOptions {
  values: Partial<Record<SetupKey, string>>;
  tokenStdin: boolean;
  /** --token-from-file: read the credit API token from this file. */
  tokenFromFile?: string;
  /** Run the check: after writing (unless --no-check), or alone with --check. */
  check: boolean;
  checkOnly: boolean;
  json: boolean;
}

const FLAG_OF: Record<Exclude<SetupKey, 'provider-token'>, string> = {
  'provider-name': 'providerName',
  'provider-api-url': 'apiUrl',
  'shop-url': 'shopUrl',
  'trigger-id': 'triggerId',
  'trigger-url': 'triggerUrl',
  'native-url': 'nativeUrl',
  currency: 'currency',
};

/** The flag a setting came from, to name it in an error: provider-api-url is --api-url. */
function flagOf(name: SetupKey): string {
  if (name === 'provider-token') return 'the token (--token-stdin)';
  return `--${FLAG_OF[name].replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

export function register(group: Command, deps: Deps): void {
  group
    .command('setup')
    .description('Configure the gift card provider (asks on a terminal) and check it; --check only checks, issuing nothing')
    .option('--provider-name <name>', 'provider name, letters, digits and -: forms the header x-<name>-access-token')
    .option('--api-url <url>', "the provider's credit API base URL")
    .option('--token-stdin', 'read the credit API token from standard input')
    .option('--token-from-file <path>', 'read the credit API token from a file')
    .option('--shop-url <domain>', 'the store domain at the provider (shop_url); https://shop.example/ is saved as shop.example')
    .option('--trigger-id <uuid-or-url>', 'the trigger workflow id (the UUID at the end of the execute URL), or the whole execute URL')
    .option('--trigger-url <url>', 'the execute URL without the trigger id (taken from a whole URL given to --trigger-id)')
    .option('--native-url <url>', "the storefront's native gift card endpoint base URL")
    .option('--currency <code>', 'currency of the amounts, three letters (default USD)')
    .option('--check', 'only test the settings: token accepted, store domain found, trigger id well-formed (issues nothing)')
    .option('--no-check', 'save without testing the settings')
    .option('--json', 'print the check results as JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli giftcard setup                       # asks for each setting on a terminal, then checks
  $ printf '%s' "$TOKEN" | opcli giftcard setup --provider-name giftly \\
      --api-url https://api.giftly.example --shop-url shop.example --token-stdin
  $ opcli giftcard setup --token-from-file ~/.config/giftly-token --no-check
  $ opcli giftcard setup --trigger-id https://hooks.giftly.example/execute/3f1c2a4e-8d5b-4c1e-9f7a-2b6d8e0c1a3f
  $ opcli giftcard setup --check

The token goes in the header x-<provider-name>-access-token of the credit API's calls only; the
trigger's execute URL gets no token unless \`opcli config set trigger-sends-token true\`.
Exit codes: 0 saved (and the check passed); 1 a check failed; 2 a value is not valid.`,
    )
    .action(async (flags: Record<string, string | boolean | undefined>) => {
      const values: SetupOptions['values'] = {};
      for (const [key, flag] of Object.entries(FLAG_OF)) {
        const v = flags[flag];
        if (typeof v === 'string') values[key as SetupKey] = v;
      }
      // --check and --no-check both defined: undefined when neither was given.
      const tokenFromFile = typeof flags.tokenFromFile === 'string' ? flags.tokenFromFile : undefined;
      await run(
        { values, tokenStdin: !!flags.tokenStdin, tokenFromFile, check: flags.check !== false, checkOnly: flags.check === true, json: !!flags.json },
        deps,
      );
    });
  const command = group.commands.find((c) => c.name() === 'setup');
  if (command) completeValues(command, { '--currency': CURRENCY_CODES });
}

/** Writes the given (or asked) settings, then checks them unless told not to. */
export async function run(opts: SetupOptions, deps: Deps): Promise<void> {
  let values: Record<string, string | undefined> = { ...opts.values };
  const token = await readSecret(deps, { stdin: opts.tokenStdin, fromFile: opts.tokenFromFile }, 'the credit API token', {
    stdinFlag: '--token-stdin',
    fileFlag: '--token-from-file',
  });
  if (token !== undefined) {
    values['provider-token'] = token;
    deps.redactor.add(token);
  }
  const profile = await profileName(deps);
  if (Object.keys(values).length === 0 && !opts.checkOnly) {
    if (!deps.canPrompt()) {
      throw new UsageError(
        'giftcard setup asks for the settings on a terminal, and there is none here.',
        'Pass them as flags (--provider-name, --api-url, --shop-url, --token-stdin or --token-from-file, --trigger-id, --trigger-url, --native-url, --currency), or use --check to test the current ones.',
      );
    }
    values = await askSettings(deps, profile);
  }
  // Every value is checked before anything is said to be saved or is written.
  const { changes, notes } = setup.planSettings(values, (key, raw) =>
    parseValue(key, raw, key.key === 'provider-token' && opts.tokenFromFile !== undefined ? 'the token (--token-from-file)' : flagOf(key.key as SetupKey)),
  );
  for (const note of notes) deps.err(`Note: ${note}\n`);
  if (changes.length > 0) {
    const warnings = await setup.saveSettings(profile, changes, deps);
    deps.err(`Saved ${changes.map((c) => c.key.key).join(', ')} for profile "${profile}".\n`);
    for (const warning of warnings) deps.err(`${warning}\n`);
  }
  if (opts.check) await check(opts.json, deps);
  else if (changes.length) deps.err('Test them with `opcli giftcard setup --check`.\n');
}

/** Tests the provider settings without issuing anything; exit 1 when a check fails. */
async function check(json: boolean, deps: Deps): Promise<void> {
  const { client, settings } = await providerClient(deps, 10_000);
  const { baseUrl } = await deps.profile();
  const { rows, firstPath } = await setup.checkProvider(client, settings, baseUrl);
  const failed = rows.filter((r) => r.result === 'failed');
  if (json) output.printJson(deps, { ok: failed.length === 0, firstPath, checks: rows });
  else {
    await output.printTable(
      deps,
      [
        { header: 'CHECK', value: (r) => r.check },
        { header: 'RESULT', value: (r) => r.result },
        // Wrapped, never cut: the error below points to these details.
        { header: 'DETAIL', value: (r) => r.detail, wrap: true },
      ],
      rows,
      output.outputMode(deps, {}),
    );
    deps.err(`First path for a customer with a known id: ${firstPath}.\n`);
  }
  if (failed.length)
    throw new OpcliError(`${failed.length} provider check(s) failed: ${failed.map((f) => f.check).join(', ')}.`, {
      hint: 'See the details above: each says what can cause it and what to do.',
    });
}
