/**
 * Where the record of business actions lives (the record of claims filed and the gift card ledger):
 * the config folder, private to one user account, or the `record-dir` folder a team shares.
 * CHOICE (docs/spec-choices.md#record-dir): OPCLI_RECORD_DIR, else the profile's `record-dir`, else the config folder.
 */
import { ensurePrivateDir, ensureSharedDir, type SharedFolder } from './private-file.js';
import type { ResolvedProfile } from './profile.js';

/** The folder of the record and ledger; `shared` when it is a team's record-dir. */
export interface RecordPlace {
  dir: string;
  shared?: SharedFolder;
}

/** The record folder for a profile (none readable: the config folder), checked: a private folder, or a shared one no outsider can write. */
export function recordPlace(configDir: string, profile: Pick<ResolvedProfile, 'recordDir'> | undefined): RecordPlace {
  if (!profile?.recordDir) {
    ensurePrivateDir(configDir);
    return { dir: configDir };
  }
  return { dir: profile.recordDir, shared: ensureSharedDir(profile.recordDir) };
}

/** Checks the folder again before a write (a private one is created when missing). */
export function ensureRecordDir(place: RecordPlace): void {
  if (place.shared) ensureSharedDir(place.dir);
  else ensurePrivateDir(place.dir);
}
