/**
 * What makes a line of a record (the claims record, the gift card ledger) survive a power cut or an
 * OS crash before the request it announces leaves: the file's data synced (fdatasync), and, the
 * first time the file is written, its name in its folder (fsync of the folder: fsync(2) on Linux
 * says a file's own sync does not promise the entry that names it). Both run before the request
 * that can move money, so a rerun after the crash finds the attempt and does not pay again.
 */
import { closeSync, constants, fdatasyncSync, fsyncSync, openSync } from 'node:fs';

/**
 * Makes what was written to `fd` durable. `newIn`: the folder of a file this write created (it was
 * empty before), whose entry is synced too.
 */
export function syncWritten(fd: number, newIn?: string): void {
  fdatasyncSync(fd);
  if (newIn !== undefined) syncFolder(newIn);
}

/**
 * Syncs a folder's entries (a file just created in it). As SQLite does (os_unix.c, unixSync with
 * DIRSYNC), a folder that cannot be opened or synced is passed over: Windows opens no folder as a
 * file (NTFS journals the name itself), and some file systems refuse fsync on a folder.
 */
export function syncFolder(dir: string): void {
  if (process.platform === 'win32') return;
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0));
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // EINVAL on a file system that cannot sync a folder: nothing more can be done for its entry.
  } finally {
    closeSync(fd);
  }
}
