/**
 * A record database that fails, in one line: which database (never the password), what happened in psql's
 * words, and whether rerunning is safe (the caller's words). The server's words are untrusted: safeLine.
 */
import { OpcliError } from '../core/errors.js';
import { safeLine } from '../text/safe.js';
import { LIMITS, type RecordTarget } from './connection.js';

/** The record database failed; `details.database` names it. */
export class RecordDatabaseError extends OpcliError {
  /** SQLSTATE, or Node's error code (ECONNREFUSED), when one was given. */
  readonly code?: string;
  constructor(message: string, target: Pick<RecordTarget, 'host' | 'port' | 'database'>, code?: string, cause?: unknown) {
    super(message, { cause, details: { database: { host: target.host, port: target.port, database: target.database }, code: code ?? null } });
    this.code = code;
  }
}

/** Node's network errors and TLS refusals (their `code`), in words. */
const NETWORK: Record<string, string> = {
  ECONNREFUSED: 'connection refused (is PostgreSQL running and listening there?)',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be looked up',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
  ECONNRESET: 'the connection was lost (the server stopped or restarted?)',
  EPIPE: 'the connection was lost (the server stopped or restarted?)',
  ENOENT: 'no server socket there (is PostgreSQL running?)',
};

const CERTIFICATE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/;

/** SQLSTATEs in opcli's words. */
function sqlStateWords(code: string, server: string, target: RecordTarget): string | undefined {
  if (code === '28P01') return `the server refused the password of role "${target.user}" (taken from ${target.passwordFrom})`;
  if (code === '3D000') return `database "${target.database}" does not exist`;
  if (code === '57014') return `a statement was cancelled after ${LIMITS.statementMs / 1000} s (statement_timeout) or on request`;
  if (code === '57P01' || code === '57P02' || code === '57P03') return `the server is shutting down or starting up (${server})`;
  if (code === '42501') return `${server}: ask whoever administers the database to run \`opcli record setup --member ${target.user}\``;
  if (code.startsWith('08')) return `the connection failed (${server})`;
  if (code.startsWith('53')) return `the server is out of resources (${server})`;
  return undefined;
}

/** What went wrong, in words. */
function describeFailure(error: unknown, target: RecordTarget): { words: string; code?: string } {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = typeof e?.message === 'string' ? e.message : String(error);
  const server = safeLine(message);
  if (code && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('E')) {
    return { words: sqlStateWords(code, server, target) ?? `the server answered ${code}: ${server}`, code };
  }
  if (code && NETWORK[code]) return { words: NETWORK[code], code };
  if (code && CERTIFICATE.test(code)) {
    return { words: `the server's certificate is not trusted (${code}): give its CA with sslrootcert=/path/ca.pem in the URL or PGSSLROOTCERT`, code };
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return { words: `the server's certificate is not for ${target.host} (${server})`, code };
  if (/does not support SSL/i.test(message)) {
    return { words: 'the server does not offer TLS (add sslmode=disable to the URL only where the network between you is trusted)', code };
  }
  if (/timeout expired|connection timeout/i.test(message))
    return { words: `no connection within ${target.connectMs / 1000} s (connect_timeout)`, code: code ?? 'ETIMEDOUT' };
  if (/Query read timeout/i.test(message)) return { words: 'the server stopped answering (no answer within the statement timeout)', code: code ?? 'ETIMEDOUT' };
  if (/Connection terminated|connection.*(ended|closed)/i.test(message)) return { words: 'the connection was lost (the server stopped or restarted?)', code };
  if (/password authentication|SASL|client password must be a string/i.test(message)) {
    return { words: `the server asked for a password for role "${target.user}" and none was found (URL, PGPASSWORD, ~/.pgpass)`, code };
  }
  return { words: server, code };
}

/** The one-line error for a failure of the record database, `rerun` in the caller's words; opcli's own errors pass as they are. */
export function databaseError(error: unknown, target: RecordTarget, rerun: string): OpcliError {
  if (error instanceof OpcliError) return error;
  const { words, code } = describeFailure(error, target);
  return new RecordDatabaseError(`Record database ${target.label}: ${words}; ${rerun}`, target, code, error);
}
