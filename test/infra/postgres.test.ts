/**
 * The PostgreSQL fixture against psql (not opcli): a cluster owned by an unprivileged user, on
 * loopback only, asking TCP clients for a password, crashed with `pg_ctl stop -m immediate` and
 * started again with its data, and stopped by PID with its folder removed.
 */
import { existsSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { missingInfra, type Postgres, startPostgres } from './index.js';
import { isRoot, readText } from './process.js';

const missing = missingInfra('pg_ctl');

describe.skipIf(missing)('postgres fixture', () => {
  let pg: Postgres;
  beforeAll(async () => {
    pg = await startPostgres();
  });
  afterAll(async () => {
    await pg?.stop();
  });

  test('the server listens on 127.0.0.1 only, runs as an unprivileged user and keeps its cluster in the fixture folder', async () => {
    expect(await pg.admin('SHOW listen_addresses')).toBe('127.0.0.1\n');
    expect(await pg.admin('SHOW data_directory')).toBe(`${pg.dir}/data\n`);
    const uid = Number(/^Uid:\s+(\d+)/m.exec(readText(`/proc/${pg.pid}/status`))?.[1]);
    if (isRoot()) expect(uid).not.toBe(0);
    expect(statSync(`${pg.dir}/data`).uid).toBe(uid);
  });

  test('a wrong password is refused with psql’s own words', async () => {
    const wrong = await pg.psql('SELECT 1', { user: pg.superuser, password: 'not-the-password' });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain(`password authentication failed for user "${pg.superuser}"`);
  });

  test('pg_ctl stop -m immediate ends the server at once; restart() brings it back with what was committed', async () => {
    await pg.admin('CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)');
    const before = pg.pid;
    await pg.crash();
    const down = await pg.psql('SELECT 1');
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/Connection refused|could not connect/);
    await pg.restart();
    expect(pg.pid).not.toBe(before);
    expect(await pg.admin('SELECT n FROM kept')).toBe('42\n');
    expect(pg.log()).toContain('database system was interrupted');
  });

  test('stop() ends the postmaster by PID and removes the folder', async () => {
    const other = await startPostgres();
    const { pid, dir } = other;
    await other.stop();
    expect(existsSync(`/proc/${pid}`) && !readText(`/proc/${pid}/stat`).includes(') Z')).toBe(false);
    expect(existsSync(dir)).toBe(false);
  });
});
