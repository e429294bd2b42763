/**
 * Where the record of claims and the gift card ledger live: CHOICE (docs/spec-choices.md#record-dir):
 * OPCLI_RECORD_DIR, else the profile's `record-dir` a team shares, else the private config folder.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { shellAdvice } from '../core/platform.js';
import { acceptWitness, witnessedPaths } from '../record/witness.js';
import { ensurePrivateDir, ensureSharedDir, readPrivateFile, type SharedFolder, UnsafePathError } from './private-file.js';
import type { ResolvedProfile } from './profile.js';
import { describeUid } from './user-name.js';

/** The folder of the record and ledger; `shared` when it is a team's record-dir. */
export interface RecordPlace {
  dir: string;
  shared?: SharedFolder;
  /** The config folder of the person running opcli (where the record's witness is kept: src/record/witness.ts). */
  configDir?: string;
  /** A place the record lived before: read, never created or written. */
  earlier?: boolean;
}

/**
 * The record folder for a profile, checked: a private folder, or a shared one no outsider can write.
 * A record in PostgreSQL (record-url) has none: the config folder is where it lived before, read only.
 */
export function recordPlace(
  configDir: string,
  profile: (Pick<ResolvedProfile, 'recordDir'> & Partial<Pick<ResolvedProfile, 'record'>>) | undefined,
): RecordPlace {
  if (profile?.record) return { dir: configDir, configDir, earlier: true };
  if (!profile?.recordDir) {
    ensurePrivateDir(configDir);
    return { dir: configDir, configDir };
  }
  const shared = ensureSharedDir(profile.recordDir);
  checkTeamFolder(profile.recordDir);
  return { dir: profile.recordDir, shared, configDir };
}

/**
 * CHOICE (docs/spec-choices.md#record-dir): a record-dir must be owned by you, or by root with one of
 * your groups: in another user's folder people outside your team could forge or hide a payment.
 */
function checkTeamFolder(dir: string): void {
  if (typeof process.getuid !== 'function' || typeof process.getgroups !== 'function') return;
  const st = statSync(dir);
  const me = process.getuid();
  const groups = new Set([...process.getgroups(), ...(typeof process.getegid === 'function' ? [process.getegid()] : [])]);
  const ownerOk = st.uid === me || st.uid === 0;
  const groupOk = st.uid === me || groups.has(st.gid);
  if (ownerOk && groupOk) return;
  const why = !ownerOk
    ? `is owned by another user (${describeUid(st.uid)}; you are ${describeUid(me)})`
    : `belongs to group ${st.gid}, which is not one of your groups`;
  throw new UnsafePathError(
    dir,
    `The record folder ${dir} (record-dir) ${why}: opcli keeps its record of claims and payments only in a folder owned by you or root and shared through one of your groups.`,
    `Ask an administrator to create the team's folder (\`${shellAdvice().makeTeamFolder(dir)}\`, as root or as you) and to add you to its group, or correct record-dir / OPCLI_RECORD_DIR.`,
  );
}

/**
 * CHOICE (docs/spec-choices.md#record-places): every other place the record has lived (the config
 * folder, every folder it keeps a witness of), read too so that moving it forgets no claim or payment.
 * A folder that is gone is still listed: its witness stops money until the record is back or repaired.
 */
export function earlierPlaces(place: RecordPlace): RecordPlace[] {
  const configDir = place.configDir;
  if (!configDir) return [];
  const here = resolve(place.dir);
  const dirs = new Set([resolve(configDir), ...witnessedPaths(configDir).map((p) => dirname(p))]);
  dirs.delete(here);
  // Two names of one folder (letter case on Windows and macOS, a link) are one place: it is read once.
  const seen = new Set([folderIdentity(here)]);
  for (const dir of dirs) {
    const id = folderIdentity(dir);
    if (id === undefined) continue;
    if (seen.has(id)) dirs.delete(dir);
    seen.add(id);
  }
  return [...dirs].map((dir) => {
    if (dir === resolve(configDir) || !existsSync(dir)) return { dir, configDir, earlier: true };
    const shared = ensureSharedDir(dir);
    checkTeamFolder(dir);
    return { dir, shared, configDir, earlier: true };
  });
}

/** A folder's device and inode, which every name of it shares; undefined when it is gone. */
function folderIdentity(dir: string): string | undefined {
  try {
    const st = statSync(dir, { bigint: true });
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}

/** Checks the folder again before a write (a private one is created when missing); a place the record lived before is only read. */
export function ensureRecordDir(place: RecordPlace): void {
  if (place.earlier) return;
  if (place.shared) ensureSharedDir(place.dir);
  else ensurePrivateDir(place.dir);
}

/** Accepts the record file `name` as it is now, here and everywhere it lived before (a repair, once the person has checked). */
export function acceptAsItIs(place: RecordPlace, name: string, what: string): void {
  const configDir = place.configDir;
  if (!configDir) return;
  for (const p of [place, ...earlierPlaces(place)]) {
    const path = join(p.dir, name);
    const text = readPrivateFile(path, what, p.shared);
    acceptWitness(configDir, path, text === undefined ? undefined : Buffer.from(text));
  }
}
