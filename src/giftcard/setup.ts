/**
 * `giftcard setup` without the terminal: values normalised the way people paste them (a whole
 * trigger execute URL, https://shop.example/), each checked before any is written, and the check
 * that tells a wrong token from a wrong store domain without issuing anything. No prompt, no print.
 */
import type { CredentialStore } from '../config/credentials.js';
import type { SettingsStore } from '../config/settings.js';
import { findSettingKey, type SettingKey } from '../config/setting-keys.js';
import { writeSetting } from '../config/write-setting.js';
import { AuthError, UsageError } from '../core/errors.js';
import { TriggerId } from '../schemas.js';
import { describePath, planChain } from './issuance.js';
import { type ProviderClient, ProviderRefusedError, type ProviderSettings, PROVIDER_ADVICE, nativeUrlProblem } from './provider.js';

/** Setting names (as `config set` knows them) to raw values. */
type SetupValues = Partial<Record<string, string>>;

/** Normalises pasted values, saying what changed: an execute URL gives the trigger id (its last segment) and trigger-url; a shop URL its host. */
export function normaliseValues(values: SetupValues): { values: SetupValues; notes: string[] } {
  const out = { ...values };
  const notes: string[] = [];
  const trigger = out['trigger-id']?.trim();
  if (trigger && /^https?:\/\//i.test(trigger)) {
    const url = URL.canParse(trigger) ? new URL(trigger) : undefined;
    const segments = url ? url.pathname.split('/').filter(Boolean) : [];
    const id = segments.pop();
    if (url && id && TriggerId.safeParse(id).success) {
      out['trigger-id'] = id;
      const base = `${url.origin}/${segments.join('/')}`.replace(/\/+$/, '');
      if (!out['trigger-url']) out['trigger-url'] = base;
      notes.push(`Took the trigger id ${id} from the end of the execute URL${values['trigger-url'] ? '' : `; the execute URL without it is ${base}`}.`);
    }
  }
  const shop = out['shop-url']?.trim();
  if (shop) {
    const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(shop) && URL.canParse(shop) ? new URL(shop) : undefined;
    const domain = (url ? url.host : shop.replace(/\/+$/, '')).toLowerCase();
    if (domain !== shop) notes.push(`Saved the store domain as ${domain} (the provider wants the domain alone, not ${shop}).`);
    out['shop-url'] = domain;
  }
  if (out.currency) out.currency = out.currency.trim().toUpperCase();
  return { values: out, notes };
}

interface SettingChange {
  key: SettingKey;
  value: unknown;
}

/** Normalises the values and checks every one with `parse` (throwing a ValidationError naming the flag); writes nothing. */
export function planSettings(values: SetupValues, parse: (key: SettingKey, raw: string) => unknown): { changes: SettingChange[]; notes: string[] } {
  const normal = normaliseValues(values);
  const changes = Object.entries(normal.values)
    .filter(([, raw]) => raw !== undefined)
    .map(([name, raw]) => {
      const key = findSettingKey(name);
      if (!key) throw new UsageError(`Unknown setting ${name}.`);
      return { key, value: parse(key, raw as string) };
    });
  return { changes, notes: normal.notes };
}

/** Writes checked settings, the token last (it is bound to the provider-api-url); answers warnings about a token bound elsewhere. */
export async function saveSettings(
  profile: string,
  changes: SettingChange[],
  stores: { settings(): Promise<SettingsStore>; credentials(): Promise<CredentialStore> },
): Promise<string[]> {
  const both = { settings: await stores.settings(), credentials: await stores.credentials() };
  const secrets = changes.filter((c) => c.key.secret).map((c) => c.key.path[0] as string);
  const warnings: string[] = [];
  for (const { key, value } of [...changes].sort((a, b) => Number(!!a.key.secret) - Number(!!b.key.secret))) {
    warnings.push(...(await writeSetting(profile, key, value, both, secrets)));
  }
  return warnings;
}

interface CheckRow {
  check: string;
  result: 'ok' | 'failed' | 'not configured' | 'not checked';
  detail: string;
}

const NAMES = { name: 'provider-name', apiUrl: 'provider-api-url', shopUrl: 'shop-url', token: 'provider-token' } as const;

/** The made-up customer id of the probe lookup: no store has it, and nothing is paid. */
const PROBE_CUSTOMER = 'opcli-setup-check';

/** Phrases of a 404 about the customer that show the lookup itself was accepted. */
const UNKNOWN_CUSTOMER_PHRASES = ['customer not found', 'customer id not found', 'unknown customer', 'no such customer', 'not linked'];

/** CHOICE (docs/spec-choices.md#setup-check-probe): an answer to the probe that proves the token accepted and the store found. */
function probeAnswered(error: ProviderRefusedError): boolean {
  if (error.condition === 'balance-update') return true;
  if (error.condition !== 'other' || error.status !== 404) return false;
  const said = error.providerMessage.toLowerCase();
  return UNKNOWN_CUSTOMER_PHRASES.some((phrase) => said.includes(phrase));
}

/** The credit API rows: a lookup for a customer that does not exist tells the answers apart. */
async function creditApiRows(client: ProviderClient, settings: ProviderSettings): Promise<CheckRow[]> {
  const missing = (['name', 'apiUrl', 'shopUrl', 'token'] as const).filter((k) => !settings[k]);
  if (missing.length) {
    const detail = `missing ${missing.map((m) => NAMES[m]).join(', ')}`;
    return [
      { check: 'credit API token', result: 'not configured', detail },
      { check: 'store domain', result: 'not configured', detail },
    ];
  }
  const tokenOk: CheckRow = { check: 'credit API token', result: 'ok', detail: `accepted (sent as ${client.tokenHeader})` };
  const storeOk: CheckRow = { check: 'store domain', result: 'ok', detail: `${settings.shopUrl} is known to the provider` };
  try {
    await client.lookup(PROBE_CUSTOMER);
    return [tokenOk, storeOk];
  } catch (error) {
    // A token stored for another provider URL is refused before anything is sent: the command stops.
    if (error instanceof AuthError) throw error;
    // The provider looked the made-up customer up, so it accepted the token and found the store.
    if (error instanceof ProviderRefusedError && probeAnswered(error)) {
      return [
        { ...tokenOk, detail: `${tokenOk.detail}; the test lookup was answered "${error.providerMessage}", as expected for a made-up customer` },
        storeOk,
      ];
    }
    if (error instanceof ProviderRefusedError && error.condition === 'store-domain') {
      return [tokenOk, { check: 'store domain', result: 'failed', detail: `${error.providerMessage}. ${PROVIDER_ADVICE['store-domain']}` }];
    }
    if (error instanceof ProviderRefusedError && (error.condition === 'api-key' || error.status === 401 || error.status === 403)) {
      const said = error.condition === 'api-key' ? error.providerMessage : `the provider refused the token (${error.status}): ${error.providerMessage}`;
      return [
        { check: 'credit API token', result: 'failed', detail: `${said}. ${PROVIDER_ADVICE['api-key']}` },
        { check: 'store domain', result: 'not checked', detail: 'needs an accepted token first' },
      ];
    }
    const message = error instanceof Error ? error.message : String(error);
    return [
      { check: 'credit API token', result: 'failed', detail: `the provider did not answer as expected: ${message}` },
      { check: 'store domain', result: 'not checked', detail: 'the provider did not answer as expected' },
    ];
  }
}

/** Tests the provider settings without issuing anything; the first path in words. */
export async function checkProvider(
  client: ProviderClient,
  settings: ProviderSettings,
  baseUrl: string | undefined,
): Promise<{ rows: CheckRow[]; firstPath: string }> {
  const rows = await creditApiRows(client, settings);
  if (!settings.triggerId) rows.push({ check: 'trigger id', result: 'not configured', detail: 'the trigger workflow path is off' });
  else if (!TriggerId.safeParse(settings.triggerId).success) {
    rows.push({ check: 'trigger id', result: 'failed', detail: `"${settings.triggerId}" is not a UUID: enter only the last path segment of the execute URL` });
  } else if (!settings.triggerUrl)
    rows.push({ check: 'trigger id', result: 'failed', detail: 'well-formed, but trigger-url (the execute URL without the id) is missing' });
  else rows.push({ check: 'trigger id', result: 'ok', detail: `well-formed; execute URL ${client.triggerUrl()}` });
  const nativeProblem = nativeUrlProblem(settings.nativeUrl, baseUrl);
  rows.push(
    !settings.nativeUrl
      ? { check: 'native gift card', result: 'not configured', detail: 'the last fallback is off' }
      : nativeProblem
        ? { check: 'native gift card', result: 'failed', detail: `${nativeProblem} Set native-url on the service's host, or unset it.` }
        : { check: 'native gift card', result: 'ok', detail: `configured (${client.nativeUrl()}); not contacted, it would issue a card` },
  );
  let firstPath: string;
  try {
    firstPath = describePath(planChain(settings, { customerId: 'x' }, baseUrl).first);
  } catch {
    firstPath = nativeProblem ? 'none: the native URL is refused' : 'none: nothing is configured';
  }
  return { rows, firstPath };
}
