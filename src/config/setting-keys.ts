/** The keys `opcli config set` accepts, where each is kept and how its value is checked. */
import * as z from 'zod';
import { isAbsolute } from 'node:path';
import { UsageError } from '../core/errors.js';
import { readPemBundle } from '../http/trust.js';
import { Currency, TriggerId } from '../schemas.js';
import { isSafeForCredentials, parseProxyUrl } from '../http/client.js';
import { parseRecordUrl } from '../record-pg/url.js';
import { PROGRESS_MODES } from '../core/ports.js';

/** Where a configurable value is kept and how it is checked. */
export interface SettingKey {
  key: string;
  description: string;
  /** Kept in the credential store (0600), masked in listings, settable from stdin. */
  secret?: boolean;
  /** Path inside ProfileSettings (or the secret's name in the credential store). */
  path: readonly string[];
  /** A URL whose password is kept apart: `parse` gives `{ url, password }`, the password goes to this secret (none: removed). */
  passwordSecret?: 'recordPassword';
  parse: (raw: string) => unknown;
}

/** Refuses a value in zod's form, so `config set` words it as it words zod's own checks. */
const refuse = (message: string): never => {
  throw new z.ZodError([{ code: 'custom', message, path: [], input: undefined }]);
};

/** A URL opened in a browser (the consent page): http or https. */
const pageUrl = (raw: string) => {
  const value = z.url({ message: `expected a URL such as https://api.example.com, got "${raw}"` }).parse(raw);
  if (!/^https?:$/.test(new URL(value).protocol))
    refuse(`expected an http(s) URL such as https://api.example.com, got "${value}" (opcli sends requests there)`);
  return value;
};
/** A URL opcli sends requests and credentials to: the HTTP client's own rule, applied when the value is set rather than only when it is used. */
const url = (raw: string) => {
  const value = pageUrl(raw);
  if (!isSafeForCredentials(new URL(value)))
    refuse(`plain http is allowed only to 127.0.0.1, localhost or [::1], got "${value}": use https:// (opcli sends credentials there)`);
  return value;
};
const text = (raw: string) => z.string().min(1, 'expected a value').parse(raw);
/** A provider name forms the header x-<name>-access-token, so it must be an HTTP header token. */
const providerName = (raw: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, `expected letters, digits and - only (it forms the header x-<name>-access-token), got "${raw}"`)
    .parse(raw.trim());
const list = (raw: string) =>
  raw
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

const trueFalse = (raw: string) => (raw === 'true' || raw === 'false' ? raw === 'true' : refuse(`expected true or false, got "${raw}"`));

/** The provider wants the store's domain alone (shop_url): no scheme, path, query or user. */
const shopDomain = (raw: string) => {
  const value = text(raw);
  // Without / ? # @ \ or spaces, what parses after https:// is a host (and maybe a port) alone.
  if (/[/?#@\\\s]/.test(value) || !URL.canParse(`https://${value}`)) {
    refuse(
      `expected the store's domain alone, such as shop.example, got "${value}" (\`opcli giftcard setup --shop-url\` also takes a whole URL and keeps its domain)`,
    );
  }
  return value;
};

/** Three capital letters, and a code of the spec's list. */
const currency = (raw: string) => {
  const value = z
    .string()
    .regex(/^[A-Z]{3}$/, `expected three capital letters such as USD or EUR, got "${raw}"`)
    .parse(raw.trim().toUpperCase());
  if (!Currency.safeParse(value).success) refuse(`"${value}" is not a currency code of the spec's list (ISO 4217, such as USD, EUR or GBP)`);
  return value;
};

/** An amount above zero with at most two decimals, kept as `1000.00`. */
const maxAmount = (raw: string) => {
  const value = raw.trim().replace(/,(?=\d{3}(?!\d))/g, '');
  const [whole = '0', cents = ''] = value.split('.');
  const amount = `${Number(whole)}.${cents.padEnd(2, '0')}`;
  if (!/^\d{1,10}(\.\d{1,2})?$/.test(value) || amount === '0.00') {
    refuse(`expected an amount above zero with at most two decimals, such as 1000 or 2500.00, got "${raw}"`);
  }
  return amount;
};

const progress = (raw: string) => z.enum(PROGRESS_MODES, { message: `expected auto, plain or none, got "${raw}"` }).parse(raw.trim().toLowerCase());

/** A proxy URL without a password: the settings file is not the credential store. */
const proxyUrl = (raw: string) => {
  const url = parseProxyUrl(raw.trim(), 'The proxy setting');
  // CHOICE (docs/spec-choices.md#proxy-password): a password is never written to the settings file.
  if (url.password) {
    throw new UsageError(
      'The proxy setting may not hold a password: the settings file is not where secrets are kept.',
      'Set the proxy without its password here and give the full http://user:password@host:port in HTTPS_PROXY (and HTTP_PROXY) for the runs that need it.',
    );
  }
  return url.href.replace(/\/$/, '');
};

/** An absolute path to a readable PEM file of CA certificates. */
const caFile = (raw: string) => {
  const path = raw.trim();
  if (!isAbsolute(path))
    throw new UsageError(`ca-file "${path}" is not an absolute path.`, 'Give the full path of the PEM file, such as /etc/ssl/company-ca.pem.');
  readPemBundle(path, 'ca-file', '/');
  return path;
};

/** `429,503`: HTTP error statuses (4xx or 5xx); a success or a redirect cannot mean "not processed". */
const notProcessedStatuses = (raw: string) => {
  const message = `expected HTTP error statuses (400 to 599) separated by commas, such as 429,503, got "${raw}"`;
  return z
    .array(z.string().regex(/^[45]\d\d$/, message))
    .min(1, message)
    .parse(list(raw))
    .map(Number);
};

const SECRET = { secret: true } as const;

type Row = readonly [path: string, parse: (raw: string) => unknown, kind?: Pick<SettingKey, 'secret' | 'passwordSecret'>];

/** Each key's dotted path in ProfileSettings (or the secret's name in the credential store), its check and its kind. */
const KEYS = {
  'base-url': ['baseUrl', url],
  'authorize-url': ['authorizeUrl', pageUrl],
  'client-id': ['clientId', text],
  'client-secret': ['clientSecret', text, SECRET],
  scopes: ['scopes', list],
  'store-id': ['storeId', text],
  'record-dir': ['recordDir', recordDirValue],
  'record-url': ['recordUrl', (raw) => parseRecordUrl(raw, 'record-url'), { passwordSecret: 'recordPassword' }],
  proxy: ['proxy', proxyUrl],
  'no-proxy': ['noProxy', text],
  'proxy-loopback': ['proxyLoopback', trueFalse],
  'ca-file': ['caFile', caFile],
  'not-processed-statuses': ['notProcessedStatuses', notProcessedStatuses],
  progress: ['progress', progress],
  accessible: ['accessible', trueFalse],
  'provider-name': ['provider.name', providerName],
  'provider-api-url': ['provider.apiUrl', url],
  'provider-token': ['providerToken', text, SECRET],
  'shop-url': ['provider.shopUrl', shopDomain],
  'trigger-id': ['provider.triggerId', (raw) => TriggerId.parse(raw)],
  'trigger-url': ['provider.triggerUrl', url],
  'native-url': ['provider.nativeUrl', url],
  // CHOICE (docs/spec-choices.md#trigger-needs-the-credit-api): the execute call goes without the token unless this says otherwise.
  'trigger-sends-token': ['provider.triggerSendsToken', trueFalse],
  currency: ['provider.currency', currency],
  'max-amount': ['provider.maxAmount', maxAmount],
  'sandbox-admin-secret': ['sandboxAdminSecret', text, SECRET],
} satisfies Record<string, Row>;

/** What each key is, as `config list` and the prompts of `config set` say it. */
const DESCRIPTIONS: Record<keyof typeof KEYS, string> = {
  'base-url': 'API base URL ({base_url} in the spec)',
  'authorize-url': 'consent page URL (default {base_url}/v1/oauth/authorize)',
  'client-id': 'OAuth client id (svc_app_...)',
  'client-secret': 'OAuth client secret (svc_secret_...)',
  scopes: 'scopes to request, comma-separated',
  'store-id': 'store id (client credentials, claims)',
  'record-dir': 'folder holding the record of claims filed and the gift card ledger, shared by a team (default: the config folder)',
  'record-url':
    "the team's record of claims and credits in PostgreSQL, postgresql://USER@HOST/DATABASE (OPCLI_RECORD_URL wins; a password in it goes to the credential store)",
  proxy: 'proxy for every request, http://host:port (wins over HTTPS_PROXY, HTTP_PROXY, ALL_PROXY)',
  'no-proxy': 'hosts reached without the proxy, as NO_PROXY lists them (wins over NO_PROXY)',
  'proxy-loopback': 'send requests to 127.0.0.1, localhost and ::1 through the proxy too (true/false, default false)',
  'ca-file': "PEM file of certificate authorities to trust besides Node's own (absolute path)",
  'not-processed-statuses': 'statuses after which a POST was certainly not processed, comma-separated (default 429; 421 and 429 always)',
  progress: 'progress of long work: auto (a redrawn line on a terminal, a sentence every 10 s elsewhere), plain or none (--progress, OPCLI_PROGRESS win)',
  accessible: 'accessible mode for screen readers: nothing redrawn, choices as numbered lists (true/false, default false; OPCLI_ACCESSIBLE wins)',
  'provider-name': 'gift card provider name (header x-<name>-access-token)',
  'provider-api-url': 'gift card provider credit API base URL',
  'provider-token': 'gift card provider credit API token',
  'shop-url': 'store domain at the provider (shop_url)',
  'trigger-id': 'trigger workflow id: the UUID at the end of the execute URL',
  'trigger-url': 'base of the trigger execute URL (without the id)',
  'native-url': "storefront's native gift card endpoint base URL",
  'trigger-sends-token': 'send the credit API token to the trigger execute URL too (true/false, default false)',
  currency: 'currency of the gift card amounts, three letters (default USD)',
  'max-amount': 'largest store credit giftcard issue pays without --allow-large, in the profile currency (default 1000.00)',
  'sandbox-admin-secret': 'the admin API secret of the local sandbox the profile points at (written by `opcli sandbox --write-profile`)',
};

/** Every key `opcli config set` accepts, in the order `config list` shows them. */
export const SETTING_KEYS: SettingKey[] = (Object.entries(KEYS) as [keyof typeof KEYS, Row][]).map(([key, [path, parse, kind]]) => ({
  key,
  description: DESCRIPTIONS[key],
  path: path.split('.'),
  parse,
  ...kind,
}));

/** A record folder as `config set record-dir` takes it: an absolute path (control characters are refused before). */
function recordDirValue(raw: string): string {
  const value = raw.trim();
  if (value === '') refuse('expected a folder, such as /srv/opcli-records');
  if (!isAbsolute(value)) refuse(`expected an absolute path, such as /srv/opcli-records, got "${value}"`);
  return value;
}

/** Looks a key up by name, or undefined. */
export function findSettingKey(key: string): SettingKey | undefined {
  return SETTING_KEYS.find((k) => k.key === key);
}
