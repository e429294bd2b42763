/**
 * The one-time move, on Windows, of the config folder to its place there (config-home.ts).
 *
 * CHOICE (docs/spec-choices.md#config-home): one rename of the whole folder, which happens at once or
 * not at all and cannot be repeated by a second opcli. When it cannot happen (a file open elsewhere,
 * another drive), this run keeps the old folder and the next tries again. When both hold files, the
 * new one is used and the old one's records stay places the record has lived (record-dir.ts). The
 * records' witnesses follow the folder from a mark the rename carries, so a crash is finished later.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { moveWitnesses, rememberPlace } from '../record/witness.js';
import { readCheckedFile } from './private-file.js';

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

/** The config folder of a run, after the move from `earlier` to `dir` when due; `notice` gets one line when anything happened. */
export function settleConfigDir(dir: string, earlier: string | undefined, notice: (line: string) => void): string {
  // Nothing to settle where the folder never moves (Linux, macOS, OPCLI_CONFIG_DIR): not one more system call.
  if (earlier === undefined) return dir;
  if (existsSync(join(dir, MOVING))) finishMove(dir);
  // The new place first: a move by another opcli between the two reads then shows as the old folder gone.
  const here = namesIn(dir);
  const old = namesIn(earlier);
  if (old === undefined) return dir;
  if (here?.length) {
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
    // Another opcli moved it a moment ago: finish its move (idempotent) if it has not yet.
    if (!existsSync(earlier) && existsSync(dir)) {
      finishMove(dir);
      return dir;
    }
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
