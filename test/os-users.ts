/**
 * OS users and groups a test creates for its two-user and team cases, where the suite can make them
 * (root with useradd, as CI runs); elsewhere those cases are skipped with the reason printed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/** Why this run cannot create OS users (undefined: it can). */
export const osUsersWhy: string | undefined =
  typeof process.getuid !== 'function' || process.getuid() !== 0
    ? 'not running as root'
    : spawnSync('useradd', ['--help']).error
      ? 'useradd is missing'
      : undefined;

/** A user the test made. */
export interface OsUser {
  name: string;
  uid: number;
  gid: number;
}

function numericId(args: string[]): number {
  return Number(execFileSync('id', args, { encoding: 'utf8' }));
}

/** Creates a user with no home, named `<prefix>-<random>`, in `groups` besides its own. */
export function createOsUser(prefix: string, groups: string[] = []): OsUser {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  execFileSync('useradd', ['-M', ...(groups.length ? ['-G', groups.join(',')] : []), name]);
  return { name, uid: numericId(['-u', name]), gid: numericId(['-g', name]) };
}

/** Creates a group named `<prefix>-<random>`. */
export function createOsGroup(prefix: string): { name: string; gid: number } {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  execFileSync('groupadd', [name]);
  return { name, gid: Number(execFileSync('getent', ['group', name], { encoding: 'utf8' }).split(':')[2]) };
}

/** Removes a user `createOsUser` made. */
export function removeOsUser(user: OsUser | undefined): void {
  if (user) execFileSync('userdel', [user.name]);
}

/**
 * One other user for a test file (or describe block): made before its tests, removed after; the
 * getter answers undefined, and `skipped` is printed, where this run cannot make users.
 */
export function otherOsUser(prefix: string, skipped: string): () => OsUser | undefined {
  let other: OsUser | undefined;
  beforeAll(() => {
    if (osUsersWhy !== undefined) {
      console.warn(`${skipped}: ${osUsersWhy}`);
      return;
    }
    other = createOsUser(prefix);
  });
  afterAll(() => removeOsUser(other));
  return () => other;
}

/** Removes a group `createOsGroup` made. */
export function removeOsGroup(group: { name: string } | undefined): void {
  if (group) execFileSync('groupdel', [group.name]);
}

let nodeCopy: string | undefined;

/**
 * A Node executable `user` can run: this process's own, or else a copy in a folder anyone can read
 * (npm exec keeps the Node 22 and 24 of CI under root's ~/.npm, which another user cannot reach).
 */
export function nodeFor(user: OsUser): string {
  if (spawnSync(process.execPath, ['-e', '0'], { uid: user.uid, gid: user.gid }).status === 0) return process.execPath;
  if (nodeCopy === undefined) {
    const folder = mkdtempSync(join(tmpdir(), 'opcli-node-'));
    chmodSync(folder, 0o755);
    nodeCopy = join(folder, 'node');
    copyFileSync(process.execPath, nodeCopy);
    chmodSync(nodeCopy, 0o755);
    process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
  }
  return nodeCopy;
}

/** Why `user` cannot run the built binary at `bin` (a clone in a folder only root can read), or undefined. */
export function binaryUnreachable(user: OsUser, node: string, bin: string): string | undefined {
  const r = spawnSync(node, [bin, '--version'], { uid: user.uid, gid: user.gid, encoding: 'utf8' });
  return r.status === 0 ? undefined : `${user.name} cannot run ${bin}: ${(r.stderr || String(r.error)).split('\n')[0]}`;
}
