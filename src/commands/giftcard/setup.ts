import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { OpcliError, UsageError } from '../../errors.js';

/** Flag values of `giftcard setup`: settings to write (undefined: keep) and whether to check. */
export interface SetupOptions {
  values: Partial<Record<SetupKey, string>>;
  tokenStdin: boolean;
  check: boolean;
  json: boolean;
}

/** The provider settings `setup` writes, in the order it asks for them. */
export const SETUP_KEYS = ['provider-name', 'provider-api-url', 'provider-token', 'shop-url', 'trigger-id', 'trigger-url', 'native-url'] as const;
export type SetupKey = (typeof SETUP_KEYS)[number];

const FLAG_OF: Record<Exclude<SetupKey, 'provider-token'>, string> = {
  'provider-name': 'providerName',
  'provider-api-url': 'apiUrl',
  'shop-url': 'shopUrl',
  'trigger-id': 'triggerId',
  'trigger-url': 'triggerUrl',
  'native-url': 'nativeUrl',
};

/** Registers `giftcard setup`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('setup')
    .description('Configure the gift card provider (asks on a terminal), or --check the configuration without issuing anything')
    .option('--provider-name <name>', 'provider name; forms the header x-<name>-access-token')
    .option('--api-url <url>', "the provider's credit API base URL")
    .option('--token-stdin', 'read the credit API token from standard input')
    .option('--shop-url <domain>', 'the store domain at the provider (shop_url)')
    .option('--trigger-id <uuid>', "the trigger workflow id: the UUID at the end of the execute URL, not the whole URL")
    .option('--trigger-url <url>', 'the execute URL without the trigger id')
    .option('--native-url <url>', "the storefront's native gift card endpoint base URL")
    .option('--check', 'test the settings: token accepted, store domain found, trigger id well-formed (issues nothing)')
    .option('--json', 'print the check results as JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli giftcard setup                       # asks for each setting on a terminal
  $ printf '%s' "$TOKEN" | opcli giftcard setup --provider-name giftly \\
      --api-url https://api.giftly.example --shop-url shop.example --token-stdin
  $ opcli giftcard setup --trigger-id 3f1c2a4e-8d5b-4c1e-9f7a-2b6d8e0c1a3f --trigger-url https://hooks.giftly.example/execute
  $ opcli giftcard setup --check`,
    )
    .action(async (flags: Record<string, string | boolean | undefined>) => {
      const values: SetupOptions['values'] = {};
      for (const [key, flag] of Object.entries(FLAG_OF)) {
        const v = flags[flag];
        if (typeof v === 'string') values[key as SetupKey] = v;
      }
      await run({ values, tokenStdin: !!flags.tokenStdin, check: !!flags.check, json: !!flags.json }, deps);
    });
}

/** Writes the given (or asked) settings, then checks them when asked. */
export async function run(opts: SetupOptions, deps: Deps): Promise<void> {
  const [{ findSettingKey, getAtPath, patchAtPath }, { parseValue, profileName }, { readStdinText }] = await Promise.all([
    import('../../config/settings.js'),
    import('../config/set.js'),
    import('../../stdin.js'),
  ]);
  const values = { ...opts.values };
  if (opts.tokenStdin) {
    values['provider-token'] = (await readStdinText(deps)).replace(/\r?\n$/, '');
    deps.redactor.add(values['provider-token']);
  }
  const given = Object.keys(values).length > 0;
  const profile = await profileName(deps);
  if (!given && !opts.check) {
    if (!deps.canPrompt()) {
      throw new UsageError(
        'giftcard setup asks for the settings on a terminal, and there is none here.',
        'Pass them as flags (--provider-name, --api-url, --shop-url, --token-stdin, --trigger-id, --trigger-url, --native-url), or use --check to test the current ones.',
      );
    }
    const settings = (await deps.settings()).getProfile(profile) ?? {};
    const secrets = (await deps.credentials()).read(profile);
    const prompter = await deps.prompter();
    deps.err(`Gift card provider settings for profile "${profile}" (Enter keeps the current value; leave optional ones empty).\n`);
    for (const name of SETUP_KEYS) {
      const key = findSettingKey(name);
      if (!key) continue;
      const validate = (v: string) => {
        if (!v) return true;
        try {
          parseValue(key, v);
          return true;
        } catch (error) {
          return error instanceof Error ? error.message : 'invalid value';
        }
      };
      if (key.secret) {
        const has = !!secrets.providerToken;
        const answer = await prompter.password({ message: `${key.description}${has ? ' (Enter keeps the stored one)' : ''}:`, validate });
        if (answer) {
          deps.redactor.add(answer);
          values[name] = answer;
        }
      } else {
        const current = getAtPath(settings, key.path);
        const answer = await prompter.input({
          message: `${key.description}:`,
          default: typeof current === 'string' ? current : undefined,
          validate,
        });
        if (answer && answer !== current) values[name] = answer;
      }
    }
  }
  const written: string[] = [];
  if (Object.keys(values).length > 0) {
    const parsed = Object.entries(values).map(([name, raw]) => {
      const key = findSettingKey(name);
      if (!key) throw new UsageError(`Unknown setting ${name}.`);
      return { key, value: parseValue(key, raw as string) };
    });
    const settingsStore = await deps.settings();
    for (const { key, value } of parsed) {
      if (key.secret) {
        await (await deps.credentials()).update(profile, (cur) => ({ ...cur, [key.path[0] as string]: value }));
      } else settingsStore.updateProfile(profile, patchAtPath(key.path, value));
      written.push(key.key);
    }
    deps.err(`Saved ${written.join(', ')} for profile "${profile}".\n`);
  }
  if (opts.check) await check(opts, deps);
  else if (written.length) deps.err('Test them with `opcli giftcard setup --check`.\n');
}

interface CheckRow {
  check: string;
  result: 'ok' | 'failed' | 'not configured' | 'not checked';
  detail: string;
}

/** Tests the provider settings without issuing anything. */
async function check(opts: SetupOptions, deps: Deps): Promise<void> {
  const [{ providerClient, ProviderRefusedError, PROVIDER_ADVICE, nativeUrlProblem }, { TriggerId, PROVIDER_ERRORS }, chain, output] = await Promise.all([
    import('../../giftcard/provider.js'),
    import('../../schemas.js'),
    import('../../giftcard/chain.js'),
    import('../../output.js'),
  ]);
  const { client, settings } = await providerClient(deps, 10_000);
  const { baseUrl } = await deps.profile();
  const rows: CheckRow[] = [];
  const missing = (['name', 'apiUrl', 'shopUrl', 'token'] as const).filter((k) => !settings[k]);
  const names = { name: 'provider-name', apiUrl: 'provider-api-url', shopUrl: 'shop-url', token: 'provider-token' };
  if (missing.length) {
    const detail = `missing ${missing.map((m) => names[m]).join(', ')}`;
    rows.push({ check: 'credit API token', result: 'not configured', detail });
    rows.push({ check: 'store domain', result: 'not configured', detail });
  } else {
    // A lookup for a customer that does not exist tells the three answers apart:
    // 401 "API key not found", 404 "Store domain not found", 404 "gift card not found".
    try {
      await client.lookup('opcli-setup-check');
      rows.push({ check: 'credit API token', result: 'ok', detail: `accepted in ${client.tokenHeader}` });
      rows.push({ check: 'store domain', result: 'ok', detail: `${settings.shopUrl} is known to the provider` });
    } catch (error) {
      if (error instanceof ProviderRefusedError && error.providerMessage === PROVIDER_ERRORS.apiKeyNotFound) {
        rows.push({ check: 'credit API token', result: 'failed', detail: `${error.providerMessage}. ${PROVIDER_ADVICE[error.providerMessage]}` });
        rows.push({ check: 'store domain', result: 'not checked', detail: 'needs an accepted token first' });
      } else if (error instanceof ProviderRefusedError && error.providerMessage === PROVIDER_ERRORS.storeDomainNotFound) {
        rows.push({ check: 'credit API token', result: 'ok', detail: `accepted in ${client.tokenHeader}` });
        rows.push({ check: 'store domain', result: 'failed', detail: `${error.providerMessage}. ${PROVIDER_ADVICE[error.providerMessage]}` });
      } else {
        const message = error instanceof Error ? error.message : String(error);
        rows.push({ check: 'credit API token', result: 'failed', detail: message });
        rows.push({ check: 'store domain', result: 'not checked', detail: 'the provider could not be reached' });
      }
    }
  }
  if (!settings.triggerId) rows.push({ check: 'trigger id', result: 'not configured', detail: 'the trigger workflow path is off' });
  else if (!TriggerId.safeParse(settings.triggerId).success) {
    rows.push({ check: 'trigger id', result: 'failed', detail: `"${settings.triggerId}" is not a UUID: enter only the last path segment of the execute URL` });
  } else if (!settings.triggerUrl) rows.push({ check: 'trigger id', result: 'failed', detail: 'well-formed, but trigger-url (the execute URL without the id) is missing' });
  else rows.push({ check: 'trigger id', result: 'ok', detail: `well-formed; execute URL ${client.triggerUrl()}` });
  const nativeProblem = nativeUrlProblem(settings.nativeUrl, baseUrl);
  rows.push(
    !settings.nativeUrl
      ? { check: 'native gift card', result: 'not configured', detail: 'the last fallback is off' }
      : nativeProblem
        ? { check: 'native gift card', result: 'failed', detail: `${nativeProblem} Set native-url on the service's host, or unset it.` }
        : { check: 'native gift card', result: 'ok', detail: `configured (${client.nativeUrl()}); not contacted, it would issue a card` },
  );
  let first: string;
  try {
    first = chain.describePath(chain.planChain(settings, { customerId: 'x' }, baseUrl).first);
  } catch (error) {
    first = nativeProblem && error instanceof UsageError ? 'none: the native URL is refused' : 'none: nothing is configured';
  }
  const failed = rows.filter((r) => r.result === 'failed');
  if (opts.json) output.printJson(deps, { ok: failed.length === 0, firstPath: first, checks: rows });
  else {
    await output.printTable(
      deps,
      [
        { header: 'CHECK', value: (r) => r.check },
        { header: 'RESULT', value: (r) => r.result },
        { header: 'DETAIL', value: (r) => r.detail },
      ],
      rows,
      output.outputMode(deps, {}),
    );
    deps.err(`First path for a customer with a known id: ${first}.\n`);
  }
  if (failed.length) throw new OpcliError(`${failed.length} provider check(s) failed: ${failed.map((f) => f.check).join(', ')}.`, { hint: 'See the details above.' });
}
