/**
 * Repairing a record of actions: the damaged file is kept whole as a copy, and each damaged line is
 * replaced in place (line numbers stay) by a `set-aside` line naming it, what was wrong and the action
 * its beginning still names, then held as `uncertain`. A newer opcli's line is never set aside. No prompt, no print.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, constants, fsyncSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { openPrivateFile, readPrivateFile, type SharedFolder } from '../config/private-file.js';
import { acceptAsItIs, type RecordPlace } from '../config/record-dir.js';
import { osUser } from '../config/user-name.js';
import { UsageError } from '../core/errors.js';
import { rechain } from './chain.js';
import { blockingDamage, type DamagedLine, describeDamage, type LineSchema, TORN_REASON } from './damage.js';
import { type RecordFile, readLog, readRecordFile, setAsideLine, withRecordLock } from './log.js';

/** A record file to repair. */
export interface RepairTarget {
  path: string;
  /** "gift card ledger", "record of claims". */
  what: string;
  /** The command that repairs it, named in the reason a line was set aside. */
  command: string;
  shared?: SharedFolder;
  withLock<T>(fn: () => Promise<T>): Promise<T>;
  /** The damaged lines as the file reads now. */
  damaged(): DamagedLine[];
  /** How its lines read (the client's schema): the repaired file must read cleanly by it (log.ts readLog). */
  client: LineSchema<unknown>;
  /** The set-aside line (JSON) for a damaged line. */
  setAside(d: DamagedLine, reason: string, at: string): string;
  /** Accepts the record as it is once repaired: what this person saw of it (witness.ts) becomes what it holds. */
  accept?(): void;
}

/** A client's record file (log.ts) as a file to repair: read whole, under its lock, accepted as it is once repaired (witness.ts). */
export function repairTargetOf<T>(place: RecordPlace, f: RecordFile<T>): RepairTarget {
  return {
    path: join(place.dir, f.name),
    what: f.words.what,
    command: f.words.command,
    shared: place.shared,
    withLock: (fn) => withRecordLock(place, f.lock, fn),
    damaged: () => readRecordFile(place, f, () => {}),
    client: f,
    accept: () => acceptAsItIs(place, f.name, f.words.what),
    // A damaged line 1 gets a new header.
    setAside: (d, reason, at) => (d.line === 1 && f.header ? f.header(at) : setAsideLine(d, reason, at, osUser())),
  };
}

/** What a repair did, or would do. */
export interface RepairPlan {
  /** The file repaired. */
  path: string;
  /** The damaged lines that are set aside. */
  lines: DamagedLine[];
  /** Where the damaged file is kept (after the repair). */
  copy?: string;
}

/** The damaged lines a repair would set aside (none when the file reads cleanly); refuses lines of a newer opcli. */
export function planRepairOf(target: RepairTarget): RepairPlan {
  const lines = blockingDamage(target.damaged());
  const newer = lines.filter((d) => d.kind === 'newer');
  if (newer.length) {
    throw new UsageError(
      `The ${target.what} ${target.path} has line(s) ${newer.map((d) => d.line).join(', ')} written by a newer version of opcli: they are records this version cannot read, not damage, and are not set aside.`,
      'Upgrade opcli (npm install -g opcli) to read them.',
    );
  }
  return { path: target.path, lines };
}

/** Writes `text` to a new file at `path`, durable; `check` reads it back before it is closed. */
function writeNew(path: string, text: string, what: string, shared?: SharedFolder, check?: (fd: number) => void): void {
  const fd = openPrivateFile(path, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, what, 0o600, shared) as number;
  try {
    writeSync(fd, text);
    fsyncSync(fd);
    check?.(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Sets the damaged lines aside under the file's lock: the file is kept whole at `<file>.damaged-<time>`,
 * then replaced (atomically, by a rename) with each damaged line turned into a `set-aside` line.
 * A torn line gets TORN_REASON (it was already uncertain).
 */
export async function repairFile(target: RepairTarget, env: { now(): number }): Promise<RepairPlan> {
  return target.withLock(async () => {
    const plan = planRepairOf(target);
    if (plan.lines.length === 0) {
      target.accept?.();
      return plan;
    }
    const text = readPrivateFile(target.path, target.what, target.shared) ?? '';
    const at = new Date(env.now()).toISOString();
    const byLine = new Map(plan.lines.map((d) => [d.line, d]));
    const set = text.split('\n').map((line, i) => {
      const d = byLine.get(i + 1);
      if (!d) return line;
      const reason = d.kind === 'torn' ? TORN_REASON : `was set aside by \`${target.command}\` (${describeDamage(d).replace(/^line \d+ /, '')})`;
      return target.setAside(d, reason, at);
    });
    // A line set aside has another hash: the lines after it are chained again (src/record/chain.ts).
    let repaired = rechain(set).join('\n');
    if (!repaired.endsWith('\n')) repaired += '\n';
    const copy = `${target.path}.damaged-${at.replace(/[:.]/g, '-')}`;
    writeNew(copy, text, `${target.what} copy`, target.shared);
    const temp = `${target.path}.repair-${randomUUID()}`;
    try {
      // The new file reads back cleanly by the client's own rules before it replaces the record, or the repair says so and the record stays as it was.
      writeNew(temp, repaired, target.what, target.shared, (fd) => {
        const left = blockingDamage(readLog(fd, target.client, () => {}).damaged);
        if (left.length)
          throw new UsageError(`The repaired ${target.what} ${target.path} would still have damaged line(s) ${left.map((d) => d.line).join(', ')}.`);
      });
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
    renameSync(temp, target.path);
    target.accept?.();
    return { ...plan, copy };
  });
}
