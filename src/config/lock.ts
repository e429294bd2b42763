import { closeSync, constants } from 'node:fs';
import { join } from 'node:path';
import { OpcliError } from '../errors.js';
import { openPrivateFile } from './private-file.js';

/** How long to wait for the credentials lock before giving up (retryable). */
const LOCK_WAIT_MS = 15_000;
/**
 * A lock whose mtime has not been refreshed for this long belongs to a process that is gone (the
 * holder refreshes it every STALE_MS / 2), so it is reclaimed.
 */
const STALE_MS = 5_000;

/**
 * Runs `fn` while holding the cross-process lock on `<dir>/<name>.lock`. conf has no support for
 * concurrent writers, so every read-modify-write of credentials goes through here. The lock is a
 * directory created atomically by proper-lockfile; a lock left by a killed process is reclaimed
 * once it is stale.
 */
export async function withFileLock<T>(dir: string, name: string, fn: () => Promise<T>): Promise<T> {
  const { default: lockfile } = await import('proper-lockfile');
  // The target must exist for proper-lockfile; a stable, empty file that is never rewritten (and
  // never reached through a planted link).
  const target = join(dir, `${name}.lock-target`);
  closeSync(openPrivateFile(target, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND, `${name} lock file`) as number);
  let compromised: Error | undefined;
  const options = {
    stale: STALE_MS,
    update: STALE_MS / 2,
    realpath: false,
    lockfilePath: join(dir, `${name}.lock`),
    retries: 0,
    onCompromised: (err: Error) => {
      compromised = err;
    },
  };
  // Retried against a deadline (proper-lockfile's own retries count attempts, not time).
  const deadline = Date.now() + LOCK_WAIT_MS;
  let release: () => Promise<void>;
  for (;;) {
    try {
      release = await lockfile.lock(target, options);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') {
        throw new OpcliError(`Cannot take the ${name} lock in ${dir}: ${(error as Error).message}`, {
          hint: 'Check that the config folder is writable by you (see `opcli config path`).',
          cause: error,
        });
      }
      if (Date.now() >= deadline) {
        throw new OpcliError(`Another opcli process holds the ${name} lock and did not release it in ${LOCK_WAIT_MS / 1000} s.`, {
          hint: 'Try again in a moment. If no other opcli is running, the lock is reclaimed after a few seconds.',
          cause: error,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 25 + Math.random() * 100));
    }
  }
  try {
    const result = await fn();
    if (compromised) throw new OpcliError(`The ${name} lock was lost while in use: ${compromised.message}`, { hint: 'Try again.' });
    return result;
  } finally {
    await release().catch(() => {});
  }
}
