/**
 * Where opcli keeps its config folder, as gh does: OPCLI_CONFIG_DIR, else $XDG_CONFIG_HOME/opcli, else
 * on Windows %APPDATA%\opcli, elsewhere ~/.config/opcli. And where it was before on Windows (config-move.ts).
 */
import { posix, win32 } from 'node:path';

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
