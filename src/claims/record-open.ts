/**
 * The record of claims opened for a run, picked in this one place (as openLedger is for store
 * credit): the team's database with a record-url (src/record-pg/claims.ts), else the file record
 * (record.ts). Both answer ClaimsRecord, so a single claim, a batch and `claims history` are one
 * code. Over a file record, a 0.2.0 journal is read in once (importEarlier), so a copy of a file
 * filed before the record existed is held too; one not read in (a dry run, the database) is asked
 * beside it (historyOf). No print.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ResolvedProfile } from '../config/profile.js';
import { type RecordPlace, recordPlace } from '../config/record-dir.js';
import { hostName, osUser } from '../config/user-name.js';
import type { ConnectionContext } from '../record-pg/connection.js';
import { DatabaseClaimRecord, type Taken } from '../record-pg/claims.js';
import { eachLine, lineAt } from '../record/file-lines.js';
import type { OfflineClaim } from '../schemas.js';
import { count } from '../text/count.js';
import { JOURNAL_ROLE, openBatchFile } from './batch-files.js';
import { type ClaimHistory, filingFilter, claimEntry, openClaimHistory } from './history.js';
import { type JournalEntry, JournalReader, type JournalService } from './journal.js';
import { type Answer, type BatchHistory, hashOfRobust, itemWords, type PlanRecord, recordSimilarity, robustJson } from './plan.js';
import { ClaimRecord, type IntentLine, type OpenRecord } from './record.js';
import type { NewIntent, OutcomeLine, RecordStore } from './record-format.js';

/** What writing intents answers: nothing (the file record, under its lock), or the filings another member committed first. */
// biome-ignore lint/suspicious/noConfusingVoidType: the file record's writes return nothing
export type Durable = Taken | undefined | void;

/** The record of claims of one store, as its clients use it (ClaimRecord and DatabaseClaimRecord): what the planner asks (PlanRecord), and the writes. */
export interface ClaimsRecord extends PlanRecord {
  /** The file's path, or `record database HOST:PORT/DB` (never the password). */
  readonly path: string;
  /** One claim's intent, durable before it returns; the filings in `Taken` (another member's attempt first) must not be sent. */
  intents(lines: NewIntent[], now?: number): Answer<Durable>;
  /** A batch group's intents, durable when the promise resolves; the filings in `Taken` must not be sent. */
  intentsDurable(lines: NewIntent[], now?: number): Promise<Durable>;
  /** Queues an attempt's outcome. */
  outcome(o: Omit<OutcomeLine, 'v' | 'type' | 'at'>, now?: number): void;
  /** Whether another run took the record's lock since it was opened (the database takes none: never). */
  lost(): boolean;
  /** Writes what is queued, durably, and closes. */
  closeDurable(): Promise<void>;
  /** Closes (the file: what is queued is written; the database: closeDurable writes it). */
  close(): Answer<void>;
}

/** What picking the record needs beyond the profile: the environment and folder the database's credentials are read from (libpq's rules). */
export type RecordContext = Omit<ConnectionContext, 'passwordSource'>;

/** The store a profile files for. */
export interface OpenClaims {
  store: RecordStore;
  /** To file: the file record's lock is taken, waiting this long for another run (the database takes none). */
  lock?: OpenRecord['lock'];
}

/** The record of claims for a profile: the database with a record-url, else the file record in `place`. */
export async function openClaimsRecord(
  place: RecordPlace,
  profile: ResolvedProfile | undefined,
  ctx: RecordContext,
  options: OpenClaims,
): Promise<ClaimsRecord> {
  if (!profile?.record) return ClaimRecord.open({ place, store: options.store, lock: options.lock });
  // The file record of this config folder and of every place it lived before: read, never written.
  const earlier = ClaimRecord.openSync({ place, store: options.store });
  return DatabaseClaimRecord.open(profile.record, { ...ctx, passwordSource: profile.record.passwordSource }, options.store, earlier);
}

/** The history of a profile's record of claims: streamed from the database with a record-url, else from the file record. */
export async function openClaimsHistory(configDir: string, profile: ResolvedProfile, ctx: RecordContext, store: RecordStore): Promise<ClaimHistory> {
  const place = recordPlace(configDir, profile);
  if (!profile.record) return openClaimHistory({ place, store });
  const record = await DatabaseClaimRecord.open(profile.record, { ...ctx, passwordSource: profile.record.passwordSource }, store, undefined);
  return {
    path: record.path,
    damaged: [],
    each: (filter, emit) => {
      const matches = filingFilter(filter);
      return record.eachClaim(filter, (attempts) => {
        const claim = claimEntry(attempts);
        if (claim.rows.some(matches)) emit(claim.entry);
      });
    },
    close: () => record.close(),
  };
}

/** Reads the 0.2.0 journal at the batch's name, and those beside the input, into the record once each, saying how many claims came. */
export async function importEarlier(
  record: ClaimRecord,
  journal: string,
  profile: string,
  notice: (text: string) => void,
  beside: { folder?: string; service: JournalService },
): Promise<void> {
  // CHOICE (docs/spec-choices.md#record-of-claims): a journal of an earlier version is read into the record once, so copies of its file are held too.
  // Read each run for its damage; its notices said once, on the run that reads it in.
  const tell = record.imported.has(journal) ? undefined : notice;
  const reader = await JournalReader.snapshot(journal, { service: beside.service, notice: tell });
  let taken: number;
  try {
    taken = await importJournal(record, reader, profile, osUser(), hostName());
  } finally {
    await reader.closeReader();
  }
  const holds = (n: number, from: string, copy: string) =>
    n > 0 &&
    notice(
      `Notice: the record of claims ${record.path} now holds the ${count(n)} claim${n === 1 ? '' : 's'} ${from} filed or possibly filed, so a copy of ${copy} does not file them again.\n`,
    );
  // And so are the journals beside the input: a copy of a file filed by an earlier version may run before the file itself.
  if (beside.folder) {
    const others = await importBeside(record, beside.folder, { service: beside.service, profile, user: osUser(), host: hostName() }, notice);
    holds(others, `the journals beside ${beside.folder} show`, 'their files');
  }
  // What was read in is asked of next (the resume, the copies): the index is brought up to the file.
  record.reindex();
  holds(taken, `the journal ${journal} shows`, 'this file');
}

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

/** The intent and outcome a journal line stands for: its row's last `sending` entry of this service, unless provably not sent. */
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
    detail = JSON.parse(lineAt(by.fd, prior.offset) ?? '{}') ?? {};
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

/** Reads the rows `journal` holds filed, uncertain or sent into `record`, once; returns how many were taken in. */
export async function importJournal(record: ClaimRecord, journal: JournalReader, profile: string, user: string, host: string): Promise<number> {
  if (record.imported.has(journal.path)) return 0;
  // Opened again the checked way (no link, no FIFO, a regular file of yours): it may have been swapped since.
  const opened = await openBatchFile(journal.path, JOURNAL_ROLE, 'read');
  if (!opened) return 0;
  const by: Importer = { record, journal, fd: opened.handle.fd, profile, user, host };
  let taken = 0;
  let pending: (IntentLine | OutcomeLine)[] = [];
  try {
    eachLine(by.fd, (buffer, start, end, offset, complete, long) => {
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
 * The journals beside the input (`*.journal.jsonl` in `folder`), each read in once, so a copy of a
 * file 0.2.0 filed is held even when it runs before the original; one that cannot be read is passed
 * over with a notice.
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

/** What earlier runs of `batch` did with a row: the record's answer, else a 0.2.0 journal's it has not read in (dry run, database). */
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
