/**
 * From a record URL to node-postgres's settings by libpq's rules (https://www.postgresql.org/docs/current/libpq-connect.html):
 * the URL, then the PG* variables, then libpq's defaults; the password stored with the URL, else PGPASSWORD, else the password file.
 * CHOICE (docs/spec-choices.md#record-database-connection): on top, verify-full TLS for a host that is not this machine, and a bound on every wait.
 */
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { homedir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import type { PoolConfig } from 'pg';
import { UsageError } from '../core/errors.js';
import { isLoopbackHost } from '../http/client.js';
import { readPemBundle } from '../http/trust.js';
import { maskRecordUrl, type RecordUrl } from './url.js';

/** How long a connection may take, a statement may run, and an answer may be awaited, in milliseconds. */
export const LIMITS = { connectMs: 10_000, statementMs: 30_000, answerGraceMs: 5_000, lockMs: 10_000, idleInTransactionMs: 60_000 };

/** The URL parameters understood (libpq's names); any other is refused, as libpq refuses it. */
const PARAMS = new Set(['host', 'port', 'dbname', 'user', 'sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'connect_timeout', 'application_name', 'options']);
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
type SslMode = (typeof SSL_MODES)[number];

/** Where a record database is, as messages name it (never with its password). */
export interface RecordTarget {
  host: string;
  port: number;
  database: string;
  user: string;
  /** `db.example.com:5432/opcli` (a socket folder for a unix socket). */
  label: string;
  sslmode: SslMode;
  /** Where the password comes from, for the error when the server refuses it. */
  passwordFrom: string;
  connectMs: number;
}

export interface ConnectionContext {
  env: Record<string, string | undefined>;
  cwd: string;
  /** Where the URL's password came from: `the stored record-url` (the credential store), `OPCLI_RECORD_URL`, `--url`. */
  passwordSource?: string;
}

/** The target and node-postgres's pool settings for `record`; a usage error names a parameter that cannot be right. */
export function connectionSettings(record: RecordUrl, ctx: ConnectionContext): { target: RecordTarget; config: PoolConfig } {
  const { env } = ctx;
  const url = new URL(record.url);
  const shown = maskRecordUrl(record.url);
  for (const name of url.searchParams.keys()) {
    if (!PARAMS.has(name)) {
      throw new UsageError(`The record URL ${shown} has the parameter "${name}", which opcli does not use.`, `Known parameters: ${[...PARAMS].join(', ')}.`);
    }
  }
  const param = (name: string, variable: string): string | undefined => url.searchParams.get(name) || env[variable] || undefined;
  const host = decodeURIComponent(url.hostname.replace(/^\[|\]$/g, '')) || param('host', 'PGHOST') || 'localhost';
  const portText = url.port || param('port', 'PGPORT') || '5432';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65_535)
    throw new UsageError(`The record URL ${shown}: port "${portText}" is not a port number (1 to 65535).`);
  const user = decodeURIComponent(url.username) || param('user', 'PGUSER') || osUserName(env);
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || param('dbname', 'PGDATABASE') || user;
  const socket = host.startsWith('/');
  const sslmode = sslModeOf(param('sslmode', 'PGSSLMODE'), socket || isLoopbackHost(host), shown);
  const connectMs = connectTimeoutOf(param('connect_timeout', 'PGCONNECT_TIMEOUT'), shown);
  const passwordFrom = record.password !== undefined ? (ctx.passwordSource ?? 'the URL') : env.PGPASSWORD !== undefined ? 'PGPASSWORD' : 'the password file';
  const target: RecordTarget = {
    host,
    port,
    database,
    user,
    label: socket ? `${host} port ${port}/${database}` : `${host.includes(':') ? `[${host}]` : host}:${port}/${database}`,
    sslmode,
    passwordFrom,
    connectMs,
  };
  const config: PoolConfig = {
    host,
    port,
    user,
    database,
    // The password node-postgres asks for when the server wants one (it takes undefined as "none"; its types say string only).
    password: async (): Promise<string> => {
      if (record.password !== undefined) return record.password;
      if (env.PGPASSWORD !== undefined) return env.PGPASSWORD;
      const password = await fromPasswordFile(target, env);
      target.passwordFrom = password !== undefined ? 'the password file' : 'nowhere';
      return password as string;
    },
    ssl: tlsSettings(
      sslmode,
      host,
      { root: param('sslrootcert', 'PGSSLROOTCERT'), cert: param('sslcert', 'PGSSLCERT'), key: param('sslkey', 'PGSSLKEY') },
      ctx,
    ),
    application_name: url.searchParams.get('application_name') ?? 'opcli',
    options: url.searchParams.get('options') ?? undefined,
    connectionTimeoutMillis: connectMs,
    statement_timeout: LIMITS.statementMs,
    lock_timeout: LIMITS.lockMs,
    idle_in_transaction_session_timeout: LIMITS.idleInTransactionMs,
    query_timeout: LIMITS.statementMs + LIMITS.answerGraceMs,
    keepAlive: true,
  };
  return { target, config };
}

/** libpq's default role: the operating system's user name (USER or USERNAME where the system has no entry for this user). */
function osUserName(env: Record<string, string | undefined>): string {
  try {
    return userInfo().username;
  } catch {
    return env.USER ?? env.USERNAME ?? 'postgres';
  }
}

/** sslmode as libpq reads it; by default none on this machine, and verify-full anywhere else. */
function sslModeOf(raw: string | undefined, local: boolean, shown: string): SslMode {
  if (raw === undefined) return local ? 'disable' : 'verify-full';
  if (!(SSL_MODES as readonly string[]).includes(raw)) {
    throw new UsageError(
      `The record URL ${shown}: sslmode "${raw}" is not one of ${SSL_MODES.join(', ')}.`,
      'verify-full checks the server is the one named; it is the default for a server on another machine.',
    );
  }
  return raw as SslMode;
}

/** connect_timeout in seconds as libpq reads it (at least 2), bounded: 0 (libpq: wait forever) is the default. */
function connectTimeoutOf(raw: string | undefined, shown: string): number {
  if (raw === undefined) return LIMITS.connectMs;
  const seconds = Number(raw);
  if (!Number.isInteger(seconds) || seconds < 0) throw new UsageError(`The record URL ${shown}: connect_timeout "${raw}" is not a whole number of seconds.`);
  return seconds === 0 ? LIMITS.connectMs : Math.max(2, seconds) * 1000;
}

/** libpq's own files for certificates: ~/.postgresql (%APPDATA%\postgresql on Windows). */
function libpqFile(name: string, env: Record<string, string | undefined>): string {
  const dir = process.platform === 'win32' ? join(env.APPDATA ?? homedir(), 'postgresql') : join(env.HOME ?? homedir(), '.postgresql');
  return join(dir, name);
}

/**
 * node-postgres's `ssl` for an sslmode, as libpq means it (but allow and prefer cannot fall back to a plain
 * connection in node-postgres); the CAs sslrootcert's (`system`: Node's), else ~/.postgresql/root.crt, else Node's.
 */
function tlsSettings(mode: SslMode, host: string, files: { root?: string; cert?: string; key?: string }, ctx: ConnectionContext): PoolConfig['ssl'] {
  if (mode === 'disable' || host.startsWith('/')) return false;
  const defaultRoot = libpqFile('root.crt', ctx.env);
  const rootFile = files.root ?? (existsSync(defaultRoot) ? defaultRoot : undefined);
  const ca = rootFile && rootFile !== 'system' ? readPemBundle(rootFile, files.root ? 'sslrootcert' : '~/.postgresql/root.crt', ctx.cwd) : undefined;
  const client = files.cert && files.key ? { cert: readClientFile(files.cert, 'sslcert', ctx.cwd), key: readClientFile(files.key, 'sslkey', ctx.cwd) } : {};
  // libpq: require with a root certificate given checks the chain, as verify-ca does.
  const verify = mode === 'verify-full' || mode === 'verify-ca' || (mode === 'require' && files.root !== undefined);
  if (!verify) return { rejectUnauthorized: false, ...client };
  return { rejectUnauthorized: true, ...(ca ? { ca } : {}), ...client, ...(mode === 'verify-full' ? {} : { checkServerIdentity: () => undefined }) };
}

/** A client certificate or key file's text, or a usage error naming the parameter. */
function readClientFile(path: string, what: string, cwd: string): string {
  try {
    return readFileSync(resolve(cwd, path), 'utf8');
  } catch (error) {
    throw new UsageError(`The record URL's ${what} file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
}

/** The password file's password (libpq's file, read by node-postgres's own pgpass library, which ignores a file others can read), or undefined. */
async function fromPasswordFile(target: RecordTarget, env: Record<string, string | undefined>): Promise<string | undefined> {
  const { default: helper } = await import('pgpass/lib/helper.js');
  const file = helper.getFileName(env);
  const stats = await stat(file).catch(() => undefined);
  if (!stats || !helper.usePgPass(stats, file)) return undefined;
  return new Promise((done) => helper.getPassword(target, createReadStream(file), done));
}
