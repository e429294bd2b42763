/**
 * `record setup`: the administrator's one run that makes (or upgrades) the team's record in a
 * database and names its members (src/record-pg/migrate.ts). No print: the command renders.
 */
import type { ConnectionContext, RecordTarget } from './connection.js';
import { connectOne } from './database.js';
import { databaseError } from './errors.js';
import { type MigrationResult, migrate } from './migrate.js';
import type { RecordUrl } from './url.js';

/** Setup is one transaction: whatever stopped it, the database holds all of it or none of it. */
export const SETUP_RERUN = 'setup is one transaction, applied whole or not at all: rerunning it is safe';

/** Connects as the administrator, applies what is missing and grants the members; the connection is closed after. */
export async function setupRecord(record: RecordUrl, members: readonly string[], ctx: ConnectionContext): Promise<MigrationResult & { target: RecordTarget }> {
  const { client, target } = await connectOne(record, ctx, SETUP_RERUN);
  try {
    return { ...(await migrate(client, members)), target };
  } catch (error) {
    throw databaseError(error, target, SETUP_RERUN);
  } finally {
    await client.end().catch(() => {});
  }
}
