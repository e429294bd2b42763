import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import type * as z from 'zod';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CredentialsFile } from '../../src/config/credentials-schema.js';
import { SettingsFile } from '../../src/config/settings-schema.js';
import * as inProcess from '../../src/core/schema-checks.js';
import { OrdersPageShell, OrdersQuery } from '../../src/schemas.js';

// The start-up checks (src/core/schema-checks.ts: zod's JSON Schema compiled by ajv) held to the zod
// schemas, both as the bundle gets them (ajv's standalone code) and as the source runs them: whenever
// a check says true, zod accepts the value and (but for the page shell, whose body the pager passes on
// as it is) returns it unchanged.
type SchemaChecks = Pick<typeof inProcess, 'settingsFile' | 'credentialsFile' | 'ordersPageShell' | 'ordersQuery'>;
let dir: string;
let standalone: string;
let bundled: SchemaChecks;

/** Imports generated source as a module. */
async function load<T>(source: string, name: string): Promise<T> {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, source);
  return (await import(/* @vite-ignore */ pathToFileURL(file).href)) as T;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'opcli-checks-'));
  standalone = inProcess.standaloneChecks();
  bundled = await load<SchemaChecks>(standalone, 'checks');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Mostly values of the right kind, sometimes of another, so both answers of a check are reached. */
const anyJson = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }));
const str = fc.oneof({ weight: 8, arbitrary: fc.string({ maxLength: 8 }) }, { weight: 1, arbitrary: anyJson });
const url = fc.oneof(
  { weight: 4, arbitrary: fc.webUrl() },
  { weight: 1, arbitrary: fc.constantFrom(' https://a.example', 'https://a.ex\tample', 'not a url', 'https://a.example/\n', 'mailto:x@y') },
  { weight: 1, arbitrary: anyJson },
);
const bool = fc.oneof({ weight: 4, arbitrary: fc.boolean() }, { weight: 1, arbitrary: anyJson });
const num = fc.oneof({ weight: 4, arbitrary: fc.double() }, { weight: 4, arbitrary: fc.integer() }, { weight: 1, arbitrary: anyJson });
const strings = fc.oneof({ weight: 6, arbitrary: fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }) }, { weight: 1, arbitrary: anyJson });
const profileName = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,8}$/) },
  { weight: 1, arbitrary: fc.constantFrom('', '-x', '.x', '__proto__', 'a b', 'x'.repeat(65), 'constructor') },
);
/** A few keys no schema knows, now and then. */
const extra = fc.oneof(
  { weight: 8, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('unknown', 'other'), anyJson, { noNullPrototype: true }) },
);
const profiles = <T>(value: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 8, arbitrary: fc.dictionary(profileName, value, { maxKeys: 3, noNullPrototype: true }) }, { weight: 1, arbitrary: anyJson });
/** An object of `fields`, each present or not, with an unknown key now and then. */
const shape = (fields: Record<string, fc.Arbitrary<unknown>>, requiredKeys: string[] = []) =>
  fc.tuple(fc.record(fields, { requiredKeys }), extra).map(([value, more]) => ({ ...value, ...more }));

const provider = shape({
  name: str,
  apiUrl: url,
  shopUrl: str,
  triggerId: str,
  triggerUrl: url,
  nativeUrl: url,
  triggerSendsToken: bool,
  currency: str,
  maxAmount: str,
});
const profileSettings = shape({
  baseUrl: url,
  authorizeUrl: url,
  clientId: str,
  scopes: strings,
  storeId: str,
  recordDir: str,
  proxy: str,
  noProxy: str,
  proxyLoopback: bool,
  caFile: str,
  notProcessedStatuses: fc.oneof(fc.array(fc.oneof(fc.integer({ min: 400, max: 599 }), fc.double()), { maxLength: 3 }), anyJson),
  progress: fc.oneof(fc.constantFrom('auto', 'plain', 'none', 'fancy'), anyJson),
  accessible: bool,
  provider: fc.oneof({ weight: 4, arbitrary: provider }, { weight: 1, arbitrary: anyJson }),
});
const settingsFile = shape({ currentProfile: profileName, profiles: profiles(profileSettings) });

const storedToken = shape(
  {
    accessToken: str,
    refreshToken: str,
    expiresAt: num,
    scopes: strings,
    grant: fc.oneof(fc.constantFrom('authorization_code', 'client_credentials', 'token', 'password'), anyJson),
    storeId: str,
    requestedScopes: strings,
    obtainedAt: num,
    origin: str,
    tokenUrl: str,
  },
  ['accessToken', 'grant'],
);
const credentialsFile = shape({
  profiles: profiles(
    shape({
      clientSecret: str,
      clientSecretOrigin: str,
      providerToken: str,
      providerTokenOrigin: str,
      token: fc.oneof({ weight: 4, arbitrary: storedToken }, { weight: 1, arbitrary: anyJson }),
    }),
  ),
});

const cursor = fc.oneof(fc.string({ maxLength: 6 }), fc.constant(null), anyJson);
const page = shape(
  {
    pageInfo: shape({ startCursor: cursor, endCursor: cursor, hasNextPage: bool, hasPreviousPage: bool }, ['startCursor', 'endCursor', 'hasNextPage']),
    pageCursors: shape({ around: fc.array(shape({ cursor: str, page: num, isCurrent: bool }, ['cursor', 'page']), { maxLength: 3 }) }, ['around']),
    totalCount: num,
    edges: fc.array(fc.record({ node: fc.dictionary(fc.string({ maxLength: 4 }), anyJson, { maxKeys: 2 }) }), { maxLength: 2 }),
  },
  ['pageInfo', 'pageCursors'],
);
const whole = fc.oneof(fc.integer({ min: -2, max: 1000 }), fc.double(), fc.constant(undefined), fc.string({ maxLength: 3 }));
const query = shape({ size: whole, cursor: fc.oneof(str, fc.constant(undefined)), buttonNum: whole });

/** Runs `check` over generated values: where it says true, zod accepts (and with `unchanged` returns a deep copy). */
function holds(check: (v: unknown) => boolean, schema: z.ZodType, values: fc.Arbitrary<unknown>, unchanged: boolean): number {
  let vouched = 0;
  fc.assert(
    fc.property(values, (value) => {
      if (!check(value)) return;
      vouched++;
      const parsed = schema.safeParse(value);
      expect(parsed.success).toBe(true);
      // node:util's deep strict equality, not toStrictEqual: vitest compares two objects' `constructor`
      // properties as their types, and a profile may be named "constructor".
      if (unchanged) expect(isDeepStrictEqual(parsed.data, value), JSON.stringify(value)).toBe(true);
    }),
    { numRuns: 2000 },
  );
  return vouched;
}

describe.each([
  ['as the bundle gets them', () => bundled],
  ['as the source runs them', () => inProcess],
] as const)('the checks say true only where zod agrees, %s', (_, of) => {
  let checks: SchemaChecks;
  beforeAll(() => {
    checks = of();
  });

  test('the settings file: accepted unchanged', () => {
    expect(holds(checks.settingsFile, SettingsFile, settingsFile, true)).toBeGreaterThan(20);
    expect(checks.settingsFile({ currentProfile: 'work', profiles: { work: { baseUrl: 'https://api.example', provider: { currency: 'EUR' } } } })).toBe(true);
  });

  test('the credentials file: accepted unchanged', () => {
    expect(holds(checks.credentialsFile, CredentialsFile, credentialsFile, true)).toBeGreaterThan(20);
    const token = { accessToken: 'at_1', scopes: ['orders:read'], grant: 'token', obtainedAt: 1 };
    expect(checks.credentialsFile({ profiles: { default: { token } } })).toBe(true);
    // A default to fill (scopes) is zod's to do: the file is not returned as it is.
    expect(checks.credentialsFile({ profiles: { default: { token: { ...token, scopes: undefined } } } })).toBe(false);
    expect(checks.credentialsFile({})).toBe(false);
  });

  test('a page of orders: the shell is accepted (the records pass on as the server sent them), and the query unchanged', () => {
    expect(holds(checks.ordersPageShell, OrdersPageShell, page, false)).toBeGreaterThan(20);
    expect(holds(checks.ordersQuery, OrdersQuery, query, true)).toBeGreaterThan(20);
    // A coerced query value ("5") becomes another value: zod's to do.
    expect(checks.ordersQuery({ size: '5' })).toBe(false);
    expect(checks.ordersQuery({ size: 5, cursor: 'c' })).toBe(true);
  });

  test('what a file holds besides the schema, or a profile named __proto__, is left to zod', () => {
    expect(checks.settingsFile({ profiles: {}, extra: 1 })).toBe(false);
    expect(checks.settingsFile(JSON.parse('{"profiles": {"__proto__": {}}}'))).toBe(false);
    expect(checks.settingsFile({ profiles: { work: { baseUrl: ' https://api.example' } } })).toBe(false);
  });
});

test('the bundle gets plain code: nothing of zod or ajv is imported', () => {
  expect(standalone).not.toMatch(/\bimport\b|require\(/);
});
