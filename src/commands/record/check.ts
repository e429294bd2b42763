import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { UsageError } from '../../core/errors.js';
import { outputMode, printJson, printRecord } from '../../core/output.js';

/** Registers `record check`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('check')
    .description("Check this profile's record-url: the database answers, holds the record, and lets you add to it")
    .option('--json', 'print what was found as JSON')
    .addHelpText(
      'after',
      `
Connects as a member does before filing or paying: the password from the credential store,
PGPASSWORD or ~/.pgpass, TLS as sslmode says (verify-full for a host that is not this machine).
Nothing is written.

Examples:
  $ opcli record check
  $ OPCLI_RECORD_URL=postgresql://alice@db.example.com/opcli opcli record check --json

Exit codes: 0 ready, 1 the database failed (one line: which, and why), 2 no record-url.`,
    )
    .action(async (flags: { json?: boolean }) => run({ json: !!flags.json }, deps));
}

/** Opens the profile's record as a member and says what it found. */
export async function run(opts: { json: boolean }, deps: Deps): Promise<void> {
  const profile = await deps.profile();
  if (!profile.record) {
    throw new UsageError(
      `Profile "${profile.name}" has no record-url: its record is in files.`,
      'Set the database your administrator gave you: `opcli config set record-url postgresql://YOU@HOST/DATABASE` (docs/guides/team-record.md).',
    );
  }
  const { openRecordDatabase } = await import('../../record-pg/database.js');
  const { SCHEMA_VERSION } = await import('../../record-pg/migrate.js');
  const database = await openRecordDatabase(profile.record, { env: deps.env, cwd: deps.cwd, passwordSource: profile.record.passwordSource }, { max: 1 });
  try {
    const found = await database.withClient(
      async (client) =>
        (
          await client.query<{ role: string; tls: boolean | null; server: string }>(
            "SELECT current_user::text AS role, (SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()) AS tls, current_setting('server_version') AS server",
          )
        ).rows[0],
      'nothing was written',
    );
    const { target } = database;
    const result = {
      database: { host: target.host, port: target.port, database: target.database },
      role: found?.role,
      tls: !!found?.tls,
      sslmode: target.sslmode,
      serverVersion: found?.server,
      schemaVersion: SCHEMA_VERSION,
    };
    if (opts.json) return printJson(deps, result);
    await printRecord(
      deps,
      [
        ['Database', target.label],
        ['Role', `${result.role} (may add to the record and read it)`],
        ['TLS', result.tls ? `yes (sslmode ${target.sslmode})` : `no (sslmode ${target.sslmode})`],
        ['Server', `PostgreSQL ${result.serverVersion}`],
        ['Schema', `version ${SCHEMA_VERSION}`],
      ],
      outputMode(deps, {}),
    );
  } finally {
    await database.close();
  }
}
