/** The operating system's rules (STYLE.md 17); each function takes the platform, so a test on Linux checks the others'. */
import { shellQuote as posixQuote } from '../text/safe.js';

/** The environment as the platform reads it: on Windows a name in any case, as `process.env` there (a copy forgets); an exact name wins. */
export function platformEnv(env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): Record<string, string | undefined> {
  if (platform !== 'win32') return env;
  const nameOf = (target: Record<string, string | undefined>, name: string | symbol): string | symbol => {
    if (typeof name !== 'string' || Object.hasOwn(target, name)) return name;
    const upper = name.toUpperCase();
    return Object.keys(target).find((key) => key.toUpperCase() === upper) ?? name;
  };
  return new Proxy(env, {
    get: (target, name) => Reflect.get(target, nameOf(target, name)),
    has: (target, name) => Reflect.has(target, nameOf(target, name)),
    set: (target, name, value) => Reflect.set(target, nameOf(target, name), value),
    deleteProperty: (target, name) => Reflect.deleteProperty(target, nameOf(target, name)),
    getOwnPropertyDescriptor: (target, name) => Reflect.getOwnPropertyDescriptor(target, nameOf(target, name)),
  });
}

/** A path quoted for the shell people use there (PowerShell on Windows, a POSIX shell elsewhere: text/safe.ts) when it needs quoting. */
export function shellQuote(path: string, platform: NodeJS.Platform = process.platform): string {
  if (platform !== 'win32') return posixQuote(path);
  return /^[\w@%+=:,./\\-]+$/.test(path) ? path : `'${path.replaceAll("'", "''")}'`;
}

/** What to type to act on files and processes: PowerShell's commands on Windows, POSIX commands elsewhere. */
export interface ShellAdvice {
  /** Removes a folder and what it holds (a lock). */
  removeFolder(path: string): string;
  /** Creates a folder and its parents. */
  makeFolder(path: string): string;
  /** Creates a folder (and its parents) only you can use. */
  makePrivateFolder(path: string): string;
  /** Shows who owns a file or folder. */
  showOwner(path: string): string;
  /** Moves a file aside. */
  moveAside(path: string): string;
  /** Shows whether a process runs, and which program it is. */
  showProcess(pid: number): string;
  /** Shows where a link leads. */
  showLink(path: string): string;
  /** Removes an environment variable from the shell's session. */
  unsetEnv(name: string): string;
  /** Creates a folder a team shares: its members may write it, nobody else. */
  makeTeamFolder(path: string): string;
}

/** The commands of `platform`'s usual shell, each a complete line a person can paste. */
export function shellAdvice(platform: NodeJS.Platform = process.platform): ShellAdvice {
  const q = (path: string) => shellQuote(path, platform);
  if (platform === 'win32') {
    return {
      removeFolder: (path) => `Remove-Item -Recurse -Force ${q(path)}`,
      makeFolder: (path) => `New-Item -ItemType Directory -Force ${q(path)}`,
      // A folder in your profile (%APPDATA%, %USERPROFILE%) inherits an access list that admits you alone.
      makePrivateFolder: (path) => `New-Item -ItemType Directory -Force ${q(path)}`,
      showOwner: (path) => `Get-Acl ${q(path)} | Format-List Owner,AccessToString`,
      moveAside: (path) => `Move-Item ${q(path)} ${q(`${path}.bak`)}`,
      showProcess: (pid) => `Get-Process -Id ${pid}`,
      showLink: (path) => `Get-Item ${q(path)} | Format-List FullName,LinkType,Target`,
      unsetEnv: (name) => `Remove-Item Env:${name}`,
      makeTeamFolder: (path) =>
        `New-Item -ItemType Directory ${q(path)}; icacls ${q(path)} /inheritance:r /grant:r "<team>:(OI)(CI)M" "\${env:USERNAME}:(OI)(CI)F"`,
    };
  }
  return {
    removeFolder: (path) => `rm -r ${q(path)}`,
    makeFolder: (path) => `mkdir -p ${q(path)}`,
    makePrivateFolder: (path) => `mkdir -p -m 700 ${q(path)}`,
    showOwner: (path) => `ls -ld ${q(path)}`,
    moveAside: (path) => `mv ${q(path)} ${q(`${path}.bak`)}`,
    showProcess: (pid) => `ps -p ${pid} -o pid,lstart,command`,
    showLink: (path) => `ls -l ${q(path)}`,
    unsetEnv: (name) => `unset ${name}`,
    makeTeamFolder: (path) => `mkdir -m 2770 ${q(path)} && chgrp <team> ${q(path)}`,
  };
}
