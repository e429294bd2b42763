/**
 * The batch journal of opcli 0.2.0 (v2/v3), read only: an append-only JSONL file beside the input
 * that recorded, for each row key, that its request was about to be sent and then its outcome. This
 * version writes no journal: a batch's rows are in the record of claims (record.ts), and a journal
 * found at a batch's name is read into it once (record-import.ts). Its lines are read under the one
 * damage policy of a record of actions (journal-read.ts), and `claims repair --journal` sets damaged
 * lines aside (journalRepairTarget).
 *
 * A journal is bound to the service and store its rows were filed with: each section starts with a
 * header line naming them (JournalHeader), and only the sections of this run's service and store
 * count as proof that a row was filed. The file itself is opened as batch-files.ts says (no link
 * followed, yours, writable by you alone).
 */
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { acquireFileLock, type HeldLock } from '../config/lock.js';
import { OpcliError, UsageError } from '../core/errors.js';
import { formatDuration } from '../core/flags.js';
import { claimMayExist } from '../record/outcome.js';
import { JOURNAL_ROLE, openBatchFile } from './batch-files.js';
import { lineAt } from '../record/file-lines.js';
import { setAsideLine } from '../record/log.js';
import type { RepairTarget } from '../record/repair.js';
import { openPrivateFile } from '../config/private-file.js';
import { closeSync, constants } from 'node:fs';
import { osUser } from '../config/user-name.js';
import { headerLine, type JournalEntry, type JournalService, NO_SERVICE } from './journal-format.js';
import type { PriorIndex, PriorOutcome, SimilarIndex } from './journal-index.js';
import { type JournalBinding, type ReadJournal, emptyRead, journalDamage, journalLine, readJournal, tellAbout } from './journal-read.js';

export {
  describeService,
  JOURNAL_HEADER,
  type JournalEntry,
  type JournalHeader,
  type JournalService,
  type JournalStatus,
  serviceOrigin,
} from './journal-format.js';
export { type PriorOutcome, PriorIndex, SimilarIndex } from './journal-index.js';
export type { JournalBinding } from './journal-read.js';

/**
 * What earlier runs recorded, read from a journal: the outcomes of this service's sections and the
 * entries behind them. A dry run reads it alone (`snapshot`); a run reads it through `Journal`.
 */
export class JournalReader {
  readonly path: string;
  private readonly prior: PriorIndex;
  private readonly similar: SimilarIndex;
  /** The journal, read by offset (undefined: no journal yet). */
  protected readonly source: FileHandle | undefined;
  /** Number of entries read back from earlier runs (of this service's sections). */
  readonly priorEntries: number;
  /** The file's id (journal-format.ts JournalHeader.id): a journal made again has another. */
  readonly id: string | undefined;

  protected constructor(path: string, source: FileHandle | undefined, read: ReadJournal) {
    this.path = path;
    this.source = source;
    this.prior = read.prior;
    this.similar = read.similar;
    this.priorEntries = read.entries;
    this.id = read.id;
  }

  /**
   * Reads the journal at `path` without writing or locking it (a dry run: nothing is sent). A
   * missing journal reads as empty; one that is a link, another user's or others can write is
   * refused, like for a run.
   */
  static async snapshot(path: string, binding: JournalBinding = {}): Promise<JournalReader> {
    const opened = await openBatchFile(path, JOURNAL_ROLE, 'read');
    if (!opened) return new JournalReader(path, undefined, emptyRead());
    try {
      const read = await readJournal(opened.handle, path, binding.service ?? NO_SERVICE);
      tellAbout(read, path, binding, opened.stats, false);
      return new JournalReader(path, opened.handle, read);
    } catch (error) {
      await opened.handle.close().catch(() => {});
      throw error;
    }
  }

  /** The last outcome an earlier run recorded for a key. */
  priorOutcome(key: string): PriorOutcome | undefined {
    return this.prior.get(key);
  }

  /**
   * The earlier row that `sim` looks like and whose claim exists or may exist (filed, uncertain, or
   * sent with no answer recorded), with its outcome; undefined when there is none.
   */
  similarTo(sim: string | undefined): PriorOutcome | undefined {
    if (!sim) return undefined;
    const key = this.similar.get(sim);
    const prior = key ? this.prior.get(key) : undefined;
    return prior && claimMayExist(prior.status) && prior.sendOffset >= 0 ? prior : undefined;
  }

  /**
   * The sourceOrderId and reason of an earlier outcome, read back from the journal at its offset:
   * the index keeps only the status, so a rerun over a million filed rows does not hold a million
   * ids. Only results printed per row (--jsonl, --out) need them.
   */
  async priorDetail(prior: PriorOutcome): Promise<{ sourceOrderId?: string; reason?: string }> {
    const e = await this.entryAt(prior.offset);
    return { sourceOrderId: e?.sourceOrderId, reason: e?.reason };
  }

  /** The entry that starts at a byte offset of the journal (undefined when it cannot be read). */
  async entryAt(offset: number): Promise<Partial<JournalEntry> | undefined> {
    if (offset < 0 || !this.source) return undefined;
    const text = await lineAt(this.source, offset);
    try {
      return text === undefined ? undefined : (JSON.parse(text) as Partial<JournalEntry>);
    } catch {
      return undefined;
    }
  }

  /** Closes a snapshot's file. */
  async closeReader(): Promise<void> {
    await this.source?.close().catch(() => {});
  }
}

/** Takes the lock of the journal at `path` (beside it), waiting up to `lockWaitMs` for a run that holds it. */
function lockJournal(path: string, lockWaitMs: number): Promise<HeldLock> {
  return acquireFileLock(dirname(path), basename(path), {
    waitMs: lockWaitMs,
    busy: (holder) =>
      new OpcliError(`Another \`opcli claims file\` run is using the journal ${path}. Its lock is held by ${holder}.`, {
        hint: `${
          lockWaitMs === 0
            ? 'This run does not wait (--lock-wait 0s): run it again once the other has finished, or pass --lock-wait 10m to wait for it.'
            : `This run waited ${formatDuration(lockWaitMs)} (--lock-wait): wait for the other to finish, or pass a longer --lock-wait such as 10m.`
        } Two runs on one journal could file a row twice, so opcli refuses.`,
      }),
  });
}

/**
 * The journal at `path` as a file `claims repair --journal` sets damaged lines aside in
 * (src/record/repair.ts, as for every record of actions); a damaged first line becomes a header of
 * `service`, so the entries after it count for this store again.
 */
export function journalRepairTarget(path: string, service: JournalService, now: () => number): RepairTarget {
  return {
    path,
    what: 'journal',
    command: `opcli claims repair --journal ${path}`,
    withLock: async (fn) => {
      const lock = await lockJournal(path, 0);
      try {
        return await fn();
      } finally {
        lock.release();
      }
    },
    damaged: () => {
      const fd = openPrivateFile(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0), 'journal');
      if (fd === undefined) throw new UsageError(`There is no journal at ${path}.`, 'Pass the path the error named: --journal PATH.');
      try {
        return journalDamage(fd, path);
      } finally {
        closeSync(fd);
      }
    },
    parse: journalLine,
    setAside: (d, reason, at) => (d.line === 1 ? headerLine(service, new Date(now()).toISOString()).slice(0, -1) : setAsideLine(d, reason, at, osUser())),
  };
}
