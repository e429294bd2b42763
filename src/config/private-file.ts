/**
 * Files and folders that hold secrets (settings, credentials, the ledger, the pending login, the
 * locks). Nothing here follows a symbolic link, trusts a file or folder another user owns, or uses
 * a folder others can write into (where they could plant a link or a file); and nothing here
 * changes the mode of a folder opcli did not create.
 */
import { constants as bufferConstants } from 'node:buffer';
import { closeSync, constants, fchmodSync, fchownSync, fstatSync, mkdirSync, openSync, readSync, type Stats, statSync } from 'node:fs';
import { ExitCode, OpcliError } from '../core/errors.js';
import { shellAdvice } from '../core/platform.js';
import { describeUid } from './user-name.js';

/** A config file or folder that opcli refuses to use: exit 2, with what to check. */
export class UnsafePathError extends OpcliError {
  readonly path: string;
  constructor(path: string, message: string, hint: string) {
    super(message, { exitCode: ExitCode.usage, hint, details: { path } });
    this.path = path;
  }
}

// Windows has no O_NOFOLLOW, no O_NONBLOCK and no uid; the checks that need them are skipped there
// (a FIFO or a device is still refused there as not a regular file, after the open).
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** O_NONBLOCK: a planted FIFO must not hang the open; it is then refused as not a regular file. */
const NONBLOCK = constants.O_NONBLOCK ?? 0;
/** This process's uid; undefined on Windows, which has none. */
export const myUid = (): number | undefined => (typeof process.getuid === 'function' ? process.getuid() : undefined);

/**
 * Who may own a file opcli reads: `me` (the config files, the record), `me-or-root` (a CA bundle:
 * the system's are root's), `any` (a lock's owner record: its lock folder is checked instead).
 */
export type Owners = 'me' | 'me-or-root' | 'any';

/** The most bytes of a config file (settings.json, credentials.json): a few KiB per profile. */
export const MAX_CONFIG_BYTES = 16 * 1024 * 1024;
/** The most bytes of a record read whole (the ledger, a record being repaired): what one string can hold. */
export const MAX_RECORD_BYTES = bufferConstants.MAX_STRING_LENGTH;

function ownerProblem(st: Stats, owners: Owners = 'me'): string | undefined {
  const uid = myUid();
  // No exception for root's own config: root following a link another user planted is the worst case of all.
  if (uid === undefined || st.uid === uid || (owners === 'me-or-root' && st.uid === 0)) return undefined;
  return `is owned by another user (${describeUid(st.uid)}; you are ${describeUid(uid)})`;
}

const modeText = (st: Stats) => `0${(st.mode & 0o7777).toString(8)}`;

/** Makes sure `dir` is a safe config folder: created 0700 when missing; an existing one (never changed) yours, writable by you alone. */
export function ensurePrivateDir(dir: string): void {
  let st: Stats;
  try {
    st = statSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw unreadable(dir, 'config folder', error);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    st = statSync(dir);
  }
  if (!st.isDirectory()) {
    throw new UnsafePathError(dir, `The config folder ${dir} is not a folder.`, 'Point OPCLI_CONFIG_DIR at a folder, or move the file aside.');
  }
  if (myUid() === undefined) return;
  const owner = ownerProblem(st);
  if (owner) {
    throw new UnsafePathError(
      dir,
      `The config folder ${dir} ${owner}: opcli keeps your secrets there and will not use it.`,
      'Use a folder of your own: set OPCLI_CONFIG_DIR to one (mkdir -m 700 ~/.config/opcli), or check who owns this one.',
    );
  }
  if ((st.mode & 0o022) !== 0) {
    throw new UnsafePathError(
      dir,
      `The config folder ${dir} can be written by ${st.mode & 0o002 ? 'every user' : 'its group'} (mode ${modeText(st)}): anyone who can write there could plant a file or link that sends your token elsewhere.`,
      `Use a folder only you can write: \`chmod go-w ${dir}\` if it is yours alone, or set OPCLI_CONFIG_DIR to a private folder (mkdir -m 700 …). opcli does not change the mode of a folder it did not create.`,
    );
  }
}

/**
 * A folder shared by a team (`record-dir`): files in it may belong to any member, as long as they
 * are in the folder's group (`gid`) and no one outside that group can write them.
 */
export interface SharedFolder {
  dir: string;
  gid: number;
}

/**
 * CHOICE (docs/spec-choices.md#record-dir): checks a shared record folder: it must exist and be a
 * folder that users outside its group cannot write (world-writable is refused, sticky or not: anyone
 * could create the record or its lock first). Group-writable is what sharing means, and is allowed.
 */
export function ensureSharedDir(dir: string): SharedFolder {
  let st: Stats;
  try {
    st = statSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new UnsafePathError(
        dir,
        `The record folder ${dir} (record-dir) does not exist.`,
        `Create it for the team, e.g. \`${shellAdvice().makeTeamFolder(dir)}\`, or correct record-dir / OPCLI_RECORD_DIR.`,
      );
    }
    throw unreadable(dir, 'record folder', error);
  }
  if (!st.isDirectory()) throw new UnsafePathError(dir, `The record folder ${dir} (record-dir) is not a folder.`, 'Point record-dir at a folder.');
  if (myUid() !== undefined && (st.mode & 0o002) !== 0) {
    throw new UnsafePathError(
      dir,
      `The record folder ${dir} can be written by every user (mode ${modeText(st)}): anyone could plant a record that hides a claim or a payment.`,
      `Let only the team's group write it: \`chmod o-w ${dir}\` (and \`chgrp <team> ${dir}; chmod 2770 ${dir}\`).`,
    );
  }
  return { dir, gid: st.gid };
}

/** Checks an opened file's stats: a regular file (never a FIFO, a device or a folder) `owners` may own and others cannot write. */
export function checkFileStats(st: Stats, path: string, what: string, shared?: SharedFolder, owners: Owners = 'me'): void {
  if (!st.isFile()) {
    throw new UnsafePathError(
      path,
      `The ${what} ${path} is ${fileKind(st)}, not a regular file: refused.`,
      `Check who put it there; move it aside (\`${shellAdvice().moveAside(path)}\`) and try again.`,
    );
  }
  // Windows reports neither owners nor meaningful modes: only the link and file-type checks apply.
  if (myUid() === undefined || owners === 'any') return;
  if (shared && st.gid === shared.gid) {
    // A teammate's file in the team's folder: only the world must not be able to write it.
    if ((st.mode & 0o002) === 0) return;
    throw new UnsafePathError(
      path,
      `The ${what} ${path} can be written by every user (mode ${modeText(st)}): refused.`,
      `\`chmod o-w ${path}\` (the team's group may write it).`,
    );
  }
  const owner = ownerProblem(st, owners);
  if (owner) throw new UnsafePathError(path, `The ${what} ${path} ${owner}: refused.`, 'Check who created it; move it aside if it is not yours.');
  if ((st.mode & 0o022) !== 0) {
    throw new UnsafePathError(
      path,
      `The ${what} ${path} can be written by other users (mode ${modeText(st)}): refused.`,
      owners === 'me-or-root'
        ? `If it is the file you mean, \`chmod go-w ${path}\`; otherwise check who changed it.`
        : `If it is yours, \`chmod 600 ${path}\`; otherwise move it aside.`,
    );
  }
}

/** What a file that is not a regular file is, for a person. */
function fileKind(st: Stats): string {
  if (st.isFIFO()) return 'a named pipe';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isDirectory()) return 'a folder';
  if (st.isSocket()) return 'a socket';
  return 'something else';
}

function unreadable(path: string, what: string, error: unknown): OpcliError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP' || code === 'EMLINK') {
    return new UnsafePathError(
      path,
      `The ${what} ${path} is a symbolic link: opcli does not follow links for its config files.`,
      `Replace the link with the file itself, or point OPCLI_CONFIG_DIR at the folder that holds it. Check who created the link first.`,
    );
  }
  return new OpcliError(`The ${what} ${path} cannot be opened: ${(error as Error).message}.`, {
    exitCode: ExitCode.usage,
    hint: 'Check the permissions of the config folder (`opcli config path`).',
    cause: error,
  });
}

/**
 * Opens a file without following a link (O_NOFOLLOW) and checks the opened file (checkFileStats).
 * Undefined when the file does not exist and O_CREAT was not asked for.
 */
export function openPrivateFile(path: string, flags: number, what: string, mode = 0o600, shared?: SharedFolder, owners: Owners = 'me'): number | undefined {
  let fd: number;
  try {
    fd = openSync(path, flags | NOFOLLOW, shared ? 0o660 : mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !(flags & constants.O_CREAT)) return undefined;
    throw unreadable(path, what, error);
  }
  try {
    if (shared && flags & constants.O_CREAT) shareNewFile(fd, shared);
    // On the open descriptor (fstat), so there is no race with the path.
    checkFileStats(fstatSync(fd), path, what, shared, owners);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

/** A file of yours in a shared folder: in the folder's group and writable by it (0660), whatever the umask. */
function shareNewFile(fd: number, shared: SharedFolder): void {
  const st = fstatSync(fd);
  if (myUid() === undefined || st.uid !== myUid()) return;
  if (st.gid !== shared.gid) fchownSync(fd, -1, shared.gid);
  if ((st.mode & 0o777) !== 0o660) fchmodSync(fd, 0o660);
}

/** How a file opcli reads whole must be, besides a regular file reached without a link. */
export interface ReadRules {
  /** Who may own it (default `me`). */
  owners?: Owners;
  /** A team's shared folder the file is in. */
  shared?: SharedFolder;
  /** The most bytes it may hold: a bigger file is refused, never read. */
  maxBytes: number;
}

/** A size in words: "4 MiB", "2,147,483,648 bytes". */
const sizeText = (n: number) => (n >= 1024 * 1024 && n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${n.toLocaleString('en-US')} bytes`);

/** Reads the whole of an open regular file, refusing one over `max` bytes (even one that grows while read). */
function readBounded(fd: number, path: string, what: string, max: number): Buffer {
  const tooBig = (size: string) =>
    new UnsafePathError(
      path,
      `The ${what} ${path} is ${size}, more than a ${what} can be (${sizeText(max)}): refused, not read.`,
      `Check that ${path} is the file you mean.`,
    );
  const size = fstatSync(fd).size;
  if (size > max) throw tooBig(sizeText(size));
  const buffer = Buffer.allocUnsafe(Math.min(max + 1, Math.max(size + 1, 4096)));
  let got = 0;
  for (let n = -1; n !== 0 && got < buffer.length; got += n) n = readSync(fd, buffer, got, buffer.length - got, null);
  if (got > max) throw tooBig(`over ${sizeText(max)}`);
  return buffer.subarray(0, got);
}

/**
 * The one way opcli reads a file whole: opened without following a link or blocking (a FIFO), checked
 * on the descriptor per `rules`, read up to `rules.maxBytes` (more is refused). Undefined when absent.
 */
export function readCheckedFile(path: string, what: string, rules: ReadRules): string | undefined {
  const fd = openPrivateFile(path, constants.O_RDONLY | NONBLOCK, what, 0o600, rules.shared, rules.owners);
  if (fd === undefined) return undefined;
  try {
    return readBounded(fd, path, what, rules.maxBytes).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Reads a private file as UTF-8 (at most `maxBytes`), or undefined when it does not exist. */
export function readPrivateFile(path: string, what: string, shared?: SharedFolder, maxBytes = MAX_RECORD_BYTES): string | undefined {
  return readCheckedFile(path, what, { shared, maxBytes });
}

/** Checks a path: absent (false), or a private regular file (true); a link, a foreign or shared file throws. */
export function assertPrivateFile(path: string, what: string): boolean {
  const fd = openPrivateFile(path, constants.O_RDONLY | NONBLOCK, what);
  if (fd === undefined) return false;
  closeSync(fd);
  return true;
}

/**
 * Makes a secrets file that group or others can read private (0600) on the open descriptor, returning
 * the warning to print; a mode that cannot be changed (a read-only file system) is refused.
 */
export function tightenSecretFile(path: string, what: string): string | undefined {
  if (myUid() === undefined) return undefined;
  const fd = openPrivateFile(path, constants.O_RDONLY | NONBLOCK, what);
  if (fd === undefined) return undefined;
  try {
    const st = fstatSync(fd);
    if ((st.mode & 0o077) === 0) return undefined;
    try {
      fchmodSync(fd, st.mode & 0o700);
    } catch (error) {
      throw new UnsafePathError(
        path,
        `The ${what} ${path} can be read by other users (mode ${modeText(st)}), and opcli cannot make it private (${(error as Error).message}).`,
        `Make it private yourself (\`chmod 600 ${path}\`), or point OPCLI_CONFIG_DIR at a private folder.`,
      );
    }
    return `Warning: the ${what} ${path} could be read by other users (mode ${modeText(st)}); opcli made it private (0600). If someone else may have read it, end the login (\`opcli auth logout\`), log in again and replace the client secret.`;
  } finally {
    closeSync(fd);
  }
}
