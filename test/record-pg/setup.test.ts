/**
 * `opcli record setup` against a real PostgreSQL (test/infra/postgres.ts): the migrations applied
 * once, the members' rights enforced by the database (seen through psql, as a member would try),
 * the unique key deciding between two members, and a database that cannot be reached failing in
 * one line that names it and says rerunning is safe.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROOT, runBinary, runOpcli } from '../helpers.js';
import { blackhole, deadPort, missingInfra, type Postgres, startPostgres } from '../infra/index.js';

const missing = missingInfra('pg_ctl');

describe.skipIf(missing)('record setup', () => {
  let pg: Postgres;
  beforeAll(async () => {
    pg = await startPostgres();
  });
  afterAll(async () => {
    await pg?.stop();
  });

  /** A fresh database, and member roles with passwords, for one test. */
  async function fresh(memberCount = 2): Promise<{ database: string; members: { name: string; password: string }[] }> {
    const id = randomBytes(4).toString('hex');
    const database = `rec_${id}`;
    await pg.admin(`CREATE DATABASE ${database}`);
    const members = Array.from({ length: memberCount }, (_, i) => ({ name: `member_${id}_${i}`, password: `pw-${id}-${i}` }));
    for (const m of members) await pg.admin(`CREATE ROLE ${m.name} LOGIN PASSWORD '${m.password}'`);
    return { database, members };
  }

  /** `record setup` as the superuser; the password through PGPASSWORD, as the help advises. */
  function setup(database: string, args: string[], extraEnv: Record<string, string> = {}) {
    const url = `postgresql://${pg.superuser}@127.0.0.1:${pg.port}/${database}`;
    return runOpcli(['record', 'setup', '--url', url, ...args], { env: { PGPASSWORD: pg.superuserPassword, OPCLI_CONFIG_DIR: pg.dir, ...extraEnv } });
  }

  const intent = (key: string, extra = '') =>
    `INSERT INTO opcli.intents (kind, origin, store_id, key, attempt, filing, at${extra ? ', author' : ''}) VALUES ('claim', 'https://api.example.com', 'st_1', '${key}', 1, '${key}-f', now()${extra})`;

  test('setup creates the schema once: a second run applies nothing and keeps the members', async () => {
    const { database, members } = await fresh();
    const first = await setup(database, ['--member', members[0]!.name, '--member', members[1]!.name]);
    expect(first.stderr).not.toContain('Error');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('Applied 1 (record), 2 (claim-questions), 3 (batch-rows)');
    expect(first.stdout).toContain(`Members (insert and read only): ${members[0]!.name}, ${members[1]!.name}`);
    expect(first.stderr).toContain(`opcli config set record-url postgresql://${members[0]!.name}@127.0.0.1:${pg.port}/${database}`);

    const second = await setup(database, ['--json']);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual({
      database: { host: '127.0.0.1', port: pg.port, database, user: pg.superuser },
      schemaVersion: 3,
      previousVersion: 3,
      applied: [],
      members: [members[0]!.name, members[1]!.name].sort(),
      droppedRoles: [],
    });
    expect(await pg.admin('SELECT version, name, applied_by FROM opcli.schema_version', database)).toBe(
      `1|record|${pg.superuser}\n2|claim-questions|${pg.superuser}\n3|batch-rows|${pg.superuser}\n`,
    );
    expect(await pg.admin("SELECT count(*) FROM pg_tables WHERE schemaname = 'opcli'", database)).toBe('7\n');
  });

  test('a member may insert and read, and nothing else: no update, delete, truncate, schema change, or another author', async () => {
    const { database, members } = await fresh(1);
    const member = members[0]!;
    expect((await setup(database, ['--member', member.name])).code).toBe(0);
    const as = (sql: string) => pg.psql(sql, { user: member.name, password: member.password, database });

    const inserted = await as(`${intent('k1')} RETURNING author, attempt`);
    expect(inserted).toMatchObject({ code: 0, stdout: `${member.name}|1\n` });
    expect((await as("INSERT INTO opcli.outcomes (filing, status, at) VALUES ('k1-f', 'filed', now()) RETURNING author")).stdout).toBe(`${member.name}\n`);
    expect((await as('SELECT count(*) FROM opcli.intents')).stdout).toBe('1\n');

    // Each table of the record, with a column every row has.
    const tables = { runs: 'at', intents: 'at', outcomes: 'at', notes: 'at', imports: 'at', members: 'role', schema_version: 'name' };
    for (const [table, column] of Object.entries(tables)) {
      for (const sql of [`UPDATE opcli.${table} SET ${column} = ${column}`, `DELETE FROM opcli.${table}`, `TRUNCATE opcli.${table}`]) {
        const refused = await as(sql);
        expect(refused.code, sql).toBe(1);
        expect(refused.stderr, sql).toContain(`permission denied for table ${table}`);
      }
    }
    const forged = await as(intent('k2', ", 'someone_else'"));
    expect(forged.code).toBe(1);
    expect(forged.stderr).toContain('permission denied for table intents');
    const backdated = await as(
      "INSERT INTO opcli.notes (kind, origin, store_id, message, at, recorded_at) VALUES ('note', 'o', 's', 'm', now(), now() - interval '1 year')",
    );
    expect(backdated.stderr).toContain('permission denied for table notes');
    for (const ddl of [
      'CREATE TABLE opcli.mine (n int)',
      'ALTER TABLE opcli.intents DROP CONSTRAINT intents_one_attempt',
      'DROP TABLE opcli.notes',
      "SELECT opcli.grant_member('postgres')",
    ]) {
      const refused = await as(ddl);
      expect(refused.code, ddl).toBe(1);
      expect(refused.stderr, ddl).toMatch(/permission denied|must be owner/);
    }
    // What the member was refused left the record as it was.
    expect(await pg.admin('SELECT key, author FROM opcli.intents', database)).toBe(`k1|${member.name}\n`);
  });

  test('two members inserting the same attempt of a key at once: one wins, the other is refused by the unique key', async () => {
    const { database, members } = await fresh(2);
    expect((await setup(database, ['--member', members.map((m) => m.name).join(',')])).code).toBe(0);
    const results = await Promise.all(
      members.map((m, i) =>
        pg.psql(
          `INSERT INTO opcli.intents (kind, origin, store_id, key, attempt, filing, at) VALUES ('credit', 'https://api.example.com', 'st_1', 'shop:s|store:st_1|claim:c1', 1, 'f-${i}', now())`,
          {
            user: m.name,
            password: m.password,
            database,
          },
        ),
      ),
    );
    expect(results.map((r) => r.code).sort()).toEqual([0, 1]);
    expect(results.find((r) => r.code === 1)?.stderr).toContain('duplicate key value violates unique constraint "intents_one_attempt"');
    const rows = (await pg.admin("SELECT author FROM opcli.intents WHERE key = 'shop:s|store:st_1|claim:c1'", database)).trim().split('\n');
    expect(rows).toHaveLength(1);
    expect(members.map((m) => m.name)).toContain(rows[0]);
  });

  test('an administrator who is not a superuser, only the database’s owner (as on a managed PostgreSQL), sets it up', async () => {
    const { database, members } = await fresh(1);
    const admin = { name: `owner_${randomBytes(3).toString('hex')}`, password: `pw-${randomBytes(6).toString('hex')}` };
    await pg.admin(`CREATE ROLE ${admin.name} LOGIN PASSWORD '${admin.password}' NOSUPERUSER; ALTER DATABASE ${database} OWNER TO ${admin.name}`);
    const url = `postgresql://${admin.name}@127.0.0.1:${pg.port}/${database}`;
    const run = await runOpcli(['record', 'setup', '--url', url, '--member', members[0]!.name], {
      env: { PGPASSWORD: admin.password, OPCLI_CONFIG_DIR: pg.dir },
    });
    expect(run.stderr).not.toContain('Error');
    expect(run.code).toBe(0);
    expect(await pg.admin("SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'opcli'", database)).toBe(`${admin.name}\n`);
    const refused = await pg.psql('DELETE FROM opcli.intents', { user: members[0]!.name, password: members[0]!.password, database });
    expect(refused.stderr).toContain('permission denied for table intents');
  });

  test('--print-sql: the script psql runs does what setup does, once; run again on a record past its version, it changes nothing', async () => {
    const { database, members } = await fresh(1);
    const printed = await runOpcli(['record', 'setup', '--print-sql', '--member', members[0]!.name], { env: { OPCLI_CONFIG_DIR: pg.dir } });
    expect(printed.code).toBe(0);
    expect(printed.stdout).toMatch(/^-- opcli's team record: from schema version 0 to 3/);
    const psql = () =>
      spawnSync(join(pg.binDir, 'psql'), ['-X', '-q', '-h', '127.0.0.1', '-p', String(pg.port), '-U', pg.superuser, '-d', database, '-f', '-'], {
        input: printed.stdout,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, PGPASSWORD: pg.superuserPassword, PGSSLMODE: 'disable' },
      });
    const applied = psql();
    expect(applied.stderr).toBe('');
    expect(applied.status).toBe(0);
    const again = psql();
    expect(again.status).toBe(3);
    expect(again.stderr).toContain('the record is not at schema version 0: nothing was changed');
    const setup2 = await setup(database, ['--json']);
    expect(JSON.parse(setup2.stdout)).toMatchObject({ previousVersion: 3, applied: [], members: [members[0]!.name] });
    const refused = await pg.psql('TRUNCATE opcli.outcomes', { user: members[0]!.name, password: members[0]!.password, database });
    expect(refused.stderr).toContain('permission denied for table outcomes');
    const misuse = await runOpcli(['record', 'setup', '--print-sql', '--url', 'postgresql://a@h/db'], { env: { OPCLI_CONFIG_DIR: pg.dir } });
    expect(misuse).toMatchObject({ code: 2, stderr: expect.stringContaining('--print-sql connects nowhere: it takes no --url and no --json.') });
  });

  test('a role that cannot be a member is refused, and nothing is created', async () => {
    const { database } = await fresh(0);
    const unknown = await setup(database, ['--member', 'nobody_here']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Role "nobody_here" does not exist in this database; nothing was changed.');
    const self = await setup(database, ['--member', pg.superuser]);
    expect(self.code).toBe(2);
    expect(self.stderr).toContain(`Role "${pg.superuser}" cannot be a member: it is a superuser`);
    expect(await pg.admin("SELECT count(*) FROM pg_namespace WHERE nspname = 'opcli'", database)).toBe('0\n');
  });

  test('a database that cannot be reached, or refuses the password: one line naming it, exit 1, rerunning safe, no password shown', async () => {
    const { database } = await fresh(0);
    const port = await deadPort();
    const refused = await runOpcli(['record', 'setup', '--url', `postgresql://admin@127.0.0.1:${port}/${database}`], {
      env: { PGPASSWORD: 'secret-pw-1', OPCLI_CONFIG_DIR: pg.dir },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `Error: Record database 127.0.0.1:${port}/${database}: connection refused (is PostgreSQL running and listening there?); setup is one transaction, applied whole or not at all: rerunning it is safe\n`,
    );

    const wrong = await runOpcli(['record', 'setup', '--url', pg.url({ database, password: 'wrong-password-42' })], { env: { OPCLI_CONFIG_DIR: pg.dir } });
    expect(wrong.code).toBe(1);
    const lines = wrong.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^Warning: the password in --url can be seen/);
    expect(lines.slice(1)).toEqual([
      `Error: Record database 127.0.0.1:${pg.port}/${database}: the server refused the password of role "${pg.superuser}" (taken from --url); setup is one transaction, applied whole or not at all: rerunning it is safe`,
    ]);
    expect(wrong.stderr + wrong.stdout).not.toContain('wrong-password-42');

    const json = await runOpcli(['record', 'setup', '--json', '--url', `postgresql://admin@127.0.0.1:${port}/${database}`], {
      env: { OPCLI_CONFIG_DIR: pg.dir },
    });
    expect(JSON.parse(json.stderr).error).toMatchObject({ exitCode: 1, database: { host: '127.0.0.1', port, database }, code: 'ECONNREFUSED' });
  });

  test('a server that accepts and never answers: the wait ends at connect_timeout with the one line', async () => {
    const hole = await blackhole();
    try {
      const run = await runOpcli(['record', 'setup', '--url', `postgresql://admin@127.0.0.1:${hole.port}/db?connect_timeout=2`], {
        env: { OPCLI_CONFIG_DIR: pg.dir },
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `Error: Record database 127.0.0.1:${hole.port}/db: no connection within 2 s (connect_timeout); setup is one transaction, applied whole or not at all: rerunning it is safe\n`,
      );
    } finally {
      await hole.close();
    }
  });

  test('the built binary: node-postgres and the SQL files come from the bundle, in a chunk no start-up chunk imports', async () => {
    const { database, members } = await fresh(1);
    const run = await runBinary(
      ['record', 'setup', '--json', '--url', `postgresql://${pg.superuser}@127.0.0.1:${pg.port}/${database}`, '--member', members[0]!.name],
      {
        env: { PGPASSWORD: pg.superuserPassword, OPCLI_CONFIG_DIR: pg.dir },
      },
    );
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toMatchObject({
      schemaVersion: 3,
      applied: [
        { version: 1, name: 'record' },
        { version: 2, name: 'claim-questions' },
        { version: 3, name: 'batch-rows' },
      ],
      members: [members[0]!.name],
    });
    const chunks = join(ROOT, 'dist', 'chunks');
    const driver = readdirSync(chunks).filter((f) => f.endsWith('.js') && readFileSync(join(chunks, f), 'utf8').includes('SCRAM-SERVER-FIRST-MESSAGE'));
    expect(driver).toHaveLength(1);
    for (const start of [join(ROOT, 'dist', 'main.js'), join(chunks, 'core.js')]) expect(readFileSync(start, 'utf8')).not.toContain(driver[0]);
  });
});
