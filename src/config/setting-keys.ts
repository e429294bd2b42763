/** The keys `opcli config set` accepts, where each is kept and how its value is checked. */
import * as z from 'zod';
import { isAbsolute } from 'node:path';
import { UsageError } from '../core/errors.js';
import { parseProxyUrl } from '../http/transport.js';
import { readPemBundle } from '../http/trust.js';
import { TriggerId } from '../schemas.js';
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
  /**
   * A URL whose password is kept apart: `parse` gives `{ url, password }`, the URL (without it) goes
   * to `path` and the password to this secret of the credential store (none: removed).
   */
  passwordSecret?: 'recordPassword';
  parse: (raw: string) => unknown;
}

const url = (raw: string) => z.url({ message: `expected a URL such as https://api.example.com, got "${raw}"` }).parse(raw);
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

const trueFalse = (raw: string) =>
  z
    .enum(['true', 'false'], { message: `expected true or false, got "${raw}"` })
    .transform((v) => v === 'true')
    .parse(raw);

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

/** Every key `opcli config set` accepts, in the order `config list` shows them. */
export const SETTING_KEYS: SettingKey[] = [
  { key: 'base-url', description: 'API base URL ({base_url} in the spec)', path: ['baseUrl'], parse: url },
  { key: 'authorize-url', description: 'consent page URL (default {base_url}/v1/oauth/authorize)', path: ['authorizeUrl'], parse: url },
  { key: 'client-id', description: 'OAuth client id (svc_app_...)', path: ['clientId'], parse: text },
  { key: 'client-secret', description: 'OAuth client secret (svc_secret_...)', secret: true, path: ['clientSecret'], parse: text },
  { key: 'scopes', description: 'scopes to request, comma-separated', path: ['scopes'], parse: list },
  { key: 'store-id', description: 'store id (client credentials, claims)', path: ['storeId'], parse: text },
  {
    key: 'record-dir',
    description: 'folder holding the record of claims filed and the gift card ledger, shared by a team (default: the config folder)',
    path: ['recordDir'],
    parse: recordDirValue,
  },
  {
    key: 'record-url',
    description:
      "the team's record of claims and credits in PostgreSQL, postgresql://USER@HOST/DATABASE (OPCLI_RECORD_URL wins; a password in it goes to the credential store)",
    path: ['recordUrl'],
    passwordSecret: 'recordPassword',
    parse: (raw) => parseRecordUrl(raw, 'record-url'),
  },
  { key: 'proxy', description: 'proxy for every request, http://host:port (wins over HTTPS_PROXY, HTTP_PROXY, ALL_PROXY)', path: ['proxy'], parse: proxyUrl },
  { key: 'no-proxy', description: 'hosts reached without the proxy, as NO_PROXY lists them (wins over NO_PROXY)', path: ['noProxy'], parse: text },
  {
    key: 'proxy-loopback',
    description: 'send requests to 127.0.0.1, localhost and ::1 through the proxy too (true/false, default false)',
    path: ['proxyLoopback'],
    parse: trueFalse,
  },
  { key: 'ca-file', description: "PEM file of certificate authorities to trust besides Node's own (absolute path)", path: ['caFile'], parse: caFile },
  {
    key: 'not-processed-statuses',
    description: 'statuses after which a POST was certainly not processed, comma-separated (default 429; 421 and 429 always)',
    path: ['notProcessedStatuses'],
    parse: notProcessedStatuses,
  },
  {
    key: 'progress',
    description: 'progress of long work: auto (a redrawn line on a terminal, a sentence every 10 s elsewhere), plain or none (--progress, OPCLI_PROGRESS win)',
    path: ['progress'],
    parse: (raw) => z.enum(PROGRESS_MODES, { message: `expected auto, plain or none, got "${raw}"` }).parse(raw.trim().toLowerCase()),
  },
  {
    key: 'accessible',
    description: 'accessible mode for screen readers: nothing redrawn, choices as numbered lists (true/false, default false; OPCLI_ACCESSIBLE wins)',
    path: ['accessible'],
    parse: trueFalse,
  },
  { key: 'provider-name', description: 'gift card provider name (header x-<name>-access-token)', path: ['provider', 'name'], parse: providerName },
  { key: 'provider-api-url', description: 'gift card provider credit API base URL', path: ['provider', 'apiUrl'], parse: url },
  { key: 'provider-token', description: 'gift card provider credit API token', secret: true, path: ['providerToken'], parse: text },
  { key: 'shop-url', description: 'store domain at the provider (shop_url)', path: ['provider', 'shopUrl'], parse: text },
  {
    key: 'trigger-id',
    description: 'trigger workflow id: the UUID at the end of the execute URL',
    path: ['provider', 'triggerId'],
    parse: (raw) => TriggerId.parse(raw),
  },
  { key: 'trigger-url', description: 'base of the trigger execute URL (without the id)', path: ['provider', 'triggerUrl'], parse: url },
  { key: 'native-url', description: "storefront's native gift card endpoint base URL", path: ['provider', 'nativeUrl'], parse: url },
  {
    // CHOICE (docs/spec-choices.md#trigger-needs-the-credit-api): the execute call goes without the token unless this says otherwise.
    key: 'trigger-sends-token',
    description: 'send the credit API token to the trigger execute URL too (true/false, default false)',
    path: ['provider', 'triggerSendsToken'],
    parse: (raw) =>
      z
        .enum(['true', 'false'], { message: `expected true or false, got "${raw}"` })
        .transform((v) => v === 'true')
        .parse(raw),
  },
  {
    key: 'currency',
    description: 'currency of the gift card amounts, three letters (default USD)',
    path: ['provider', 'currency'],
    parse: (raw) =>
      z
        .string()
        .regex(/^[A-Z]{3}$/, `expected three capital letters such as USD or EUR, got "${raw}"`)
        .parse(raw.trim().toUpperCase()),
  },
  {
    key: 'max-amount',
    description: 'largest store credit giftcard issue pays without --allow-large, in the profile currency (default 1000.00)',
    path: ['provider', 'maxAmount'],
    parse: (raw) => {
      const message = `expected an amount above zero with at most two decimals, such as 1000 or 2500.00, got "${raw}"`;
      return z
        .string()
        .transform((v) => v.trim().replace(/,(?=\d{3}(?!\d))/g, ''))
        .pipe(z.string().regex(/^\d{1,10}(\.\d{1,2})?$/, message))
        .transform((v) => {
          const [whole = '0', cents = ''] = v.split('.');
          return `${Number(whole)}.${cents.padEnd(2, '0')}`;
        })
        .refine((v) => v !== '0.00', message)
        .parse(raw);
    },
  },
  {
    key: 'sandbox-admin-secret',
    description: 'the admin API secret of the local sandbox the profile points at (written by `opcli sandbox --write-profile`)',
    secret: true,
    path: ['sandboxAdminSecret'],
    parse: text,
  },
];

/** A record folder as `config set record-dir` takes it: an absolute path (control characters are refused before). */
export function recordDirValue(raw: string): string {
  return z
    .string()
    .transform((v) => v.trim())
    .pipe(
      z
        .string()
        .min(1, 'expected a folder, such as /srv/opcli-records')
        .refine((v) => isAbsolute(v), `expected an absolute path, such as /srv/opcli-records, got "${raw.trim()}"`),
    )
    .parse(raw);
}

/** Looks a key up by name, or undefined. */
export function findSettingKey(key: string): SettingKey | undefined {
  return SETTING_KEYS.find((k) => k.key === key);
}
