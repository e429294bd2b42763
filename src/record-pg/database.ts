/**
 * Opening the team's record in PostgreSQL: node-postgres is imported here, on first use, so a run with
 * no postgres:// record never loads it. A member's first connection checks the schema's version and role.
 */
import type { PoolClient } from 'pg';
import { type ConnectionContext, connectionSettings, type RecordTarget } from './connection.js';
import { databaseError, RecordDatabaseError } from './errors.js';
import { type MigrationResult, migrate, SCHEMA_VERSION, schemaVersion } from './migrate.js';
import type { RecordUrl } from './url.js';

/** What opening a record database says when it fails before anything was written. */
export const NOTHING_WRITTEN = 'nothing was written or sent; rerunning is safe';

async function driver(): Promise<typeof import('pg')> {
  const loaded = await import('pg');
  return (loaded as unknown as { default?: typeof import('pg') }).default ?? loaded;
}

/** Setup is one transaction: whatever stopped it, the database holds all of it or none of it. */
const SETUP_RERUN = 'setup is one transaction, applied whole or not at all: rerunning it is safe';

/** `record setup`: makes or upgrades the team's record and names its members (migrate.ts), on one connection. */
export async function setupRecord(record: RecordUrl, members: readonly string[], ctx: ConnectionContext): Promise<MigrationResult & { target: RecordTarget }> {
  const { target, config } = connectionSettings(record, ctx);
  const pg = await driver();
  const client = new pg.Client(config);
  // A connection lost while idle is reported by the next query; without a listener it would crash the process.
  client.on('error', () => {});
  try {
    await client.connect();
    return { ...(await migrate(client, members)), target };
  } catch (error) {
    throw databaseError(error, target, SETUP_RERUN);
  } finally {
    await client.end().catch(() => {});
  }
}

/** A member's record database: its target, a connection of its pool, and close(). */
export interface RecordDatabase {
  target: RecordTarget;
  /** Runs `fn` on one connection of the pool, given back afterwards; a failure becomes the one-line error with `rerun`. */
  withClient<T>(fn: (client: PoolClient) => Promise<T>, rerun: string): Promise<T>;
  close(): Promise<void>;
}

/** Opens a member's record: the pool, and a first connection that checks the schema and the role. */
export async function openRecordDatabase(record: RecordUrl, ctx: ConnectionContext, options: { max?: number } = {}): Promise<RecordDatabase> {
  const { target, config } = connectionSettings(record, ctx);
  const pg = await driver();
  const pool = new pg.Pool({ ...config, max: options.max ?? 4, idleTimeoutMillis: 30_000 });
  pool.on('error', () => {});
  const database: RecordDatabase = {
    target,
    async withClient(fn, rerun) {
      let client: PoolClient | undefined;
      // A connection lost while it is checked out emits 'error' on the client, not the pool: without
      // a listener that is an uncaught exception; the statement's own rejection carries the failure.
      const lost = (): void => {};
      let failed: unknown;
      try {
        client = await pool.connect();
        client.on('error', lost);
        return await fn(client);
      } catch (error) {
        failed = error;
        throw databaseError(error, target, rerun);
      } finally {
        client?.off('error', lost);
        // A connection that failed is closed rather than handed to the next statement.
        client?.release(failed instanceof Error ? failed : undefined);
      }
    },
    close: () => pool.end().catch(() => {}),
  };
  try {
    await database.withClient((client) => checkSchema(client, target), NOTHING_WRITTEN);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

/** The schema is this opcli's, and the role may add to it; else what to do, naming the database. */
async function checkSchema(client: PoolClient, target: RecordTarget): Promise<void> {
  const version = await schemaVersion(client);
  const setup = `whoever administers it runs \`opcli record setup --url URL --member ${target.user}\``;
  // What is wrong, after the database's name.
  let why: string | undefined;
  if (version === 0) why = ` holds no opcli record yet: ${setup} once`;
  else if (version > SCHEMA_VERSION) why = ` holds a record of schema version ${version}, newer than this opcli knows (${SCHEMA_VERSION}): upgrade opcli`;
  else if (version < SCHEMA_VERSION) {
    why = ` holds a record of schema version ${version}; this opcli needs ${SCHEMA_VERSION}: whoever administers it runs \`opcli record setup\` with this opcli`;
  } else {
    const may = await client.query<{ insert: boolean }>("SELECT has_column_privilege('opcli.intents', 'key', 'INSERT') AS insert");
    if (!may.rows[0]?.insert) why = `: role "${target.user}" may not add to the record: ${setup}`;
  }
  if (why) throw new RecordDatabaseError(`Record database ${target.label}${why}; ${NOTHING_WRITTEN}.`, target);
}
