import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { lazyGroup } from '../../cli/program.js';
import { UsageError } from '../../core/errors.js';
import { printJson, outputMode, printRecord } from '../../core/output.js';
import { maskRecordUrl, parseRecordUrl } from '../../record-pg/url.js';
import { checkText } from '../../core/flags.js';
import { register as registerImport } from './import.js';

/** `opcli record`: the team's record of business actions in PostgreSQL (docs/guides/team-record.md). */
export const register = lazyGroup({
  name: 'record',
  description: "Set up a team's record of claims and credits in PostgreSQL",
  examples: `  $ PGPASSWORD=… opcli record setup --url postgresql://admin@db.example.com/opcli --member alice --member bob
  $ opcli config set record-url postgresql://alice@db.example.com/opcli
  $ opcli record check
  $ opcli record import --dry-run

Guide: docs/guides/team-record.md`,
  verbs: {
    setup: registerSetup,
    check: registerCheck,
    import: registerImport,
  },
});

export interface SetupOptions {
  url?: string;
  members: string[];
  json: boolean;
  /** --print-sql: print the script instead of connecting, from this schema version. */
  printSqlFrom?: number;
}

/** `--member a --member b,c`: every role named, in order, once. */
function collectMembers(value: string, previous: string[] = []): string[] {
  const roles = value
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  if (roles.length === 0) throw new UsageError('--member needs a role name.', 'Name a database role, such as --member alice.');
  for (const role of roles) checkText(`--member ${JSON.stringify(role)}`, role, 'Name a database role, such as --member alice.');
  return [...new Set([...previous, ...roles])];
}

function registerSetup(group: Command, deps: Deps): void {
  group
    .command('setup')
    .description("Create or upgrade the team's record in a PostgreSQL database and grant its members (run once, by its administrator)")
    .option('--url <url>', 'the database, as psql takes it: postgresql://ADMIN@HOST:PORT/DATABASE (password: PGPASSWORD or ~/.pgpass)')
    .option('--member <role>', 'a database role that may add to the record and read it, nothing more (repeatable, or comma-separated)', collectMembers)
    .option('--json', 'print what was done as JSON')
    .option('--print-sql', 'connect nowhere: print the SQL script setup would run, to review and run with psql')
    .option('--from-version <n>', "with --print-sql: the database's schema version now (default 0, none)")
    .addHelpText(
      'after',
      `
Creates the schema "opcli" (versioned migrations: running setup again applies only what is
missing, and each new opcli version's setup upgrades it), then grants each member INSERT and
SELECT only: no UPDATE, DELETE or TRUNCATE, no change to the schema, and each row names the
role that wrote it. Members named before keep their grants; the roles must exist already.
--print-sql prints the same work as one script, for whoever administers the database to review
and run with psql (it connects nowhere, so it cannot check the roles as setup does).

Examples:
  $ PGPASSWORD=… opcli record setup --url postgresql://admin@db.example.com/opcli --member alice --member bob
  $ opcli record setup --url 'postgresql://admin@10.0.0.5/opcli?sslmode=verify-ca&sslrootcert=/etc/ssl/db-ca.pem' --member support_team
  $ opcli record setup --url postgresql://admin@db.example.com/opcli --json
  $ opcli record setup --print-sql --member alice > opcli-record.sql

Then each member, once:
  $ opcli config set record-url postgresql://alice@db.example.com/opcli

Exit codes: 0 done, 1 the database failed (one line: which, and whether rerunning is safe), 2 usage.`,
    )
    .action(async (flags: { url?: string; member?: string[]; json?: boolean; printSql?: boolean; fromVersion?: string }) =>
      runSetup(setupOptions(flags), deps),
    );
}

/** The flags as options: --url, or --print-sql (with --from-version) and neither --url nor --json. */
function setupOptions(flags: { url?: string; member?: string[]; json?: boolean; printSql?: boolean; fromVersion?: string }): SetupOptions {
  if (flags.fromVersion !== undefined && !flags.printSql)
    throw new UsageError('--from-version goes with --print-sql.', 'Without --print-sql, setup reads the version from the database.');
  if (!flags.printSql && flags.url === undefined)
    throw new UsageError('record setup needs --url (or --print-sql).', 'Give the database as psql takes it: --url postgresql://ADMIN@HOST/DATABASE.');
  if (flags.printSql && (flags.url !== undefined || flags.json))
    throw new UsageError('--print-sql connects nowhere: it takes no --url and no --json.', 'Leave them out.');
  const from = flags.printSql ? Number(flags.fromVersion ?? 0) : undefined;
  if (from !== undefined && (!Number.isInteger(from) || from < 0))
    throw new UsageError(`--from-version: expected a schema version (0 or more), got "${flags.fromVersion}".`);
  return { url: flags.url, members: flags.member ?? [], json: !!flags.json, printSqlFrom: from };
}

/** Applies the migrations and grants, then says what the database now holds. */
async function runSetup(opts: SetupOptions, deps: Deps): Promise<void> {
  if (opts.printSqlFrom !== undefined) {
    const { setupScript, SCHEMA_VERSION } = await import('../../record-pg/migrate.js');
    if (opts.printSqlFrom > SCHEMA_VERSION)
      throw new UsageError(`--from-version ${opts.printSqlFrom}: this opcli knows schema versions up to ${SCHEMA_VERSION}.`);
    deps.out(setupScript(opts.printSqlFrom, opts.members));
    return;
  }
  const record = parseRecordUrl(opts.url ?? '', '--url');
  deps.redactor.add(record.password);
  if (record.password) {
    deps.err(
      'Warning: the password in --url can be seen by other users of this computer (`ps`) and stays in your shell history; PGPASSWORD or ~/.pgpass keep it out.\n',
    );
  }
  const { setupRecord } = await import('../../record-pg/database.js');
  const result = await setupRecord(record, opts.members, { env: deps.env, cwd: deps.cwd, passwordSource: '--url' });
  const { target } = result;
  if (opts.json) {
    printJson(deps, {
      database: { host: target.host, port: target.port, database: target.database, user: target.user },
      schemaVersion: result.to,
      previousVersion: result.from,
      applied: result.applied.map((m) => ({ version: m.version, name: m.name })),
      members: result.members,
      droppedRoles: result.gone,
    });
    return;
  }
  const done = result.applied.length ? `Applied ${result.applied.map((m) => `${m.version} (${m.name})`).join(', ')}` : 'Already up to date';
  deps.out(`${done}: the record in ${target.label} is at schema version ${result.to}.\n`);
  deps.out(result.members.length ? `Members (insert and read only): ${result.members.join(', ')}\n` : 'No members yet: name them with --member ROLE.\n');
  for (const role of result.gone) deps.err(`Note: role "${role}" was a member and no longer exists in the database.\n`);
  const example = new URL(record.url);
  example.username = result.members[0] ?? 'ROLE';
  deps.err(`Each member then runs once: opcli config set record-url ${maskRecordUrl(example.href)}\n`);
}

function registerCheck(group: Command, deps: Deps): void {
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
    .action(async (flags: { json?: boolean }) => runCheck({ json: !!flags.json }, deps));
}

/** Opens the profile's record as a member and says what it found. */
async function runCheck(opts: { json: boolean }, deps: Deps): Promise<void> {
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
