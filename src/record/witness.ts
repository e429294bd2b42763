/**
 * What each person has seen of a record of business actions, kept in their own config folder, so a
 * record that shrank, was rewritten or vanished stops money instead of reading as if nothing had been
 * filed or paid: in a team's record-dir any member can rewrite a file and recompute its chain, but not
 * reach another's config folder.
 *
 * CHOICE (docs/spec-choices.md#record-witness): one small file per record under
 * `<config folder>/record-witness/`: its path, its size when last read or written, and the hash of
 * the line ending there. The witnessed paths also list every place the record has lived (record-dir.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import { closeSync, constants, fstatSync, fsyncSync, mkdirSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { openPrivateFile, readPrivateFile } from '../config/private-file.js';
import { ExitCode, OpcliError } from '../core/errors.js';
import { lineHash, readAt } from './chain.js';

/** What a person last saw of one record file. */
export interface Witness {
  path: string;
  size: number;
  /** The hash of the last non-blank line ending at or before `size`. */
  hash: string;
  at: string;
}

const FOLDER = 'record-witness';

function witnessPath(configDir: string, path: string): string {
  return join(configDir, FOLDER, `${createHash('sha256').update(resolve(path)).digest('hex').slice(0, 16)}.json`);
}

/** The witness kept for a record file, if any. */
function readWitness(configDir: string, path: string): Witness | undefined {
  const text = readPrivateFile(witnessPath(configDir, path), 'record witness');
  if (text === undefined) return undefined;
  try {
    const w = JSON.parse(text) as Witness;
    return w.path === resolve(path) && Number.isInteger(w.size) && typeof w.hash === 'string' ? w : undefined;
  } catch {
    return undefined;
  }
}

/** Every record file this config folder has a witness for (the places the record has lived). */
export function witnessedPaths(configDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(join(configDir, FOLDER));
  } catch {
    return [];
  }
  const paths: string[] = [];
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const text = readPrivateFile(join(configDir, FOLDER, name), 'record witness');
    try {
      const w = text === undefined ? undefined : (JSON.parse(text) as Partial<Witness>);
      if (typeof w?.path === 'string') paths.push(w.path);
    } catch {
      // A witness that cannot be read names no place; it is rewritten by the next write.
    }
  }
  return paths;
}

/** Reads `length` bytes at `position` of a record (a file descriptor, or its bytes). */
export type ReadAt = (position: number, length: number) => Buffer;

export const fdReader =
  (fd: number): ReadAt =>
  (position, length) =>
    readAt(fd, position, length);

/** The hash of the last non-blank line ending at or before byte `end` (undefined: no line there). */
export function lineHashBefore(read: ReadAt, end: number): string | undefined {
  let tail = Buffer.alloc(0);
  let at = end;
  while (at > 0) {
    const start = Math.max(0, at - 64 * 1024);
    tail = Buffer.concat([read(start, at - start), tail]);
    at = start;
    const text = tail.toString('utf8').replace(/\s+$/, '');
    const nl = text.lastIndexOf('\n');
    if (nl >= 0 && text.slice(nl + 1).trim()) return lineHash(text.slice(nl + 1));
  }
  const text = tail.toString('utf8').replace(/\s+$/, '');
  return text ? lineHash(text.slice(text.lastIndexOf('\n') + 1)) : undefined;
}

/** A record that is not what its reader saw last: nothing may move until it is restored or accepted (exit 2). */
class RecordWitnessError extends OpcliError {}

/** What a record to check is: its words, the command that accepts it, and its state now (undefined size: the file is gone). */
export interface WitnessCheck {
  configDir: string;
  path: string;
  /** "record of claims", "gift card ledger". */
  what: string;
  /** `opcli claims repair`, `opcli giftcard repair`. */
  repair: string;
  size: number | undefined;
  read: ReadAt;
}

/** Refuses a record shorter than its reader saw it, changed up to there, or gone (exit 2); one never witnessed here passes. */
export function checkWitness(c: WitnessCheck): void {
  const w = readWitness(c.configDir, c.path);
  if (!w || w.size === 0) return;
  let what: string | undefined;
  if (c.size === undefined || c.size === 0) what = c.size === undefined ? 'is gone' : 'is empty (deleted and made again)';
  else if (c.size < w.size) what = `is shorter (${c.size} bytes)`;
  else if (lineHashBefore(c.read, w.size) !== w.hash) what = 'no longer holds the same lines up to that point';
  if (!what) return;
  throw new RecordWitnessError(
    `The ${c.what} ${c.path} ${what}: when you last used it (${w.at}) it had ${w.size} bytes. Lines were removed or rewritten by someone who can write ${dirname(c.path)}, or it was put back from an older copy. Nothing was sent: a removed line could be a claim filed or a payment made, and doing it again could do it twice.`,
    {
      exitCode: ExitCode.usage,
      hint: `Put the file back from a backup (or a copy beside it named *.damaged-*) and run again. Once you have checked what it lost, \`${c.repair}\` accepts the record as it is now (what you saw of it is kept in ${witnessPath(c.configDir, c.path)}).`,
      details: { record: c.path, witnessedSize: w.size, size: c.size ?? null },
    },
  );
}

/** Remembers a record as it is now: its size and the hash of its last line (size 0: empty or gone). */
function keepWitness(configDir: string, path: string, size: number, read: ReadAt, now = Date.now()): void {
  const hash = lineHashBefore(read, size);
  // An empty or vanished record accepted as it is: size 0 still names the place it lived.
  const at = new Date(now).toISOString();
  writeWitness(configDir, hash === undefined ? { path: resolve(path), size: 0, hash: '', at } : { path: resolve(path), size, hash, at });
}

/** Writes a witness whole (a new file renamed over the old one). */
function writeWitness(configDir: string, w: Witness): void {
  const target = witnessPath(configDir, w.path);
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  const temp = `${target}.${randomUUID()}`;
  const fd = openPrivateFile(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 'record witness') as number;
  try {
    writeSync(fd, `${JSON.stringify(w)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, target);
}

/** After the config folder moved here from `from` (config-home.ts): each witness of a record in `from` is kept under its path here. */
export function moveWitnesses(configDir: string, from: string): void {
  let names: string[];
  try {
    names = readdirSync(join(configDir, FOLDER));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    let w: Witness | undefined;
    try {
      w = JSON.parse(readPrivateFile(join(configDir, FOLDER, name), 'record witness') ?? '') as Witness;
    } catch {
      continue;
    }
    const inside = typeof w?.path === 'string' ? relative(resolve(from), w.path) : '..';
    if (inside.startsWith('..') || isAbsolute(inside)) continue;
    writeWitness(configDir, { ...w, path: resolve(configDir, inside) });
    rmSync(join(configDir, FOLDER, name), { force: true });
  }
}

/** Names `path` as a place the record has lived (a witness of size 0: nothing to check), when no witness does yet. */
export function rememberPlace(configDir: string, path: string, now = Date.now()): void {
  if (readWitness(configDir, path)) return;
  writeWitness(configDir, { path: resolve(path), size: 0, hash: '', at: new Date(now).toISOString() });
}

/** Accepts a record as it is now (a repair): what was seen of it becomes what it holds, or nothing when it is gone. */
export function acceptWitness(configDir: string, path: string, bytes: Buffer | undefined, now = Date.now()): void {
  if (!readWitness(configDir, path)) return;
  const b = bytes ?? Buffer.alloc(0);
  keepWitness(configDir, path, b.length, bufferReader(b), now);
}

/** A reader over bytes in memory. */
export const bufferReader =
  (b: Buffer): ReadAt =>
  (position, length) =>
    b.subarray(position, position + length);

/** `checkWitness` of a record open as `fd` (undefined: the file is missing); nothing is checked without a config folder. */
export function checkWitnessOf(configDir: string | undefined, path: string, fd: number | undefined, words: { what: string; command: string }): void {
  if (!configDir) return;
  const size = fd === undefined ? undefined : fstatSync(fd).size;
  checkWitness({ configDir, path, what: words.what, repair: words.command, size, read: fdReader(fd ?? -1) });
}

/** Remembers a record open as `fd` as this person leaves it; a witness not kept weakens only the next check, so it never fails a command. */
export function keepWitnessOf(configDir: string | undefined, path: string, fd: number): void {
  try {
    if (configDir) keepWitness(configDir, path, fstatSync(fd).size, fdReader(fd));
  } catch {
    // Kept by the next command that writes.
  }
}
