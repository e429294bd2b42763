import { randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { OpcliError } from '../core/errors.js';
import { shellAdvice } from '../core/platform.js';
import { realTimers, sleepOn, type Timers } from '../core/timers.js';
import { answering, answers } from './lock-liveness.js';
import { myUid, readCheckedFile, UnsafePathError } from './private-file.js';
import { hasExited, processStart, processStartedAt } from './process-start.js';
import { describeUid } from './user-name.js';

/** How long to wait for a lock before giving up (retryable). */
const LOCK_WAIT_MS = 15_000;
/** The holder touches its lock this often, so a lock from another machine can be judged by age. */
const REFRESH_MS = 2_500;
/** A lock whose owner cannot be checked (another machine's, or no owner record) is abandoned once untouched this long. */
const STALE_MS = 10_000;

interface Owner {
  pid: number;
  host: string;
  /** Unique per acquisition: tells this holder's lock from any later one at the same path. */
  token: string;
  /** When it was taken (ISO 8601). */
  at?: string;
  /** When the owner process started, where the platform says (process-start.ts): tells it from a process that reuses its pid. */
  start?: string;
  /** Elsewhere: the token the owner process answers on while it runs (lock-liveness.ts). */
  live?: string;
}

interface Seen {
  owner?: Owner;
  mtimeMs: number;
  /** The lock folder's owner. */
  uid: number;
  /** When the owner record was written (its file's mtime; the folder's is touched while held). */
  writtenMs?: number;
}

/** Who holds a lock, for a person: "user alice (uid 1001), pid 4242 on host build-1, since 2026-…Z". */
function describeHolder(seen: Seen): string {
  const who = myUid() === undefined ? 'a process' : `user ${describeUid(seen.uid)}`;
  const o = seen.owner;
  const when = o?.at ? `since ${o.at}` : `last touched ${new Date(seen.mtimeMs).toISOString()}`;
  return o ? `${who}, pid ${o.pid} on host ${o.host}, ${when}` : `${who} (no owner record could be read), ${when}`;
}

/** Who holds the lock at `path` and the way out when that run is gone, in the platform's commands. */
function holderAndWayOut(seen: Seen, path: string, platform: NodeJS.Platform): string {
  const advice = shellAdvice(platform);
  const o = seen.owner;
  const run = o
    ? `no opcli runs as pid ${o.pid} on host ${o.host}${o.host === hostname() ? ` (check: \`${advice.showProcess(o.pid)}\`)` : ''}`
    : 'no opcli run holds it';
  return `${describeHolder(seen)}; if ${run}, remove the lock: \`${advice.removeFolder(path)}\``;
}

/** An owner record is a few hundred bytes; anything bigger is not one. */
const MAX_OWNER_BYTES = 4096;

const OWNER_FILE = 'owner';
const CONTENDED = new Set(['EEXIST', 'ENOTEMPTY', 'EPERM', 'EISDIR']);

const newToken = () => randomBytes(9).toString('hex');

/**
 * Creates the lock folder `path` with its owner record inside, built under a private name and renamed
 * into place: a lock never exists without its owner, and a rename onto a held (non-empty) lock fails.
 */
function tryCreate(path: string, owner: Owner, shared = false): boolean {
  const staging = `${path}.${owner.token}.new`;
  mkdirSync(staging, { mode: 0o700 });
  try {
    writeFileSync(join(staging, OWNER_FILE), JSON.stringify(owner), { mode: 0o600, flag: 'wx' });
    // In a shared record folder a teammate must read the owner (to wait, or to reclaim a dead run's lock) and remove it.
    if (shared) {
      chmodSync(join(staging, OWNER_FILE), 0o660);
      chmodSync(staging, 0o770);
    }
    renameSync(staging, path);
    return true;
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    if (CONTENDED.has((error as NodeJS.ErrnoException).code ?? '')) return false;
    throw error;
  }
}

/** The lock at `path` as it is now, or undefined when there is none. */
function inspect(path: string): Seen | undefined {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (st === undefined) return undefined;
  if (st.isSymbolicLink()) {
    throw new UnsafePathError(
      path,
      `The lock ${path} is a symbolic link: opcli does not follow links for its config files.`,
      'Remove the link (check who created it first); opcli creates the lock itself.',
    );
  }
  const { mtimeMs, uid } = st;
  const owner = readOwner(path);
  if (!owner) return { mtimeMs, uid };
  return { owner, mtimeMs, uid, writtenMs: lstatSync(join(path, OWNER_FILE), { throwIfNoEntry: false })?.mtimeMs };
}

/**
 * The owner record of the lock at `path`, read the one safe way (private-file.ts); one that is not a
 * small regular file is refused with the way out. Undefined when there is none to read: judged by age.
 */
function readOwner(path: string): Owner | undefined {
  let text: string | undefined;
  try {
    text = readCheckedFile(join(path, OWNER_FILE), 'owner record of a lock', { owners: 'any', maxBytes: MAX_OWNER_BYTES });
  } catch (error) {
    if (!(error instanceof UnsafePathError)) return undefined;
    const problem = error.message.replace(/^The /, 'the ').replace(/: refused(, not read)?\.$/, '.');
    const advice = shellAdvice();
    throw new UnsafePathError(
      path,
      `The lock ${path} cannot be used: ${problem}`,
      `If no opcli run holds it, remove the lock: \`${advice.removeFolder(path)}\` (check who made it first: \`${advice.showOwner(path)}\`).`,
    );
  }
  try {
    const { pid, host, token, at, start, live } = JSON.parse(text ?? '') as Record<keyof Owner, unknown>;
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
    if (Number.isInteger(pid) && typeof host === 'string' && typeof token === 'string')
      return { pid: pid as number, host, token, at: str(at), start: str(start), live: str(live) };
  } catch {}
  return undefined;
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  return !hasExited(pid);
}

/**
 * Whether the owner of a lock on this machine may still run: its pid answers and it is the process
 * that wrote the record (same recorded start; else it answers on its token; else, a record with
 * neither, it started before the record was written). pid 1 counts only by a matching start (a
 * container's only process); pid 0 and below name process groups.
 */
async function ownerMayRun(seen: Seen & { owner: Owner }): Promise<boolean> {
  const { pid, start, live } = seen.owner;
  if (pid <= 0 || !processIsAlive(pid)) return false;
  const now = processStart(pid);
  if (start !== undefined && now !== undefined) return start === now;
  if (live !== undefined) return answers(live);
  if (pid === 1) return false;
  const startedAt = processStartedAt(pid);
  const written = seen.writtenMs ?? seen.mtimeMs;
  // A second of slack: the record's time and the kernel's come from different clocks.
  return startedAt === undefined || startedAt <= written + 1000;
}

/** A lock is abandoned when its owner on this machine is gone; otherwise when it is old. */
async function isAbandoned(seen: Seen, now: number): Promise<boolean> {
  if (seen.owner && seen.owner.host === hostname()) return !(await ownerMayRun(seen as Seen & { owner: Owner }));
  return now - seen.mtimeMs > STALE_MS;
}

const sameLock = (a: Seen, b: Seen) => (a.owner && b.owner ? a.owner.token === b.owner.token : !a.owner && !b.owner && a.mtimeMs === b.mtimeMs);

/** Removes a folder by first renaming it to a private name, so it disappears in one step. */
function removeAtomically(path: string, token: string): void {
  const gone = `${path}.${token}.gone`;
  try {
    renameSync(path, gone);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  rmSync(gone, { recursive: true, force: true });
}

/**
 * Removes the abandoned lock `seen` at `path`. Two waiters that both saw it abandoned must not
 * both remove "it": the second would remove the lock the first has just taken. So removal happens
 * only under a second lock (the reclaim gate) and only after checking, under the gate, that the lock
 * at `path` is still the very one judged abandoned. Nobody else can replace that lock while the gate
 * is held (only its dead owner or a gate holder could remove it), so the check stays true.
 */
async function reclaim(path: string, seen: Seen, me: Owner, now: () => number, shared = false): Promise<void> {
  const gate = `${path}.reclaim`;
  const gateOwner = { ...me, token: newToken() };
  if (!tryCreate(gate, gateOwner, shared)) {
    // A gate left by a process killed in the few milliseconds it holds one.
    const gateSeen = inspect(gate);
    if (gateSeen && (await isAbandoned(gateSeen, now()))) removeAtomically(gate, newToken());
    return;
  }
  try {
    const current = inspect(path);
    if (current && sameLock(current, seen) && (await isAbandoned(current, now()))) removeAtomically(path, gateOwner.token);
  } finally {
    removeAtomically(gate, gateOwner.token);
  }
}

/** A held lock: `lost()` says whether another process took it meanwhile; `release()` frees it. */
export interface HeldLock {
  lost(): boolean;
  release(): void;
}

export interface AcquireOptions {
  /** How long to wait for a live holder before giving up (default LOCK_WAIT_MS). */
  waitMs?: number;
  /** The error thrown when a live holder keeps the lock past `waitMs` (default: a generic one); `holder` says who it is. */
  busy?: (holder: string) => OpcliError;
  /** The folder is a team's shared record folder (record-dir): a teammate's lock is waited for like one's own. */
  shared?: boolean;
  /** The platform whose rules the lock follows (default: the one running); a test on Linux passes another. */
  platform?: NodeJS.Platform;
  /** The timers the wait goes by (default: real ones). The touch (REFRESH_MS) is for other machines, so it stays on real time. */
  timers?: Timers;
}

/** Waits until the lock is taken for `me`: a free one created, an abandoned one reclaimed, a live one waited for until the deadline. */
async function take(dir: string, name: string, me: Owner, options: AcquireOptions & { platform: NodeJS.Platform; timers: Timers }): Promise<void> {
  const path = join(dir, `${name}.lock`);
  const waitMs = options.waitMs ?? LOCK_WAIT_MS;
  const { now } = options.timers;
  const deadline = now() + waitMs;
  for (;;) {
    try {
      // Checked first: a planted link in the lock's place is refused, never renamed over or followed.
      let seen = inspect(path);
      if (seen === undefined && tryCreate(path, me, options.shared)) return;
      seen ??= inspect(path);
      if (seen === undefined) continue;
      const uid = myUid();
      // Another user's lock (planted, or left by their run) is neither waited for nor removed.
      if (uid !== undefined && seen.uid !== uid && !options.shared) {
        throw new UnsafePathError(
          path,
          `The lock ${path} belongs to another user: ${describeHolder(seen)}. opcli does not wait for or remove another user's lock.`,
          `If nothing of theirs is running on it, ask them (or root) to remove it: \`${shellAdvice(options.platform).removeFolder(path)}\`. Check why someone else can write in ${dir}.`,
        );
      }
      if (await isAbandoned(seen, now())) {
        await reclaim(path, seen, me, now, options.shared);
        if (inspect(path) === undefined) continue;
      }
      if (now() >= deadline) {
        const holder = holderAndWayOut(seen, path, options.platform);
        if (options.busy) throw options.busy(holder);
        throw new OpcliError(`Another opcli process holds the ${name} lock (${holder}) and did not release it in ${waitMs / 1000} s.`, {
          hint: 'Try again in a moment, once that run has finished.',
        });
      }
    } catch (error) {
      throw error instanceof OpcliError
        ? error
        : new OpcliError(`Cannot take the ${name} lock in ${dir}: ${(error as Error).message}`, {
            hint: 'Check that the config folder is writable by you (see `opcli config path`).',
            cause: error,
          });
    }
    await sleepOn(options.timers)(10 + Math.random() * 40);
  }
}

/**
 * Takes the cross-process lock `<dir>/<name>.lock` until `release()` (`withFileLock` is the usual way).
 * A lock whose owner on this machine is gone is reclaimed at once; another machine's once untouched
 * for STALE_MS. Gives up after LOCK_WAIT_MS with a retryable error.
 */
export async function acquireFileLock(dir: string, name: string, options: AcquireOptions = {}): Promise<HeldLock> {
  const platform = options.platform ?? process.platform;
  const path = join(dir, `${name}.lock`);
  const start = platform === 'linux' ? processStart(process.pid) : undefined;
  const live = start === undefined ? await answering() : undefined;
  const me: Owner = { pid: process.pid, host: hostname(), token: newToken(), at: new Date().toISOString(), start, live };
  await take(dir, name, me, { ...options, platform, timers: options.timers ?? realTimers });
  let lost = false;
  // A lock that cannot even be inspected is not this holder's any more.
  const stillMine = () => {
    try {
      return inspect(path)?.owner?.token === me.token;
    } catch {
      return false;
    }
  };
  const refresh = setInterval(() => {
    try {
      if (stillMine()) return utimesSync(path, new Date(), new Date());
    } catch {}
    lost = true;
  }, REFRESH_MS);
  refresh.unref();
  return {
    lost: () => lost || !stillMine(),
    release() {
      clearInterval(refresh);
      try {
        if (stillMine()) removeAtomically(path, me.token);
      } catch {
        // Left behind, it is reclaimed as abandoned once this process has exited.
      }
    },
  };
}

/** Runs `fn` holding the lock `<dir>/<name>.lock`: conf has no support for concurrent writers. */
export async function withFileLock<T>(dir: string, name: string, fn: () => Promise<T>, options: AcquireOptions = {}): Promise<T> {
  const lock = await acquireFileLock(dir, name, options);
  try {
    const result = await fn();
    if (lock.lost()) throw new OpcliError(`The ${name} lock was lost while in use.`, { hint: 'Try again.' });
    return result;
  } finally {
    lock.release();
  }
}
