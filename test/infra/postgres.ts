/**
 * A real PostgreSQL (Debian's package) on a free loopback port, for the team's record in a database.
 * `initdb` makes a cluster in a temporary folder, `pg_ctl start` runs it on 127.0.0.1 with its unix
 * socket in that folder, and stop() ends the postmaster by its PID (SIGINT: PostgreSQL's fast
 * shutdown, then SIGKILL to its process group). PostgreSQL refuses to run as root, so under root
 * (CI) the cluster belongs to an OS user made for it (test/os-users.ts), removed on stop.
 *
 * Start-up is kept short: `initdb --no-sync`, and fsync and full_page_writes off. That is right for
 * tests of logic (constraints, grants, errors): only a crash of the machine itself loses what the
 * operating system had not written yet, and the cluster is thrown away anyway. A crash of the server
 * (crash(): `pg_ctl stop -m immediate`) keeps every commit, as in production: synchronous_commit
 * stays on, since with it off a commit is acknowledged before its WAL is written, and the tests of
 * "no request leaves without a committed intent" would pass on a promise the server did not keep.
 * `durable: true` keeps every default, for a benchmark that must pay for each commit as a real server does.
 */
import { type SpawnOptions, spawn } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createOsUser, type OsUser, removeOsUser } from '../os-users.js';
import { freePort } from './ports.js';
import { findTool, fixtureDir, isRoot, pollUntil, postgresBinDirs, readText, removeFixtureDir, watchDaemon } from './process.js';

export interface PostgresOptions {
  /** Keep PostgreSQL's durability settings (fsync, full_page_writes) on. */
  durable?: boolean;
  /** More `-c name=value` settings for the server. */
  settings?: Record<string, string>;
  /** Offer TLS with this certificate and key (a `makeCa()` result fits); copied into the cluster's folder, owned by its user. */
  tls?: { certFile: string; keyFile: string };
}

export interface Postgres {
  host: '127.0.0.1';
  port: number;
  /** The postmaster's PID (it changes after restart()). */
  readonly pid: number;
  /** The temporary folder: `data/` (the cluster), `server.log`, the unix socket. */
  dir: string;
  /** The cluster's superuser: the OS user that owns it (its name is the role's name). Password: `superuserPassword`. */
  superuser: string;
  superuserPassword: string;
  /** The folder holding initdb, pg_ctl, psql, pg_dump of the same version. */
  binDir: string;
  /** `postgresql://USER:PASSWORD@127.0.0.1:PORT/DATABASE` (user and password percent-encoded); the superuser and `postgres` by default. */
  url(options?: { user?: string; password?: string; database?: string; query?: string }): string;
  /**
   * Runs SQL with psql over TCP as `user` (default the superuser), with ON_ERROR_STOP: the exit code,
   * stdout and stderr (psql's own words, as a person at psql would see them).
   */
  psql(sql: string, options?: { user?: string; password?: string; database?: string }): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Runs SQL as the superuser and fails on an error: for a test's set-up (roles, databases). */
  admin(sql: string, database?: string): Promise<string>;
  /** `pg_ctl stop -m immediate`: the postmaster and every backend end at once, as in a crash; no checkpoint. */
  crash(): Promise<void>;
  /** Starts the cluster again on the same port (after crash() or stop({ keep: true })). */
  restart(): Promise<void>;
  /** The server log's text. */
  log(): string;
  /** Fast shutdown by PID, then removes the folder and the OS user (unless `keep`, for restart()). */
  stop(options?: { keep?: boolean }): Promise<void>;
}

/** The folder of pg_ctl (and its initdb, postgres and psql), or undefined when PostgreSQL is not installed. */
export function findPostgres(): string | undefined {
  const pgCtl = findTool('pg_ctl', postgresBinDirs());
  // PATH may hold a link (pg_ctl -> /usr/lib/postgresql/15/bin/pg_ctl): the real folder has the rest.
  return pgCtl ? dirname(realpathSync(pgCtl)) : undefined;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a PostgreSQL program to its end as `owner` (undefined: this process's user); never rejects. */
function runAs(owner: OsUser | undefined, cmd: string, args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<Ran> {
  return new Promise((resolve) => {
    const options: SpawnOptions = {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', ...env },
      ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
      timeout: timeoutMs,
    };
    const child = spawn(cmd, args, options);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', (error) => resolve({ code: null, stdout, stderr: `${stderr}${error.message}` }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** True while process `pid` exists and is not a zombie. */
function alive(pid: number): boolean {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat) return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts a throwaway cluster on a free loopback port; stop it with `stop()`. */
export async function startPostgres(options: PostgresOptions = {}): Promise<Postgres> {
  const binDir = findPostgres();
  if (!binDir) throw new Error('PostgreSQL is not installed (apt-get install --no-install-recommends postgresql)');
  const dir = fixtureDir('postgres');
  const owner = isRoot() ? createOsUser('opcli-pg') : undefined;
  const superuser = owner?.name ?? (process.env.USER || 'postgres');
  const superuserPassword = `su-${Math.random().toString(36).slice(2, 12)}`;
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  writeFileSync(join(dir, 'pwfile'), `${superuserPassword}\n`);
  if (owner) {
    chownSync(dir, owner.uid, owner.gid);
    chownSync(join(dir, 'pwfile'), owner.uid, owner.gid);
  }
  const tool = (name: string) => join(binDir, name);
  const fail = async (message: string): Promise<never> => {
    removeFixtureDir(dir);
    removeOsUser(owner);
    throw new Error(message);
  };
  // The socket answers without a password (peer-less `trust` for the owner's own folder); TCP asks for one.
  const init = await runAs(owner, tool('initdb'), [
    '--no-sync',
    '-D',
    data,
    '-U',
    superuser,
    `--pwfile=${join(dir, 'pwfile')}`,
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    '--encoding=UTF8',
    '--locale=C',
  ]);
  if (init.code !== 0) await fail(`initdb failed:\n${init.stderr}${init.stdout}`);

  const tls: Record<string, string> = {};
  if (options.tls) {
    // PostgreSQL reads its key only when it is the server user's and no one else's.
    for (const [name, from] of [
      ['server.crt', options.tls.certFile],
      ['server.key', options.tls.keyFile],
    ] as const) {
      copyFileSync(from, join(dir, name));
      chmodSync(join(dir, name), 0o600);
      if (owner) chownSync(join(dir, name), owner.uid, owner.gid);
    }
    Object.assign(tls, { ssl: 'on', ssl_cert_file: join(dir, 'server.crt'), ssl_key_file: join(dir, 'server.key') });
  }
  const settings: Record<string, string> = {
    ...tls,
    listen_addresses: '127.0.0.1',
    unix_socket_directories: dir,
    max_connections: '60',
    shared_buffers: '16MB',
    ...(options.durable ? {} : { fsync: 'off', full_page_writes: 'off' }),
    ...options.settings,
  };
  let port = 0;
  let pid = 0;
  const start = async (): Promise<Ran> => {
    const flags = Object.entries({ ...settings, port: String(port) })
      .map(([name, value]) => `-c ${name}=${value}`)
      .join(' ');
    return runAs(owner, tool('pg_ctl'), ['start', '-w', '-t', '60', '-D', data, '-l', logFile, '-o', flags]);
  };
  const readPid = () => Number(readText(join(data, 'postmaster.pid')).split('\n')[0]);
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    const started = await start();
    if (started.code === 0) break;
    const taken = /could not bind|Address already in use/.test(readText(logFile));
    if (!taken || attempt >= 5) await fail(`pg_ctl start failed:\n${started.stderr}${started.stdout}${readText(logFile)}`);
  }
  pid = readPid();
  watchDaemon(pid, dir);

  const url: Postgres['url'] = (o = {}) => {
    const user = encodeURIComponent(o.user ?? superuser);
    const password = o.password ?? (o.user === undefined ? superuserPassword : undefined);
    const auth = password === undefined ? user : `${user}:${encodeURIComponent(password)}`;
    return `postgresql://${auth}@127.0.0.1:${port}/${encodeURIComponent(o.database ?? 'postgres')}${o.query ? `?${o.query}` : ''}`;
  };
  const psql: Postgres['psql'] = (sql, o = {}) => {
    const user = o.user ?? superuser;
    const password = o.password ?? (o.user === undefined ? superuserPassword : '');
    const args = [
      '-X',
      '-q',
      '-A',
      '-t',
      '-v',
      'ON_ERROR_STOP=1',
      '-h',
      '127.0.0.1',
      '-p',
      String(port),
      '-U',
      user,
      '-d',
      o.database ?? 'postgres',
      '-c',
      sql,
    ];
    return runAs(undefined, tool('psql'), args, { PGPASSWORD: password, PGCONNECT_TIMEOUT: '10', PGSSLMODE: 'disable' });
  };
  const stopByPid = async (signal: NodeJS.Signals) => {
    if (!alive(pid)) return;
    try {
      process.kill(pid, signal);
    } catch {}
    try {
      await pollUntil(
        () => (alive(pid) ? undefined : true),
        10_000,
        () => 'postgres did not stop',
      );
    } catch {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {}
    }
  };
  let stopped = false;
  return {
    host: '127.0.0.1',
    port,
    get pid() {
      return pid;
    },
    dir,
    superuser,
    superuserPassword,
    binDir,
    url,
    psql,
    async admin(sql, database) {
      const result = await psql(sql, { database });
      if (result.code !== 0) throw new Error(`psql as ${superuser} failed: ${result.stderr.trim()}\nSQL: ${sql}`);
      return result.stdout;
    },
    async crash() {
      const result = await runAs(owner, tool('pg_ctl'), ['stop', '-m', 'immediate', '-w', '-D', data]);
      if (result.code !== 0) throw new Error(`pg_ctl stop -m immediate failed: ${result.stderr}`);
      await pollUntil(
        () => (alive(pid) ? undefined : true),
        10_000,
        () => `postgres ${pid} still runs after pg_ctl stop -m immediate`,
      );
    },
    async restart() {
      const started = await start();
      if (started.code !== 0) throw new Error(`pg_ctl start failed again:\n${started.stderr}${readText(logFile)}`);
      pid = readPid();
      watchDaemon(pid, dir);
    },
    log: () => readText(logFile),
    async stop(o = {}) {
      // SIGINT is PostgreSQL's fast shutdown (what `pg_ctl stop -m fast` sends): clients are cut off.
      await stopByPid('SIGINT');
      if (o.keep || stopped) return;
      stopped = true;
      removeFixtureDir(dir);
      try {
        removeOsUser(owner);
      } catch {}
    },
  };
}
