/** The values of `auth login`'s flags, checked before anything is sent. */
import { ValidationError, UsageError } from '../core/errors.js';
import { textProblem } from '../text/safe.js';

/** `--scopes`: names separated by commas or spaces, without duplicates. */
export function parseScopes(raw: string): string[] {
  const problem = /[\r\u0000-\u0008\u000b-\u001f\u007f-\u009f\uFFFD]/.test(raw) ? textProblem(raw.replace(/[\r]/g, '\u0001')) : undefined;
  if (problem)
    throw new ValidationError(`--scopes ${problem}.`, [
      { path: '--scopes', message: 'expected scope names separated by commas or spaces, e.g. read_orders,read_claims' },
    ]);
  const scopes = raw.split(/[\s,]+/).filter(Boolean);
  if (scopes.length === 0)
    throw new ValidationError('--scopes is empty.', [{ path: '--scopes', message: 'expected scope names separated by commas, e.g. read_orders,read_claims' }]);
  const bad = scopes.find((s) => !/^[A-Za-z0-9_:.-]+$/.test(s));
  if (bad) throw new ValidationError(`--scopes: "${bad}" is not a scope name.`, [{ path: '--scopes', message: 'expected letters, digits and _ : . - only' }]);
  return [...new Set(scopes)];
}

/** A store id goes to the token endpoint as typed: a blank or garbled one is a typing mistake, not a store. */
export function parseStoreId(raw: string): string {
  const problem = textProblem(raw);
  if (problem)
    throw new UsageError(
      `--store-id ${problem}.`,
      "Pass the store id the app is installed on, e.g. --store-id st_123, or leave --store-id out to use the profile's store-id.",
    );
  return raw;
}

/** `--port`: 1 to 65535. */
export function parsePort(raw: string): number {
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 1 || port > 65535) {
    throw new ValidationError(`--port: "${raw}" is not a port.`, [{ path: '--port', message: 'expected a whole number from 1 to 65535' }]);
  }
  return port;
}

/** Refuses flags that belong to different ways of logging in. */
export function refuseConflicts(opts: {
  complete?: string;
  clientCredentials: boolean;
  withToken: boolean;
  storeId?: string;
  port?: number;
  scopes?: string[];
}): void {
  const modes = [opts.complete !== undefined && '--complete', opts.clientCredentials && '--client-credentials', opts.withToken && '--with-token'].filter(
    Boolean,
  );
  if (modes.length > 1) throw new UsageError(`${modes.join(' and ')} cannot be combined: each is a different way to log in.`);
  if (opts.storeId !== undefined && !opts.clientCredentials)
    throw new UsageError(
      '--store-id goes with --client-credentials.',
      "Add --client-credentials, or set the profile's store with `opcli config set store-id`.",
    );
  if (opts.port !== undefined && (opts.clientCredentials || opts.withToken || opts.complete !== undefined)) {
    throw new UsageError('--port applies only to the browser login.');
  }
  if (opts.withToken && opts.scopes) throw new UsageError('--scopes cannot be used with --with-token: the token already has its scopes.');
}
