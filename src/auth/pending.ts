import { randomBytes } from 'node:crypto';
import { linkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { assertPrivateFile, ensurePrivateDir, readPrivateFile } from '../config/private-file.js';
import { AuthError } from '../core/errors.js';

/** CHOICE (docs/spec-choices.md#login-timeouts): how long a two-step login may wait for `--complete` (the consent page's request lives 10 minutes). */
export const PENDING_TTL_MS = 10 * 60_000;

/** A login started by `auth login --no-browser --json`, waiting for `auth login --complete`. */
export const PendingLogin = z.object({
  profile: z.string(),
  state: z.string(),
  verifier: z.string(),
  redirectUri: z.string(),
  scopes: z.array(z.string()),
  createdAt: z.number(),
  expiresAt: z.number(),
  /** The origin of the base URL the login was started at: the code is exchanged there only (absent: an older opcli's). */
  origin: z.string().optional(),
});
export type PendingLogin = z.infer<typeof PendingLogin>;

/** The file of a profile's pending login, beside the credentials. */
export function pendingPath(dir: string, profile: string): string {
  return join(dir, `pending-login-${profile.replace(/[^A-Za-z0-9._-]/g, '_')}.json`);
}

/** Keeps a pending login (0600, written to a temporary file and renamed, so it is never half there). */
export function savePending(dir: string, pending: PendingLogin): void {
  ensurePrivateDir(dir);
  const path = pendingPath(dir, pending.profile);
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(pending)}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(tmp, path);
}

/**
 * Takes a profile's pending login, once (of two at once only one gets it). When `check` throws (a
 * redirect with another login's state) it is put back untouched; an expired or damaged one is dropped.
 */
export function takePending(dir: string, profile: string, now: number, check?: (pending: PendingLogin) => void): PendingLogin {
  const path = pendingPath(dir, profile);
  const noPending = () =>
    new AuthError(
      `No login is waiting to be completed for profile "${profile}".`,
      'Start one with `opcli auth login --no-browser --json`, then run `opcli auth login --complete --stdin` with the redirect URL within 10 minutes.',
    );
  if (!assertPrivateFile(path, 'pending login file')) throw noPending();
  // Claimed by renaming it to a name of this process's own: a rename happens once, whoever races.
  const claimed = `${path}.${randomBytes(6).toString('hex')}.taken`;
  try {
    renameSync(path, claimed);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw noPending();
    throw error;
  }
  let keep = false;
  try {
    const parsed = PendingLogin.safeParse(safeJson(readPrivateFile(claimed, 'pending login file') ?? ''));
    if (!parsed.success)
      throw new AuthError(`The pending login file ${path} is damaged; it was removed.`, 'Start again with `opcli auth login --no-browser --json`.');
    if (parsed.data.expiresAt <= now) {
      throw new AuthError('The pending login has expired (it lasts 10 minutes).', 'Start again with `opcli auth login --no-browser --json`.');
    }
    try {
      check?.(parsed.data);
    } catch (error) {
      keep = true;
      throw error;
    }
    return parsed.data;
  } finally {
    // Put back with link, not rename: a login started meanwhile (a newer file) is not overwritten.
    if (keep) {
      try {
        linkSync(claimed, path);
      } catch {
        // A newer pending login took the place: this one is superseded.
      }
    }
    rmSync(claimed, { force: true });
  }
}

/** A time for a person, in UTC: "2026-11-27 10:44:24 UTC". */
export function utcText(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
