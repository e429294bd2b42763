/**
 * How a run shows itself to a person: the progress style (`--progress`, OPCLI_PROGRESS, the
 * `progress` setting) and the accessible mode (OPCLI_ACCESSIBLE, the `accessible` setting), read
 * once before a command runs. The flag wins over the environment, the environment over the setting.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pickProfileName } from '../config/profile.js';
import { SettingsStore } from '../config/settings.js';
import type { Deps } from './deps.js';
import { UsageError } from '../core/errors.js';
import { safeLine } from '../text/safe.js';
import { PROGRESS_MODES, type ProgressMode } from '../text/progress.js';

/** A progress mode named by `source` (a flag, a variable), or a usage error listing the modes. */
export function parseProgressMode(raw: string, source: string): ProgressMode {
  const value = raw.trim().toLowerCase();
  if ((PROGRESS_MODES as readonly string[]).includes(value)) return value as ProgressMode;
  throw new UsageError(
    `${source} "${safeLine(raw)}" is not a progress mode: expected auto, plain or none.`,
    'auto redraws a line on a terminal and writes a sentence every 10 s elsewhere; plain always writes sentences; none writes nothing.',
  );
}

/** OPCLI_ACCESSIBLE: 1, true or yes turn the accessible mode on, 0, false or no off; anything else is a usage error naming it. */
export function parseAccessible(raw: string): boolean {
  const value = raw.toLowerCase();
  if (['1', 'true', 'yes'].includes(value)) return true;
  if (['0', 'false', 'no'].includes(value)) return false;
  throw new UsageError(
    `OPCLI_ACCESSIBLE "${safeLine(raw)}" is not 1 or 0.`,
    'Set OPCLI_ACCESSIBLE=1 for the accessible mode, 0 for the usual screens, or unset it.',
  );
}

/** Sets `deps.globals.progress` and `accessible` from the flag, the environment and the active profile's settings. */
export async function resolveDisplay(deps: Deps, flag: string | undefined): Promise<void> {
  const env = deps.env;
  if (flag !== undefined) deps.globals.progress = parseProgressMode(flag, '--progress');
  else if (env.OPCLI_PROGRESS) deps.globals.progress = parseProgressMode(env.OPCLI_PROGRESS, 'OPCLI_PROGRESS');
  const accessibleFromEnv = env.OPCLI_ACCESSIBLE !== undefined && env.OPCLI_ACCESSIBLE !== '';
  if (accessibleFromEnv) deps.globals.accessible = parseAccessible(env.OPCLI_ACCESSIBLE as string);
  if (deps.globals.progress !== undefined && accessibleFromEnv) return;
  const settings = await profileSettings(deps);
  if (deps.globals.progress === undefined && settings?.progress) deps.globals.progress = settings.progress;
  if (!accessibleFromEnv && settings?.accessible !== undefined) deps.globals.accessible = settings.accessible;
}

/** The active profile's display settings; none when the settings file is missing or unreadable (the command reports that itself). */
async function profileSettings(deps: Deps): Promise<{ progress?: ProgressMode; accessible?: boolean } | undefined> {
  try {
    // No settings file: nothing to read, and no config folder is created for it.
    if (!existsSync(join(deps.configDir(), 'settings.json'))) return undefined;
    const settings = await SettingsStore.openForReading(deps.configDir());
    const name = pickProfileName(deps.globals.profile, deps.env, settings.currentProfile());
    const profile = settings.getProfile(name);
    return { progress: profile?.progress, accessible: profile?.accessible };
  } catch {
    return undefined;
  }
}
