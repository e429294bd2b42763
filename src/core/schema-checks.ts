/**
 * Start-up fast path (ARCHITECTURE.md, "The fast path"; bench/startup.mjs): checks of the settings
 * and credentials files, a page of GET /v1/orders and its query that need no zod at run time. Each
 * says true only when the zod schema accepts the value (and, but for the page shell, returns it
 * unchanged); on false the caller loads the schema, which decides and names the problem.
 *
 * The checks come from two libraries' supported compiles, nothing hand-written: zod's
 * `z.toJSONSchema` turns each schema into JSON Schema (io `output`: what zod returns, so a key zod
 * would strip or a default it would fill fails the check; a construct JSON Schema cannot say throws),
 * and ajv compiles that. Here, in the source that tsc and the in-process tests run, ajv compiles on
 * first use; bin/build.mjs puts ajv's standalone code of the same compile (`standaloneChecks`) in the
 * bundle in place of this module, so a one-off loads neither zod nor ajv.
 */
import { _, Ajv } from 'ajv';
import standalone from 'ajv/dist/standalone/index.js';
import * as z from 'zod';
import { CredentialsFile } from '../config/credentials-schema.js';
import { SettingsFile } from '../config/settings-schema.js';
import { OrdersPageShell, OrdersQuery } from '../schemas.js';

/**
 * The schemas checked, and what a true answer vouches for: `output`, that zod returns the value as
 * it is; `input`, only that zod accepts it (the pager passes the page body on as the server sent it).
 */
const CHECKED = {
  settingsFile: [SettingsFile, 'output'],
  credentialsFile: [CredentialsFile, 'output'],
  ordersPageShell: [OrdersPageShell, 'input'],
  ordersQuery: [OrdersQuery, 'output'],
} as const;

type CheckName = keyof typeof CHECKED;

/**
 * `z.url()` without options, as zod checks it (validateURL in zod's core): parsable after trimming;
 * a value with spaces at its ends or a tab or newline inside would be returned changed, so it fails.
 */
const URL_FORMAT = '(v) => v === v.trim() && !/[\\t\\n\\r]/.test(v) && URL.canParse(v)';

/** An ajv holding every check; `code` has it keep the source for ajv's standalone output. */
function compile(code: boolean): Ajv {
  const ajv = new Ajv({
    // zod tests a pattern as a plain RegExp, without the `u` flag ajv adds by default.
    unicodeRegExp: false,
    strict: true,
    formats: { uri: new Function(`return ${URL_FORMAT}`)() },
    // The standalone module holds the format as code (ajv's `_` tag keeps an untagged string as it is).
    ...(code ? { code: { source: true, esm: true, formats: _(Object.assign([`{ uri: ${URL_FORMAT} }`], { raw: [] })) } } : {}),
  });
  for (const [name, [schema, io]] of Object.entries(CHECKED)) {
    ajv.addSchema(z.toJSONSchema(schema as z.ZodType, { target: 'draft-07', io, unrepresentable: 'throw' }), name);
  }
  return ajv;
}

/** The ES module bin/build.mjs puts in the bundle in place of this one: ajv's standalone code, one export per check. */
export function standaloneChecks(): string {
  const names = Object.fromEntries(Object.keys(CHECKED).map((name) => [name, name]));
  return standalone.default(compile(true), names);
}

let compiled: Ajv | undefined;
const check =
  (name: CheckName) =>
  (value: unknown): boolean => {
    compiled ??= compile(false);
    return compiled.getSchema(name)?.(value) === true;
  };

/** SettingsFile (src/config/settings-schema.ts) returns the value unchanged. */
export const settingsFile = check('settingsFile');
/** CredentialsFile (src/config/credentials-schema.ts) returns the value unchanged. */
export const credentialsFile = check('credentialsFile');
/** OrdersPageShell (src/schemas.ts) accepts the page. */
export const ordersPageShell = check('ordersPageShell');
/** OrdersQuery (src/schemas.ts) returns the query unchanged. */
export const ordersQuery = check('ordersQuery');
