/**
 * Where opcli keeps its config folder (settings, credentials, the record of claims and the ledger)
 * on each platform, as gh does: OPCLI_CONFIG_DIR, else $XDG_CONFIG_HOME/opcli, else on Windows
 * %APPDATA%\opcli (gh: %AppData%\GitHub CLI), elsewhere ~/.config/opcli; in the platform's own
 * separators. And the one-time move, on Windows, from where opcli kept it before
 * (%USERPROFILE%\.config\opcli).
 *
 * CHOICE (docs/spec-choices.md#config-home): the move is one rename of the whole folder, which the
 * file system does at once or not at all (a crash leaves one folder or the other, never half), and
 * which a second opcli starting at the same moment cannot repeat (the old folder is gone: it finds
 * the new one). When the rename cannot happen (a file in the old folder open in another program, the
 * two on different drives), this run keeps the old folder and says so, and the next run tries again.
 * When both hold files, the new one is used; the old one is left as it is, named in a notice, and its
 * records stay places the record has lived (read, never written: src/config/record-dir.ts). Each
 * record's witness (src/core/record-witness.ts) names its file by path: it follows the folder, from a
 * mark inside it that the rename carries along, so a crash after the rename is finished by the next run.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, posix, win32 } from 'node:path';
import { moveWitnesses, rememberPlace } from '../core/record-witness.js';
import { readCheckedFile } from './private-file.js';

/** The user's home folder, as the environment names it. */
const homeOf = (env: Record<string, string | undefined>) => env.HOME || env.USERPROFILE || '.';

/** The config folder of a run, in the platform's separators (nothing is created or moved here). */
export function configDirOf(env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): string {
  const path = platform === 'win32' ? win32 : posix;
  if (env.OPCLI_CONFIG_DIR) return env.OPCLI_CONFIG_DIR;
  // A relative XDG_CONFIG_HOME is ignored, as the XDG Base Directory spec says (it would put the
  // secrets in whatever folder the command runs from).
  if (env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME)) return path.join(env.XDG_CONFIG_HOME, 'opcli');
  if (platform === 'win32') {
    const appData = env.APPDATA && win32.isAbsolute(env.APPDATA) ? env.APPDATA : env.USERPROFILE && win32.join(env.USERPROFILE, 'AppData', 'Roaming');
    if (appData) return win32.join(appData, 'opcli');
  }
  return path.join(homeOf(env), '.config', 'opcli');
}

/** Where opcli kept its config folder on Windows before it followed %APPDATA% (undefined: nothing to move). */
export function earlierConfigDirOf(env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): string | undefined {
  if (platform !== 'win32' || env.OPCLI_CONFIG_DIR || (env.XDG_CONFIG_HOME && win32.isAbsolute(env.XDG_CONFIG_HOME))) return undefined;
  const earlier = win32.join(homeOf(env), '.config', 'opcli');
  return earlier.toLowerCase() === configDirOf(env, platform).toLowerCase() ? undefined : earlier;
}

/** The mark a move leaves inside the folder until every witness has followed it: the folder it came from. */
const MOVING = 'moving-from.json';
/** The records a config folder may hold (src/claims/record-format.ts, src/giftcard/ledger.ts). */
const RECORD = /^(claims-record-.+|giftcard-ledger)\.jsonl$/;

const namesIn = (dir: string): string[] | undefined => {
  try {
    return readdirSync(dir);
  } catch {
    return undefined;
  }
};

/**
 * The config folder of a run, after the one-time move from `earlier` to `dir` when it is due (see
 * the header). `notice` gets one line when the folder moved, could not move, or is in both places.
 */
export function settleConfigDir(dir: string, earlier: string | undefined, notice: (line: string) => void): string {
  if (existsSync(join(dir, MOVING))) finishMove(dir);
  const old = earlier === undefined ? undefined : namesIn(earlier);
  if (earlier === undefined || old === undefined) return dir;
  if (namesIn(dir)?.length) {
    if (old.length === 0) return dir;
    for (const name of old) if (RECORD.test(name)) rememberPlace(dir, join(earlier, name));
    notice(
      `Note: opcli keeps its config in ${dir}; ${earlier}, where it kept it before, still holds files. Its records are still read (so nothing is filed or paid twice), its settings and credentials are not: move what you need, then remove it.`,
    );
    return dir;
  }
  try {
    writeFileSync(join(earlier, MOVING), `${JSON.stringify({ from: earlier })}\n`, { mode: 0o600 });
    mkdirSync(dirname(dir), { recursive: true });
    // An empty folder in the way (made by hand, or by a run that stopped) is replaced.
    if (existsSync(dir)) rmdirSync(dir);
    renameSync(earlier, dir);
  } catch (error) {
    // Another opcli moved it a moment ago.
    if (!existsSync(earlier) && existsSync(dir)) return settleConfigDir(dir, undefined, notice);
    try {
      unlinkSync(join(earlier, MOVING));
    } catch {}
    notice(
      `Note: opcli could not move its config folder from ${earlier} to ${dir} (${(error as Error).message}); this run uses ${earlier} and the next one tries again. Close the programs using files in it, or move it yourself.`,
    );
    return earlier;
  }
  finishMove(dir);
  notice(`Moved opcli's config folder from ${earlier} to ${dir}, its place on Windows.`);
  return dir;
}

/** Moves each record's witness to the record's new path, then removes the mark; idempotent, so a crash is finished by the next run. */
function finishMove(dir: string): void {
  try {
    const from = (JSON.parse(readCheckedFile(join(dir, MOVING), 'config move mark', { maxBytes: 64 * 1024 }) ?? '{}') as { from?: unknown }).from;
    if (typeof from === 'string' && isAbsolute(from)) moveWitnesses(dir, from);
    unlinkSync(join(dir, MOVING));
  } catch {
    // Tried again by the next run: the mark stays until every witness has moved.
  }
}
