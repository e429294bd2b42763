import { settingsFile } from '../core/schema-checks.js';
import { ConfFileStore } from './read-file.js';
import type { ProfileSettings, SettingsFile } from './settings-schema.js';

export type { ProfileSettings } from './settings-schema.js';

// Start-up fast path (ARCHITECTURE.md): zod loads for a write or a file the quick check cannot vouch for.
const schemas = () => import('./settings-schema.js');

/** The settings file (settings.json, 0600 in a private folder, kept through conf): profiles and the current profile. */
export class SettingsStore {
  private constructor(private readonly file: ConfFileStore<SettingsFile>) {}

  /** Opens (without creating) the settings file in `dir`, ready to write; the folder is checked (or created 0700). */
  static async open(dir: string, write = true): Promise<SettingsStore> {
    return new SettingsStore(await ConfFileStore.open(dir, 'settings', async () => (await schemas()).SettingsFile, settingsFile, write));
  }

  /** Opens the settings file to read only (no writer is loaded; a write throws): how a command resolves its profile. */
  static openForReading(dir: string): Promise<SettingsStore> {
    return SettingsStore.open(dir, false);
  }

  /** The profile `profiles use` selected, if any. */
  currentProfile(): string | undefined {
    return this.file.read().currentProfile;
  }

  /** Makes `name` the profile used when no --profile or OPCLI_PROFILE is given. */
  setCurrentProfile(name: string): void {
    const file = this.file.read();
    file.currentProfile = name;
    this.file.write(file);
  }

  /** Names of every profile that has settings. */
  listProfiles(): string[] {
    return Object.keys(this.file.read().profiles).sort();
  }

  /** The settings of one profile, or undefined when it has none. */
  getProfile(name: string): ProfileSettings | undefined {
    return this.file.read().profiles[name];
  }

  /** Replaces a profile's settings (the whole file is checked by its schema as it is written). */
  setProfile(name: string, settings: ProfileSettings): void {
    const file = this.file.read();
    file.profiles[name] = settings;
    this.file.write(file);
  }

  /** Merges settings into a profile (creating it). */
  updateProfile(name: string, patch: ProfileSettings): void {
    const file = this.file.read();
    const current = file.profiles[name] ?? {};
    const next = { ...current, ...patch, provider: { ...current.provider, ...patch.provider } };
    if (Object.keys(next.provider).length === 0) delete (next as ProfileSettings).provider;
    file.profiles[name] = next;
    this.file.write(file);
  }

  /** Deletes a profile's settings; clears the current profile if it was this one. */
  removeProfile(name: string): boolean {
    const file = this.file.read();
    if (!(name in file.profiles)) return false;
    delete file.profiles[name];
    if (file.currentProfile === name) delete file.currentProfile;
    this.file.write(file);
    return true;
  }
}

/** Reads a dotted setting path from a profile. */
export function getAtPath(settings: Record<string, unknown>, path: readonly string[]): unknown {
  return path.reduce<unknown>((cur, part) => (cur != null && typeof cur === 'object' ? (cur as Record<string, unknown>)[part] : undefined), settings);
}

/** Builds a patch object that sets (or, with undefined, clears) one setting path. */
export function patchAtPath(path: readonly string[], value: unknown): Record<string, unknown> {
  return path.reduceRight<unknown>((inner, part) => ({ [part]: inner }), value) as Record<string, unknown>;
}
