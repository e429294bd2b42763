/**
 * The first run of this version over a journal of an earlier one reads its filed and uncertain rows
 * into the record of claims (record.ts), so a copy of a file filed before the record existed is held
 * too. Once per journal: the record names each journal it took in. No prompt, no print.
 */
import { JOURNAL_ROLE, openBatchFile } from './batch-files.js';
import { eachLineSync, lineAtSync } from '../record/file-lines.js';
import { type BatchHistory, hashOfRobust, itemWords, recordSimilarity, robustJson } from './plan.js';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type JournalEntry, JournalReader, type JournalService } from './journal.js';
import { ClaimRecord, type IntentLine, type OutcomeLine } from './record.js';
import type { ClaimsRecord } from './record-open.js';
import type { OfflineClaim } from '../schemas.js';

/** Lines written at a time (a journal of a million rows is not held in memory). */
const CHUNK = 2_000;

/** The input a journal at its default path belongs to (`claims.csv.journal.jsonl` → `claims.csv`), else the journal. */
function sourceOf(journalPath: string): string {
  return journalPath.endsWith('.journal.jsonl') ? journalPath.slice(0, -'.journal.jsonl'.length) : journalPath;
}

/** A journal line's fields as this import reads them: unchecked until checked. */
type SendingEntry = Partial<Record<keyof JournalEntry, unknown>>;

/** Who takes the journal in: the profile, the user and the host its intents are recorded under, and the journal open again as `fd`. */
interface Importer {
  record: ClaimRecord;
  journal: JournalReader;
  fd: number;
  profile: string;
  user: string;
  host: string;
}

/**
 * The intent and outcome that a journal line at `offset` stands for: its row's last `sending`
 * entry, in a section of this service, that was not provably never sent (not_sent), with what a
 * resume asks of the record (ClaimRecord.batchRow): its row key, content tag, fingerprint and claim.
 */
function importedLines(by: Importer, text: string, offset: number): [IntentLine, OutcomeLine] | undefined {
  const { record, journal } = by;
  let e: SendingEntry;
  try {
    e = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (e?.status !== 'sending' || typeof e.key !== 'string' || typeof e.line !== 'number' || typeof e.claim !== 'object' || e.claim === null) return undefined;
  const prior = journal.priorOutcome(e.key);
  if (!prior || prior.sendOffset !== offset || prior.status === 'not_sent') return undefined;
  // A row the record holds for this batch already (written by a run of this version, here or where the record lived before).
  if (record.batchRow(journal.path, { key: e.key })) return undefined;
  const claim = e.claim as OfflineClaim;
  const tag = typeof e.tag === 'number' && e.tag > 0 ? e.tag : undefined;
  const key = tag ? hashOfRobust(robustJson(claim)) : e.key;
  const at = typeof e.at === 'string' ? e.at : new Date().toISOString();
  const filing = `import.${e.key.slice(0, 16)}.${e.line}`;
  const filed = prior.status === 'filed';
  const settled = filed || prior.status === 'rejected';
  // The sourceOrderId and reason of the row's last entry, read back at its offset.
  let detail: { sourceOrderId?: string; reason?: string } = {};
  try {
    detail = JSON.parse(lineAtSync(by.fd, prior.offset) ?? '{}') ?? {};
  } catch {}
  return [
    {
      v: 1,
      issuance: filing,
      key,
      type: 'intent',
      at,
      user: by.user,
      host: by.host,
      profile: by.profile,
      source: sourceOf(journal.path),
      line: e.line,
      journal: journal.path,
      sim: recordSimilarity(claim),
      email: typeof claim.customer?.email === 'string' ? claim.customer.email : undefined,
      item: claim.item ? itemWords(claim) : undefined,
      ...(tag ? { row: e.key, tag } : {}),
      like: typeof e.sim === 'string' ? e.sim : undefined,
      claim,
    },
    {
      v: 1,
      issuance: filing,
      key,
      type: 'outcome',
      at,
      status: settled ? (prior.status as 'filed' | 'rejected') : 'uncertain',
      sourceOrderId: detail.sourceOrderId,
      error: settled ? detail.reason : (detail.reason ?? 'recorded as sent without an answer by the journal it was read from'),
    },
  ];
}

/**
 * Reads the rows `journal` holds as filed, uncertain or sent (of this service's sections: the
 * journal's own index says which) into `record`, unless it was read in before or the record holds
 * them already. Returns how many were taken in.
 */
export async function importJournal(record: ClaimRecord, journal: JournalReader, profile: string, user: string, host: string): Promise<number> {
  if (record.imported.has(journal.path)) return 0;
  // Opened again the checked way (no link, no FIFO, a regular file of yours): it may have been swapped since.
  const opened = await openBatchFile(journal.path, JOURNAL_ROLE, 'read');
  if (!opened) return 0;
  const by: Importer = { record, journal, fd: opened.handle.fd, profile, user, host };
  let taken = 0;
  let pending: (IntentLine | OutcomeLine)[] = [];
  try {
    eachLineSync(by.fd, (buffer, start, end, offset, complete, long) => {
      const both = complete && !long ? importedLines(by, buffer.toString('utf8', start, end), offset) : undefined;
      if (!both) return;
      pending.push(...both);
      // Counted for the notice: the claims it holds filed or possibly filed (a rejected row is read in for the resume alone).
      if (both[1].status !== 'rejected') taken++;
      if (pending.length >= CHUNK) {
        record.importLines(pending);
        pending = [];
      }
    });
  } finally {
    await opened.handle.close();
  }
  record.importLines(pending, { journal: journal.path, entries: taken });
  return taken;
}

/**
 * The journals beside the input (`*.journal.jsonl` in `folder`: where every version put a file's
 * journal), each read into the record once as `importJournal` reads the run's own, so a copy of a
 * file an earlier version filed is held even when the copy runs before the original does. A journal
 * that cannot be read (damaged, a link, another user's) is passed over with a notice: its rows are
 * then protected only when its own file runs, as before.
 */
export async function importBeside(
  record: ClaimRecord,
  folder: string,
  by: { service: JournalService; profile: string; user: string; host: string },
  notice: (text: string) => void,
): Promise<number> {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return 0;
  }
  let taken = 0;
  for (const name of names.filter((n) => n.endsWith('.journal.jsonl')).sort()) {
    const path = resolve(join(folder, name));
    if (record.imported.has(path)) continue;
    let reader: JournalReader | undefined;
    try {
      reader = await JournalReader.snapshot(path, { service: by.service });
      taken += await importJournal(record, reader, by.profile, by.user, by.host);
    } catch (error) {
      notice(
        `Notice: the journal ${path} beside the input cannot be read (${(error as Error).message.split('\n')[0]}): a copy of its file is held only once that file runs again.\n`,
      );
    } finally {
      await reader?.closeReader();
    }
  }
  return taken;
}

/**
 * What the earlier runs of the batch `batch` did with a row, for the planner (plan.ts): the record's
 * answer (a file or the team's database), or over a journal of an earlier version the record has not
 * read in (a dry run writes nothing; the database takes journals by `opcli record import`), that
 * journal's for the rows the record does not hold.
 */
export function historyOf(record: ClaimsRecord, batch: string, journal?: JournalReader): BatchHistory {
  const read = record instanceof ClaimRecord ? record.imported : undefined;
  const unread = journal && journal.priorEntries > 0 && !read?.has(journal.path) ? journal : undefined;
  if (!unread) return { batch, batchRow: (b, by) => record.batchRow(b, by) };
  return {
    batch,
    async batchRow(b, by) {
      const row = await record.batchRow(b, by);
      const prior = row ? undefined : 'key' in by ? unread.priorOutcome(by.key) : unread.similarTo(by.like);
      if (!prior) return row;
      const sent = await unread.entryAt(prior.sendOffset);
      return { status: prior.status, line: sent?.line, at: sent?.at, tag: prior.tag, claim: sent?.claim, ...(await unread.priorDetail(prior)) };
    },
  };
}
