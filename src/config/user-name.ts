/** Who runs opcli, and a uid as a person reads it: the name from the system's user database (NSS, Directory Services), not /etc/passwd. */
import { execFileSync } from 'node:child_process';
import { hostname, userInfo } from 'node:os';

/** "alice (uid 1001)", or "uid 1001" when no name is known (no such user, Windows, a container). */
export function describeUid(uid: number): string {
  const name = userName(uid);
  return name ? `${name} (uid ${uid})` : `uid ${uid}`;
}

/** A user name as opcli shows it: printable, short. Names come from the system, still checked. */
const NAME = /^[\w.@-]{1,64}$/;

/** The user name of `uid`: this process's from os.userInfo(), another's from id(1) (POSIX, macOS), only when a message shows it. */
export function userName(uid: number): string | undefined {
  let name: string | undefined;
  try {
    if (typeof process.getuid === 'function' && uid === process.getuid()) name = userInfo().username;
    else name = execFileSync('/usr/bin/id', ['-un', String(uid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 2_000, env: {} }).trim();
  } catch {
    return undefined;
  }
  return name && NAME.test(name) ? name : undefined;
}

/** The OS user running opcli (who filed the claim or issued the credit). */
export function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** The machine's name, recorded with each action. */
export function hostName(): string {
  try {
    return hostname();
  } catch {
    return 'unknown';
  }
}
