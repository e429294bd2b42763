/**
 * A profile being written by a sandbox that is still starting: the quick start pasted as one block
 * runs `opcli sandbox --write-profile default &` and at once `opcli auth login`. The sandbox leaves a
 * marker (`sandbox-starting.NAME.json`, its pid) until the profile is written; a command reading
 * profile NAME waits for a live one's marker, up to WAIT_LIMIT_MS.
 */
import { closeSync, constants, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { OpcliError } from '../core/errors.js';
import { ensurePrivateDir, openPrivateFile, readCheckedFile } from './private-file.js';

/** How long a command waits for a starting sandbox to write its profile. */
export const WAIT_LIMIT_MS = 20_000;
/** A marker older than this is left from a sandbox that did not finish (its pid may be another process now). */
const STALE_MS = 120_000;
const POLL_MS = 50;

const markerPath = (dir: string, profile: string) => join(dir, `sandbox-starting.${profile}.json`);

/** Marks profile `profile` of `dir` as being written by this process; the returned function removes the mark. */
export function markSandboxStarting(dir: string, profile: string, now: number): () => void {
  ensurePrivateDir(dir);
  const path = markerPath(dir, profile);
  const fd = openPrivateFile(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 'sandbox marker') as number;
  try {
    writeSync(fd, `${JSON.stringify({ pid: process.pid, at: now })}\n`);
  } finally {
    closeSync(fd);
  }
  return () => rmSync(path, { force: true });
}

/** The pid of the live sandbox writing `profile`, or undefined (no marker, our own, a dead or stale one). */
function starter(dir: string, profile: string, now: number): number | undefined {
  const path = markerPath(dir, profile);
  try {
    // Read the one way (private-file.ts): a link, a FIFO or a big file is no marker.
    const text = readCheckedFile(path, 'sandbox marker', { maxBytes: 200 });
    if (text === undefined) return undefined;
    const { pid, at } = JSON.parse(text) as { pid?: unknown; at?: unknown };
    if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
    if (typeof at !== 'number' || now - at > STALE_MS) return undefined;
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: the process lives (as another user); anything else: no marker, not a private regular file, or no such process.
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? Number.NaN : undefined;
  }
}

/** Waits while a starting sandbox writes profile `profile`; true when it waited (read the profile again). */
export async function untilSandboxWrote(dir: string, profile: string, clock: { now(): number; sleep(ms: number): Promise<void> }): Promise<boolean> {
  const started = clock.now();
  let pid = starter(dir, profile, started);
  if (pid === undefined) return false;
  while (pid !== undefined) {
    if (clock.now() - started >= WAIT_LIMIT_MS) {
      throw new OpcliError(`Profile "${profile}" is being written by a sandbox that is still starting${Number.isNaN(pid) ? '' : ` (pid ${pid})`}.`, {
        hint: `Wait until \`opcli sandbox\` prints its URLs, then run the command again.`,
      });
    }
    await clock.sleep(POLL_MS);
    pid = starter(dir, profile, clock.now());
  }
  return true;
}
