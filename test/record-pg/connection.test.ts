/**
 * A member's connection to the team's record: the libpq rules (the URL, then PG* variables, then
 * defaults; PGPASSWORD and ~/.pgpass), TLS verified for a host that is not this machine, bounded
 * waits, and a record that is missing, not this role's, or gone mid-way failing in one line that
 * names the database and never its password. Against a real PostgreSQL (test/infra/postgres.ts).
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connectionSettings, LIMITS } from '../../src/record-pg/connection.js';
import { openRecordDatabase, setupRecord } from '../../src/record-pg/database.js';
import { parseRecordUrl } from '../../src/record-pg/url.js';
import { runOpcli, tempConfigDir } from '../helpers.js';
import { makeCa, missingInfra, type Postgres, startPostgres, type TestCa } from '../infra/index.js';

const ctx = (env: Record<string, string | undefined> = {}) => ({ env: { HOME: '/nonexistent', ...env }, cwd: '/' });
const settings = (url: string, env: Record<string, string | undefined> = {}) => connectionSettings(parseRecordUrl(url, 'test'), ctx(env));

describe('connection settings, the libpq way', () => {
  test('a host on this machine gets no TLS by default; any other host gets TLS with the certificate and its name checked', () => {
    for (const host of ['127.0.0.1', 'localhost', '[::1]']) expect(settings(`postgresql://a@${host}/db`).config.ssl).toBe(false);
    const remote = settings('postgresql://a@db.example.com/db');
    expect(remote.target.sslmode).toBe('verify-full');
    expect(remote.config.ssl).toEqual({ rejectUnauthorized: true });
  });

  test('sslmode, from the URL or PGSSLMODE, says otherwise explicitly, with libpq meanings', () => {
    expect(settings('postgresql://a@db.example.com/db?sslmode=disable').config.ssl).toBe(false);
    expect(settings('postgresql://a@db.example.com/db', { PGSSLMODE: 'require' }).config.ssl).toEqual({ rejectUnauthorized: false });
    expect(settings('postgresql://a@127.0.0.1/db?sslmode=verify-full').config.ssl).toEqual({ rejectUnauthorized: true });
    const verifyCa = settings('postgresql://a@db.example.com/db?sslmode=verify-ca').config.ssl as {
      rejectUnauthorized: boolean;
      checkServerIdentity?: () => undefined;
    };
    expect(verifyCa.rejectUnauthorized).toBe(true);
    expect(verifyCa.checkServerIdentity?.()).toBeUndefined();
    expect(() => settings('postgresql://a@db.example.com/db?sslmode=maybe')).toThrow(
      /sslmode "maybe" is not one of disable, allow, prefer, require, verify-ca, verify-full/,
    );
  });

  test('what the URL names wins over PGHOST, PGPORT, PGUSER, PGDATABASE, which fill what it leaves out', () => {
    const env = { PGHOST: 'env.example.com', PGPORT: '6543', PGUSER: 'envuser', PGDATABASE: 'envdb' };
    expect(settings('postgresql://alice@db.example.com:5433/team', env).target).toMatchObject({
      host: 'db.example.com',
      port: 5433,
      user: 'alice',
      database: 'team',
    });
    expect(settings('postgresql://', env).target).toMatchObject({
      host: 'env.example.com',
      port: 6543,
      user: 'envuser',
      database: 'envdb',
      label: 'env.example.com:6543/envdb',
    });
    expect(settings('postgresql:///team?host=/run/postgresql&port=5433&user=bob').target).toMatchObject({
      host: '/run/postgresql',
      port: 5433,
      user: 'bob',
      label: '/run/postgresql port 5433/team',
    });
  });

  test('every wait is bounded: connect_timeout as libpq reads it (0 is not forever), statements and answers', () => {
    expect(settings('postgresql://a@h/db').config.connectionTimeoutMillis).toBe(LIMITS.connectMs);
    expect(settings('postgresql://a@h/db?connect_timeout=0').config.connectionTimeoutMillis).toBe(LIMITS.connectMs);
    expect(settings('postgresql://a@h/db?connect_timeout=1').config.connectionTimeoutMillis).toBe(2000);
    expect(settings('postgresql://a@h/db', { PGCONNECT_TIMEOUT: '5' }).config.connectionTimeoutMillis).toBe(5000);
    const { config } = settings('postgresql://a@h/db');
    expect(config).toMatchObject({ statement_timeout: LIMITS.statementMs, query_timeout: LIMITS.statementMs + LIMITS.answerGraceMs, keepAlive: true });
    expect(() => settings('postgresql://a@h/db?connect_timeout=soon')).toThrow(/connect_timeout "soon" is not a whole number of seconds/);
    expect(() => settings('postgresql://a@h/db?target_session_attrs=any')).toThrow(/parameter "target_session_attrs", which opcli does not use/);
  });

  test('the password: the URL’s, else PGPASSWORD, else the password file when only its owner can read it', async () => {
    const home = mkdtempSync(join(tmpdir(), 'opcli-pgpass-'));
    try {
      const password = (url: string, env: Record<string, string>) =>
        (connectionSettings(parseRecordUrl(url, 'test'), ctx(env)).config.password as () => Promise<string | undefined>)();
      expect(await password('postgresql://a:from-url@h/db', { PGPASSWORD: 'from-env' })).toBe('from-url');
      expect(await password('postgresql://a@h/db', { PGPASSWORD: 'from-env' })).toBe('from-env');
      writeFileSync(join(home, '.pgpass'), 'other:5432:*:a:not-this\nh:5432:db:a:from-file\n');
      chmodSync(join(home, '.pgpass'), 0o600);
      expect(await password('postgresql://a@h/db', { HOME: home })).toBe('from-file');
      expect(await password('postgresql://a@h:5433/db', { HOME: home })).toBeUndefined();
      if (process.platform !== 'win32') {
        chmodSync(join(home, '.pgpass'), 0o644);
        expect(await password('postgresql://a@h/db', { HOME: home })).toBeUndefined();
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

const missing = missingInfra('pg_ctl', 'openssl');

describe.skipIf(missing)('a member opening the record', () => {
  let pg: Postgres;
  let ca: TestCa;
  let database: string;
  const member = { name: `member_${randomBytes(3).toString('hex')}`, password: `pw-${randomBytes(6).toString('hex')}` };
  const outsider = { name: `outsider_${randomBytes(3).toString('hex')}`, password: `pw-${randomBytes(6).toString('hex')}` };

  beforeAll(async () => {
    ca = await makeCa({ name: 'opcli record test CA' });
    pg = await startPostgres({ tls: ca });
    database = `rec_${randomBytes(3).toString('hex')}`;
    await pg.admin(`CREATE DATABASE ${database}`);
    for (const role of [member, outsider]) await pg.admin(`CREATE ROLE ${role.name} LOGIN PASSWORD '${role.password}'`);
  });
  afterAll(async () => {
    await pg?.stop();
    ca?.cleanup();
  });

  const memberUrl = (query = '') => ({ url: `postgresql://${member.name}@127.0.0.1:${pg.port}/${database}${query}`, password: member.password });
  const open = (record: { url: string; password?: string }, env: Record<string, string> = {}) =>
    openRecordDatabase(record, { env: { HOME: '/nonexistent', ...env }, cwd: '/', passwordSource: 'the stored record-url' });

  test('before setup: one line naming the database and the administrator’s command; after it, the member reads and writes', async () => {
    await expect(open(memberUrl())).rejects.toThrow(
      `Record database 127.0.0.1:${pg.port}/${database} holds no opcli record yet: whoever administers it runs \`opcli record setup --url URL --member ${member.name}\` once; nothing was written or sent; rerunning is safe.`,
    );
    await setupRecord({ url: `postgresql://${pg.superuser}@127.0.0.1:${pg.port}/${database}`, password: pg.superuserPassword }, [member.name], {
      env: {},
      cwd: '/',
    });
    const record = await open(memberUrl());
    try {
      const author = await record.withClient(async (c) => (await c.query<{ a: string }>('SELECT current_user::text AS a')).rows[0]?.a, 'n/a');
      expect(author).toBe(member.name);
    } finally {
      await record.close();
    }
  });

  test('a role that is not a member, and a wrong password: one line each, never the password', async () => {
    await expect(open({ url: `postgresql://${outsider.name}@127.0.0.1:${pg.port}/${database}`, password: outsider.password })).rejects.toThrow(
      `Record database 127.0.0.1:${pg.port}/${database}: permission denied for schema opcli: ask whoever administers the database to run \`opcli record setup --member ${outsider.name}\`; nothing was written or sent; rerunning is safe`,
    );
    const wrong = open({ url: memberUrl().url, password: 'wrong-pw-123456' });
    await expect(wrong).rejects.toThrow(
      `Record database 127.0.0.1:${pg.port}/${database}: the server refused the password of role "${member.name}" (taken from the stored record-url); nothing was written or sent; rerunning is safe`,
    );
    await expect(wrong).rejects.not.toThrow(/wrong-pw-123456/);
  });

  test('no password anywhere (URL, PGPASSWORD, ~/.pgpass): one line saying where one is looked for', async () => {
    await expect(open({ url: memberUrl().url })).rejects.toThrow(
      `Record database 127.0.0.1:${pg.port}/${database}: the server asked for a password for role "${member.name}" and none was found (URL, PGPASSWORD, ~/.pgpass); nothing was written or sent; rerunning is safe`,
    );
  });

  test('~/.pgpass gives the password when the URL and PGPASSWORD do not', async () => {
    const home = mkdtempSync(join(tmpdir(), 'opcli-pgpass-'));
    try {
      writeFileSync(join(home, '.pgpass'), `127.0.0.1:${pg.port}:${database}:${member.name}:${member.password}\n`, { mode: 0o600 });
      const record = await open({ url: memberUrl().url }, { HOME: home });
      await record.close();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test('TLS: verify-full with the server’s CA connects encrypted; without the CA it stops in one line naming sslrootcert', async () => {
    const record = await open(memberUrl(`?sslmode=verify-full&sslrootcert=${encodeURIComponent(ca.caFile)}`));
    try {
      const ssl = await record.withClient(
        async (c) => (await c.query<{ ssl: boolean }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()')).rows[0]?.ssl,
        'n/a',
      );
      expect(ssl).toBe(true);
    } finally {
      await record.close();
    }
    await expect(open(memberUrl('?sslmode=verify-full'))).rejects.toThrow(
      /^Record database 127\.0\.0\.1:\d+\/rec_\w+: the server's certificate is not trusted \(\w+\): give its CA with sslrootcert=/,
    );
  });

  test('the server stopped (pg_ctl stop -m immediate) under an open record: the next statement fails in one line, without waiting', async () => {
    const record = await open(memberUrl());
    try {
      await pg.crash();
      const failed = record.withClient((c) => c.query('SELECT 1'), 'nothing was written; rerunning is safe');
      await expect(failed).rejects.toThrow(
        /^Record database 127\.0\.0\.1:\d+\/rec_\w+: (the connection was lost|connection refused|the server is shutting down)[^\n]*; nothing was written; rerunning is safe$/,
      );
    } finally {
      await record.close();
      await pg.restart();
    }
  });

  test('opcli record check: ready over verified TLS with the stored password; no record-url is exit 2; a wrong password one line', async () => {
    const { dir, cleanup } = tempConfigDir();
    try {
      const env = { OPCLI_CONFIG_DIR: dir, HOME: '/nonexistent' };
      const none = await runOpcli(['record', 'check'], { env });
      expect(none).toMatchObject({ code: 2, stderr: expect.stringContaining('Profile "default" has no record-url: its record is in files.') });

      const url = `postgresql://${member.name}:${encodeURIComponent(member.password)}@127.0.0.1:${pg.port}/${database}?sslmode=verify-full&sslrootcert=${encodeURIComponent(ca.caFile)}`;
      expect((await runOpcli(['config', 'set', 'record-url', '--stdin'], { env, stdin: url })).code).toBe(0);
      const ready = await runOpcli(['record', 'check', '--json'], { env });
      expect(ready.stderr).toBe('');
      expect(JSON.parse(ready.stdout)).toMatchObject({
        database: { host: '127.0.0.1', port: pg.port, database },
        role: member.name,
        tls: true,
        sslmode: 'verify-full',
        schemaVersion: 3,
      });

      const wrong = await runOpcli(['--verbose', 'record', 'check'], {
        env: { ...env, OPCLI_RECORD_URL: `postgresql://${member.name}:not-it-${member.password}@127.0.0.1:${pg.port}/${database}` },
      });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr.split('\n')[0]).toBe(
        `Error: Record database 127.0.0.1:${pg.port}/${database}: the server refused the password of role "${member.name}" (taken from OPCLI_RECORD_URL); nothing was written or sent; rerunning is safe`,
      );
      expect(wrong.stderr).not.toContain(member.password);
    } finally {
      cleanup();
    }
  });
});
