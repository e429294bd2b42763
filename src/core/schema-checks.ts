/**
 * Start-up fast path (ARCHITECTURE.md): checks that need no zod at run time, true only when the zod
 * schema accepts the value (and, but for the page shell, returns it unchanged); on false the caller
 * loads the schema, which decides. zod's `z.toJSONSchema` (io `output`: a key zod would strip fails)
 * compiled by ajv: here on first use; bin/build.mjs bundles ajv's standalone code of the same compile.
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

/** `z.url()` as zod checks it: parsable, and returned unchanged (no spaces at its ends, no tab or newline). */
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

export const settingsFile = check('settingsFile');
export const credentialsFile = check('credentialsFile');
export const ordersPageShell = check('ordersPageShell');
export const ordersQuery = check('ordersQuery');
