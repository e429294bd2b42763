/**
 * The quick checks of the settings and credentials files stand in for the zod schemas on a
 * one-off's start-up, so they are held to them: whatever a quick check accepts, the schema accepts
 * with the same value; and what opcli itself writes (the schema's output) passes the quick check,
 * so the fast path is the one taken.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { CredentialsFile } from '../../src/config/credentials-schema.js';
import { quickCredentials, quickSettings } from '../../src/config/quick-check.js';
import { SettingsFile } from '../../src/config/settings-schema.js';

/** Values near the edge of each rule: good and bad profile names, URLs, numbers and odd types. */
const name = fc.constantFrom('default', 'prod.eu', 'a_b-c', '-bad', '.bad', 'x'.repeat(65), '', '__proto__', 'constructor', 'ünï', 'a b');
const url = fc.constantFrom(
  'https://api.example.com',
  'http://127.0.0.1:8080/v1',
  ' https://api.example.com',
  'https://api.example.com\n',
  'https://exa\tmple.com',
  'not a url',
  'mailto:a@b.co',
  'https:/x',
  '',
);
const text = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom(' ', 'svc_at_x'));
const odd = fc.constantFrom<unknown>(null, 1, true, [], {}, 'x', Number.POSITIVE_INFINITY, -0, Number.MAX_SAFE_INTEGER + 2);
/** Mostly a value of the field's kind, now and then one of another type. */
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 12, arbitrary: arb }, { weight: 1, arbitrary: odd });
/** Now and then a key the schema does not know. */
const stray = fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: text });
const strings = fc.array(text, { maxLength: 3 });

const provider = fc.record(
  {
    name: maybe(text),
    apiUrl: maybe(url),
    shopUrl: maybe(text),
    triggerId: maybe(text),
    triggerUrl: maybe(url),
    nativeUrl: maybe(url),
    triggerSendsToken: maybe(fc.boolean()),
    currency: maybe(text),
    extra: stray,
  },
  { requiredKeys: [] },
);
const profileSettings = fc.record(
  {
    baseUrl: maybe(url),
    authorizeUrl: maybe(url),
    clientId: maybe(text),
    scopes: maybe(strings),
    storeId: maybe(text),
    provider: maybe(provider),
    other: stray,
  },
  { requiredKeys: [] },
);
const settingsFile = fc.record(
  { currentProfile: maybe(name), profiles: maybe(fc.dictionary(name, maybe(profileSettings), { maxKeys: 3 })), unknown: stray },
  { requiredKeys: [] },
);

const token = fc.record(
  {
    accessToken: maybe(text),
    refreshToken: maybe(text),
    expiresAt: maybe(fc.oneof(fc.integer(), fc.double())),
    scopes: maybe(strings),
    grant: maybe(fc.constantFrom('authorization_code', 'client_credentials', 'token', 'password')),
    storeId: maybe(text),
    requestedScopes: maybe(strings),
    obtainedAt: maybe(fc.integer()),
    origin: maybe(text),
    tokenUrl: maybe(text),
    other: stray,
  },
  { requiredKeys: [] },
);
const secrets = fc.record(
  {
    clientSecret: maybe(text),
    clientSecretOrigin: maybe(text),
    providerToken: maybe(text),
    providerTokenOrigin: maybe(text),
    token: maybe(token),
    other: stray,
  },
  { requiredKeys: [] },
);
const credentialsFile = fc.record({ profiles: maybe(fc.dictionary(name, maybe(secrets), { maxKeys: 3 })), unknown: stray }, { requiredKeys: [] });

/** Generated values go through JSON, as a file's content does (a -0 or 1e400 becomes what JSON makes of it). */
const asFile = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** How many generated files each quick check passed: the property must reach the fast path often enough to mean something. */
const passed = { settings: 0, credentials: 0 };
const seen = { settings: 0, credentials: 0 };

describe.each([
  ['settings', settingsFile, quickSettings, SettingsFile],
  ['credentials', credentialsFile, quickCredentials, CredentialsFile],
] as const)('the quick check of the %s file', (kind, arb, quick, schema) => {
  test.prop([arb], { numRuns: 3000 })('accepts only what the schema accepts, with the same value', (generated) => {
    const raw = asFile(generated);
    seen[kind]++;
    const quickly = quick(raw);
    if (quickly === undefined) return;
    passed[kind]++;
    const parsed = (schema as typeof SettingsFile).safeParse(raw);
    expect(parsed.success).toBe(true);
    expect(quickly).toEqual(parsed.data);
  });

  test.prop([arb], { numRuns: 3000 })('accepts what opcli writes: the schema output of any valid file', (generated) => {
    const parsed = (schema as typeof SettingsFile).safeParse(asFile(generated));
    if (!parsed.success) return;
    expect(quick(asFile(parsed.data))).toEqual(parsed.data);
  });
});

it('the generated files reached the fast path often', () => {
  // One generated file in twenty or more takes the fast path (about one settings file in ten, one credentials file in five).
  expect(passed.settings).toBeGreaterThanOrEqual(seen.settings / 20);
  expect(passed.credentials).toBeGreaterThanOrEqual(seen.credentials / 20);
  expect(seen.settings).toBeGreaterThan(0);
});

it('a typical file of each kind passes, and one wrong field does not', () => {
  const settings = { currentProfile: 'default', profiles: { default: { baseUrl: 'http://127.0.0.1:4010', clientId: 'svc_app_x', scopes: ['read_orders'] } } };
  expect(quickSettings(settings)).toBe(settings);
  expect(quickSettings({ ...settings, profiles: { default: { baseUrl: 'not a url' } } })).toBeUndefined();
  const credentials = { profiles: { default: { token: { accessToken: 'svc_at_x', scopes: [], grant: 'client_credentials', obtainedAt: 1, expiresAt: 2 } } } };
  expect(quickCredentials(credentials)).toBe(credentials);
  expect(quickCredentials({ profiles: { default: { token: { ...credentials.profiles.default.token, grant: 'password' } } } })).toBeUndefined();
});
