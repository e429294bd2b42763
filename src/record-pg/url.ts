/**
 * The `record-url` (a libpq connection URI, as psql takes it). No library here: config reads this on every run.
 * CHOICE (docs/spec-choices.md#record-in-postgresql): the password is split off as soon as the URL is read
 * (the credential store keeps it), and every message shows the URL masked.
 */
import { UsageError } from '../core/errors.js';

/** A record URL read: the URL without its password, the password (decoded) when the URL held one. */
export interface RecordUrl {
  /** `postgresql://user@host:port/database?…` with no password. */
  url: string;
  password?: string;
}

/** The URL as messages show it: a password replaced by `***`. */
export function maskRecordUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    if (url.searchParams.has('password')) url.searchParams.set('password', '***');
    return url.href;
  } catch {
    // Never echo what did not parse as it is: it may hold a password.
    return raw.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/** Reads a record URL, or a usage error naming `source`; several hosts (libpq tries each) are refused: node-postgres connects to one. */
export function parseRecordUrl(raw: string, source: string): RecordUrl {
  const value = raw.trim();
  const example = 'such as postgresql://alice@db.example.com:5432/opcli';
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url || (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')) {
    // What does not parse is not echoed at all: it may be a password pasted in the wrong place.
    const got = url ? `got "${maskRecordUrl(value)}"` : 'got something that is not a URL';
    throw new UsageError(
      `${source}: expected a postgres:// or postgresql:// URL, ${example}, ${got}.`,
      'The URL is the one psql takes; the password is better left out (PGPASSWORD or ~/.pgpass give it).',
    );
  }
  if (url.host.includes(',')) {
    throw new UsageError(
      `${source}: "${maskRecordUrl(value)}" names several hosts; opcli connects to one.`,
      'Name the primary server (or the address your provider gives for it).',
    );
  }
  if (url.hash) throw new UsageError(`${source}: "${maskRecordUrl(value)}" has a #fragment, which a database URL cannot hold.`, `Give the URL ${example}.`);
  let password: string | undefined;
  try {
    password = url.password ? decodeURIComponent(url.password) : undefined;
  } catch {
    throw new UsageError(
      `${source}: the password in the URL is not valid percent-encoding.`,
      'Encode reserved characters in it as %XX, or give it in PGPASSWORD instead.',
    );
  }
  url.password = '';
  // libpq also takes the password as a parameter (`?password=…`): split off the same way.
  const param = url.searchParams.get('password');
  if (param !== null) {
    url.searchParams.delete('password');
    password ??= param || undefined;
  }
  return { url: url.href, password };
}
