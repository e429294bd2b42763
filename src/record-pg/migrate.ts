/**
 * The team's record's schema, as Flyway keeps one: numbered SQL files (migrations/), a version table, and
 * every pending file applied with its row in one transaction under an advisory lock (two setups at once
 * apply each once; a failure changes nothing), the members' grants given again in it.
 */
import type { ClientBase } from 'pg';
import { ExitCode, OpcliError } from '../core/errors.js';
import record0001 from './migrations/0001-record.sql';
import claimQuestions0002 from './migrations/0002-claim-questions.sql';
import batchRows0003 from './migrations/0003-batch-rows.sql';
import { inTransaction } from './queries.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Every migration, in order; the last one's version is the schema this opcli reads and writes. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'record', sql: record0001 },
  { version: 2, name: 'claim-questions', sql: claimQuestions0002 },
  { version: 3, name: 'batch-rows', sql: batchRows0003 },
];
export const SCHEMA_VERSION = MIGRATIONS.length;

/** The advisory lock of setup: "opcli" as a number, the same in every opcli. */
const SETUP_LOCK = 0x6f70636c69;

export interface MigrationResult {
  from: number;
  to: number;
  applied: Migration[];
  members: string[];
  /** Roles of opcli.members that no longer exist (dropped since): nothing to grant them. */
  gone: string[];
}

/** The version table and the schema it lives in, made on first use (the migrations themselves never touch it). */
const BOOTSTRAP = `CREATE SCHEMA IF NOT EXISTS opcli;
REVOKE ALL ON SCHEMA opcli FROM PUBLIC;
CREATE TABLE IF NOT EXISTS opcli.schema_version (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now(),
  applied_by name NOT NULL DEFAULT current_user
);`;

/** A string as an SQL literal ('it''s'). */
const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/**
 * What `migrate` does as one script to review and run with psql (`record setup --print-sql`), stopping
 * when the database is not at `from`; it never connects, so it cannot refuse a superuser member.
 */
export function setupScript(from: number, members: readonly string[]): string {
  const pending = MIGRATIONS.filter((m) => m.version > from);
  return [
    `-- opcli's team record: from schema version ${from} to ${SCHEMA_VERSION}, and the grants to the members named.`,
    '\\set ON_ERROR_STOP on',
    'BEGIN;',
    `SELECT pg_advisory_xact_lock(${SETUP_LOCK});`,
    BOOTSTRAP,
    `DO $check$ BEGIN
  IF (SELECT coalesce(max(version), 0) FROM opcli.schema_version) <> ${from} THEN
    RAISE EXCEPTION 'the record is not at schema version ${from}: nothing was changed (opcli record setup finds the version itself)';
  END IF;
END $check$;`,
    ...pending.flatMap((m) => [
      `-- migration ${m.version} (${m.name})`,
      m.sql,
      `INSERT INTO opcli.schema_version (version, name) VALUES (${m.version}, ${literal(m.name)});`,
    ]),
    ...members.map((member) => `SELECT opcli.grant_member(${literal(member)});`),
    'COMMIT;',
    '',
  ].join('\n');
}

/** The schema's version here: 0 when there is no record yet. */
export async function schemaVersion(client: ClientBase): Promise<number> {
  const exists = await client.query<{ t: string | null }>("SELECT to_regclass('opcli.schema_version')::text AS t");
  if (!exists.rows[0]?.t) return 0;
  const result = await client.query<{ v: number }>('SELECT coalesce(max(version), 0)::int AS v FROM opcli.schema_version');
  return result.rows[0]?.v ?? 0;
}

/** Brings the schema up to SCHEMA_VERSION and grants `members` and those named before, in one transaction. */
export async function migrate(client: ClientBase, members: readonly string[]): Promise<MigrationResult> {
  return inTransaction(client, async () => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [SETUP_LOCK]);
    await client.query(BOOTSTRAP);
    const from = await schemaVersion(client);
    if (from > SCHEMA_VERSION) {
      throw new OpcliError(`The record's schema is at version ${from}, newer than this opcli knows (${SCHEMA_VERSION}); nothing was changed.`, {
        hint: 'Run `record setup` with the newest opcli.',
      });
    }
    const applied = MIGRATIONS.filter((m) => m.version > from);
    for (const migration of applied) {
      await client.query(migration.sql);
      await client.query('INSERT INTO opcli.schema_version (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
    }
    await checkMembers(client, members);
    const known = await client.query<{ role: string; exists: boolean }>(
      'SELECT m.role::text AS role, r.rolname IS NOT NULL AS exists FROM opcli.members m LEFT JOIN pg_roles r ON r.rolname = m.role ORDER BY m.role',
    );
    const gone = known.rows.filter((r) => !r.exists).map((r) => r.role);
    const all = [...new Set([...known.rows.filter((r) => r.exists).map((r) => r.role), ...members])].sort();
    for (const member of all) await client.query('SELECT opcli.grant_member($1)', [member]);
    return { from, to: SCHEMA_VERSION, applied, members: all, gone };
  });
}

/** Refuses a member role that does not exist or would hold more than a member's rights (a superuser, the owner, or a member of it). */
async function checkMembers(client: ClientBase, members: readonly string[]): Promise<void> {
  if (members.length === 0) return;
  const found = await client.query<{ name: string; superuser: boolean; owner: boolean }>(
    `SELECT rolname::text AS name, rolsuper AS superuser,
            (rolname = current_user OR pg_has_role(rolname, current_user, 'MEMBER')) AS owner
       FROM pg_roles WHERE rolname = ANY($1::text[])`,
    [members],
  );
  const byName = new Map(found.rows.map((r) => [r.name, r]));
  for (const member of members) {
    const role = byName.get(member);
    if (!role) {
      throw new OpcliError(`Role "${member}" does not exist in this database; nothing was changed.`, {
        exitCode: ExitCode.usage,
        hint: `Create it first (CREATE ROLE "${member}" LOGIN PASSWORD '…'; or a group role that people join: CREATE ROLE team NOLOGIN; GRANT team TO alice;), then run setup again.`,
      });
    }
    if (role.superuser || role.owner) {
      throw new OpcliError(
        `Role "${member}" cannot be a member: it is ${role.superuser ? 'a superuser' : 'the role running setup, or a member of it'}, so it could update and delete the record; nothing was changed.`,
        {
          exitCode: ExitCode.usage,
          hint: 'Give each person a role of their own, with no more rights than LOGIN, and name those roles (or a group role they join) with --member.',
        },
      );
    }
  }
}
