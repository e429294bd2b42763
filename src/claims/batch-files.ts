/**
 * The files a batch keeps beside its input (the journal, --out), often in a folder others can write
 * (/tmp): never followed through a link (O_NOFOLLOW), created O_EXCL and 0600, else a regular file
 * of yours others cannot write; checked on the opened file (src/config/private-file.ts), so one
 * swapped in after the check is not the one used. Anything else: exit 2, nothing sent.
 */
import { constants, lstatSync, readlinkSync, type Stats } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { checkFileStats, UnsafePathError } from '../config/private-file.js';
import { ExitCode, OpcliError } from '../core/errors.js';
import { shellAdvice } from '../core/platform.js';

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

/** Which batch file: its name in messages and the flag that moves it. */
export interface BatchFileRole {
  /** "journal", "results file". */
  what: string;
  /** "--journal", "--out". */
  flag: string;
}

/** The journal, and the results file of --out, as messages name them. */
export const JOURNAL_ROLE: BatchFileRole = { what: 'journal', flag: '--journal' };
export const RESULTS_ROLE: BatchFileRole = { what: 'results file', flag: '--out' };

function elsewhere(role: BatchFileRole, sentence = false): string {
  return `${sentence ? 'Or' : 'or'} pass ${role.flag} with a path in a folder only you can write.`;
}

function linkError(path: string, role: BatchFileRole): UnsafePathError {
  let to = '';
  try {
    to = ` (to ${readlinkSync(path)})`;
  } catch {
    // gone meanwhile
  }
  return new UnsafePathError(
    path,
    `The ${role.what} ${path} is a symbolic link${to}: opcli does not follow links for batch files, since anyone who can write in that folder could point one at a file of yours. Nothing was sent.`,
    `Check who made it (\`${shellAdvice().showLink(path)}\`) and remove it, ${elsewhere(role)}`,
  );
}

/** Refuses a file that is not a regular file of yours others cannot write, with the batch's way on (the config folder's hints name OPCLI_CONFIG_DIR). */
function checkStats(stats: Stats, path: string, role: BatchFileRole): void {
  try {
    checkFileStats(stats, path, role.what);
  } catch (error) {
    if (!(error instanceof UnsafePathError)) throw error;
    const message = error.message.replace(/: refused\.$/, ': refused; nothing was sent.');
    throw new UnsafePathError(error.path, message, `${error.hint ?? ''} ${elsewhere(role, true)}`.trim());
  }
}

/** Checks a batch file's path before anything is read or sent: absent is fine; a link, folder or unsafe file is refused (exit 2). */
export function checkBatchPath(path: string, role: BatchFileRole): void {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new OpcliError(`${role.flag} ${path}: ${(error as Error).message}.`, { exitCode: ExitCode.usage, hint: `Check the path, ${elsewhere(role)}` });
  }
  if (st.isSymbolicLink()) throw linkError(path, role);
  checkStats(st, path, role);
}

/** An opened batch file. */
interface OpenedBatchFile {
  handle: FileHandle;
  stats: Stats;
}

/** Opens the results file (`truncate`: created 0600, or emptied once checked) or the journal (`read`: absent gives undefined). */
export async function openBatchFile(path: string, role: BatchFileRole, mode: 'truncate'): Promise<OpenedBatchFile>;
export async function openBatchFile(path: string, role: BatchFileRole, mode: 'read'): Promise<OpenedBatchFile | undefined>;
export async function openBatchFile(path: string, role: BatchFileRole, mode: 'truncate' | 'read'): Promise<OpenedBatchFile | undefined> {
  const access = mode === 'read' ? constants.O_RDONLY : constants.O_WRONLY;
  for (let attempt = 0; ; attempt++) {
    if (mode !== 'read') {
      try {
        const handle = await open(path, access | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o600);
        return { handle, stats: await handle.stat() };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EEXIST') throw openError(path, role, error);
      }
    }
    let handle: FileHandle;
    try {
      // O_NONBLOCK: a planted FIFO must not hang the open; it is then refused as not a regular file.
      handle = await open(path, access | NOFOLLOW | NONBLOCK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        if (mode === 'read') return undefined;
        // Removed between the two opens: create it again, once.
        if (attempt === 0) continue;
      }
      throw openError(path, role, error);
    }
    try {
      const stats = await handle.stat();
      checkStats(stats, path, role);
      if (mode === 'truncate') await handle.truncate(0);
      // Both hold customers' personal data: readable by you alone, like a new one.
      if (mode !== 'read' && (stats.mode & 0o077) !== 0 && typeof process.getuid === 'function') await handle.chmod(0o600);
      return { handle, stats };
    } catch (error) {
      await handle.close().catch(() => {});
      throw error;
    }
  }
}

function openError(path: string, role: BatchFileRole, error: unknown): OpcliError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP' || code === 'EMLINK') return linkError(path, role);
  return new OpcliError(`Cannot open the ${role.what} ${path}: ${(error as Error).message}. Nothing was sent.`, {
    exitCode: ExitCode.usage,
    hint: `Check the folder's permissions, ${elsewhere(role)}`,
    cause: error,
  });
}
