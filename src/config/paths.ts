import { chmodSync, mkdirSync, statSync } from 'node:fs';

/** Creates the config folder readable by its owner only (0700), tightening an existing one. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
}
