/**
 * The files of a batch (input, journal, results), each resolved to its real file and checked before
 * anything is sent or written: two being one file would lose the batch's name (a rerun files every
 * row again) or overwrite the input, so that is a usage error.
 */
import { existsSync, lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, resolve as resolvePath } from 'node:path';
import { UsageError } from '../core/errors.js';
import { sameFileName, sameNameRule } from '../core/file-names.js';
import { shellAdvice } from '../core/platform.js';
import { type BatchFileRole, checkBatchPath, JOURNAL_ROLE, RESULTS_ROLE } from './batch-files.js';

interface BatchPaths {
  /** The input's real path; undefined for standard input. */
  input?: string;
  /** The journal's path (its folder's real path; the file may not exist yet, and is never a link); undefined with --validate-only. */
  journal?: string;
  /** The results file's path (its folder's real path; may not exist yet, never a link). */
  out?: string;
}

interface Target {
  real: string;
  /** `dev:ino` when the file exists. */
  id?: string;
  /** A file still to be created: its folder's `dev:ino` and its name there. */
  folder?: string;
  name?: string;
}

/** `dev:ino` of an existing path, exact (Windows' file ids pass 2^53). */
function idOf(path: string): string {
  const st = statSync(path, { bigint: true });
  return `${st.dev}:${st.ino}`;
}

/** realpath(3) (on Windows it also undoes 8.3 names and case); Node's own walk where it fails but for a missing file (a Windows RAM disk). */
function realPath(path: string): string {
  try {
    return realpathSync.native(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw error;
    return realpathSync(path);
  }
}

/** Where a path really leads: its real file, or for a file still to be created, its real folder + name. */
function target(path: string, flag: string, platform: NodeJS.Platform, shown = path): Target {
  try {
    const real = realPath(path);
    const st = statSync(real);
    if (st.isDirectory()) throw new UsageError(`${flag} ${shown} is a folder; expected a file.`);
    return { real, id: idOf(real) };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new UsageError(`${flag} ${shown}: ${(error as Error).message}.`);
  }
  let name = path;
  // A symlink whose target does not exist yet: the file will be created where it points.
  try {
    if (lstatSync(path).isSymbolicLink()) name = resolvePath(dirname(path), readlinkSync(path));
  } catch {
    // not there at all
  }
  const folder = dirname(name);
  if (!existsSync(folder)) {
    throw new UsageError(
      `${flag} ${shown}: the folder ${folder} does not exist.`,
      `Create it first (${shellAdvice(platform).makeFolder(folder)}) or pass another path to ${flag}.`,
    );
  }
  const realFolder = realPath(folder);
  return { real: resolvePath(realFolder, basename(name)), folder: idOf(realFolder), name: basename(name) };
}

/** A file opcli writes: checked where it is (a link there is refused, not followed), in its folder's real path. */
function written(path: string, role: BatchFileRole): string {
  checkBatchPath(path, role);
  return resolvePath(realPath(dirname(path)), basename(path));
}

/** Whether two targets are one file: existing, by device and inode; neither, by folder ids and names as the platform compares them. */
function same(a: Target, b: Target, platform: NodeJS.Platform): boolean {
  if (a.id !== undefined || b.id !== undefined) return a.id === b.id;
  return a.folder === b.folder && sameFileName(a.name as string, b.name as string, platform);
}

/** Resolves --from, --journal and --out against `cwd`, refusing two that are one file; the default journal is beside the real input. */
export function resolveBatchPaths(
  opts: { from: string; journal?: string; out?: string; validateOnly: boolean },
  cwd: string,
  platform: NodeJS.Platform = process.platform,
): BatchPaths {
  const named: { flag: string; path: string; at: Target }[] = [];
  let input: Target | undefined;
  if (opts.from !== '-') {
    const path = resolvePath(cwd, opts.from);
    try {
      const real = realPath(path);
      const st = statSync(real);
      if (!st.isFile()) throw new UsageError(`${opts.from} is not a file.`);
      input = { real, id: idOf(real) };
    } catch (error) {
      if (error instanceof UsageError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      throw new UsageError(`Cannot read ${opts.from}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}.`, 'Check the path passed to --from.');
    }
    named.push({ flag: '--from', path: opts.from, at: input });
  }
  const journal = opts.validateOnly ? undefined : opts.journal ? resolvePath(cwd, opts.journal) : `${input?.real}.journal.jsonl`;
  if (journal) {
    const at = target(journal, '--journal', platform, opts.journal || journal);
    named.push({ flag: '--journal', path: opts.journal ?? at.real, at });
  }
  const out = opts.out ? resolvePath(cwd, opts.out) : undefined;
  if (out) named.push({ flag: '--out', path: opts.out as string, at: target(out, '--out', platform, opts.out) });
  for (let i = 0; i < named.length; i++) {
    for (let j = i + 1; j < named.length; j++) {
      const a = named[i] as (typeof named)[number];
      const b = named[j] as (typeof named)[number];
      if (same(a.at, b.at, platform)) {
        // Two names of a file still to be created: say the rule that makes them one.
        const rule = a.at.id === undefined && a.at.real !== b.at.real ? ` (${sameNameRule(platform)})` : '';
        throw new UsageError(
          `${b.flag} ${b.path} is the same file as ${a.flag} ${a.path}${a.at.real !== resolvePath(cwd, a.path) ? ` (${a.at.real})` : ''}${rule}: nothing was sent or written.`,
          'The input, the journal and the results file must be three different files.',
        );
      }
    }
  }
  return { input: input?.real, journal: journal && written(journal, JOURNAL_ROLE), out: out && written(out, RESULTS_ROLE) };
}
