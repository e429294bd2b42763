/** Who runs opcli, and a uid as a person reads it: the user name from the password database, with the number. */
import { readFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';

/** "alice (uid 1001)", or "uid 1001" when no name is known (no /etc/passwd entry, Windows, a container). */
export function describeUid(uid: number): string {
  const name = userName(uid);
  return name ? `${name} (uid ${uid})` : `uid ${uid}`;
}

/** The user name of `uid` from /etc/passwd, or undefined. Names come from a system file, still made printable. */
export function userName(uid: number): string | undefined {
  let text: string;
  try {
    text = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const [name, , id] = line.split(':');
    if (name && id !== undefined && Number(id) === uid && /^[\w.@-]{1,64}$/.test(name)) return name;
  }
  return undefined;
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
