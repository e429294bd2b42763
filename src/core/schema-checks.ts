/**
 * Start-up fast path (ARCHITECTURE.md, "The fast path"; bench/startup.mjs,
 * test/orders/output-loads.test.ts): checks of the settings and credentials files, a page of
 * GET /v1/orders and its query that need no zod. Each says true only when it is certain the zod
 * schema accepts the value (and, but for the page shell, returns it unchanged); on false the caller
 * loads the schema, which decides and names the problem.
 *
 * The predicates are generated from the zod schemas at build time (bin/gen-checks.mjs); bin/build.mjs
 * puts them in the bundle in place of this module. Here, in the source that tsc and the in-process
 * tests read, every check says false, so zod decides everything.
 */
export interface SchemaChecks {
  /** SettingsFile (src/config/settings-schema.ts) returns the value unchanged. */
  settingsFile(value: unknown): boolean;
  /** CredentialsFile (src/config/credentials-schema.ts) returns the value unchanged. */
  credentialsFile(value: unknown): boolean;
  /** OrdersPageShell (src/schemas.ts) accepts the page. */
  ordersPageShell(value: unknown): boolean;
  /** OrdersQuery (src/schemas.ts) returns the query unchanged. */
  ordersQuery(value: unknown): boolean;
}

const no = (): boolean => false;

export const settingsFile: SchemaChecks['settingsFile'] = no;
export const credentialsFile: SchemaChecks['credentialsFile'] = no;
export const ordersPageShell: SchemaChecks['ordersPageShell'] = no;
export const ordersQuery: SchemaChecks['ordersQuery'] = no;
