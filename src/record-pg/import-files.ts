/**
 * The file half of `opcli record import`: a record folder's records of claims, its gift card ledger and
 * the batch journals named, read by their own readers and turned into the team's record's rows
 * (import.ts writes them). Every file is read, and a damaged line refused, before a row is written.
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { importJournal, JournalReader, type JournalService } from '../claims/journal.js';
import { ClaimRecord, LOCK_WAIT_MS, type ReadLine, type RecordStore, recordFileName } from '../claims/record.js';
import type { RecordPlace } from '../config/record-dir.js';
import { hostName, osUser } from '../config/user-name.js';
import { ExitCode, OpcliError } from '../core/errors.js';
import { attemptRow, outcomeRow, scopeOf, warningRow } from '../giftcard/ledger-db.js';
import { keyParts, Ledger, LEDGER_LINES, type LedgerRecord } from '../giftcard/ledger.js';
import { blockingDamage, type DamagedLine, DamagedRecordFileError, TORN_REASON } from '../record/damage.js';
import { lineAt } from '../record/file-lines.js';
import { openLog } from '../record/log.js';
import type { ImportChunk, ImportedFile, NoteRow } from './import.js';
import { present } from './queries.js';
import { claimIntentRow, claimOutcomeRow, claimRunRow, type RunDetails, scopeOf as claimScope } from './claims.js';

/** Rows a statement at most (each chunk is one statement a table). */
const SLICE = 2_000;

/** One file to import and its rows, in the order they may be written. */
export interface ImportSource {
  kind: 'claims record' | 'gift card ledger' | 'journal';
  file: ImportedFile;
  /** How many rows of each table the file holds. */
  held: { runs: number; intents: number; outcomes: number; notes: number };
  chunks: ImportChunk[];
}

/** Who imports, for the journals: the profile's service, and the scope of a ledger key written before keys named their shop and store. */
export interface ImportContext {
  service: JournalService & { profile: string };
  /** `shop:…|store:…` of the profile. */
  scope: string;
  notice(text: string): void;
}

/** A stable id of a file: its first line (a header, or its first action, each with its own time and id), or a journal's path, hashed. */
function fileIdOf(kind: string, firstLine: string): string {
  return `${kind}:${createHash('sha256').update(firstLine).digest('hex').slice(0, 32)}`;
}

/** The rows in slices of SLICE, runs first, then intents, outcomes and notes (each references what came before). */
function sliced(rows: Required<ImportChunk>): ImportChunk[] {
  const chunks: ImportChunk[] = [];
  for (const table of ['runs', 'intents', 'outcomes', 'notes'] as const) {
    const all = rows[table] as unknown[];
    for (let i = 0; i < all.length; i += SLICE) chunks.push({ [table]: all.slice(i, i + SLICE) });
  }
  return chunks;
}

function source(kind: ImportSource['kind'], file: ImportedFile, rows: Required<ImportChunk>): ImportSource {
  const held = { runs: rows.runs.length, intents: rows.intents.length, outcomes: rows.outcomes.length, notes: rows.notes.length };
  return { kind, file, held, chunks: sliced(rows) };
}

/**
 * The set-aside line the next append would write for a torn last line (src/record/log.ts, LogGroup's opening):
 * its action is uncertain, and goes into the database so (a second import adds it not: the line count).
 */
function tornSetAside(damaged: DamagedLine[], lines: { type: string; line?: number }[]) {
  const named = new Set(lines.flatMap((l) => (l.type === 'set-aside' && l.line !== undefined ? [l.line] : [])));
  return damaged
    .filter((d) => d.kind === 'torn' && !named.has(d.line))
    .map((d) => ({
      v: 1 as const,
      issuance: d.issuance ?? `damaged-line-${d.line}`,
      key: d.key ?? 'unknown',
      type: 'set-aside' as const,
      at: new Date().toISOString(),
      user: osUser(),
      line: d.line,
      reason: TORN_REASON,
    }));
}

/** The lines of a record of claims as rows, in the layout the database's record of claims writes its own (claims.ts). */
export function claimRows(lines: ReadLine[], store: RecordStore): Required<ImportChunk> {
  const scope = claimScope(store);
  const rows: Required<ImportChunk> = { runs: [], intents: [], outcomes: [], notes: [] };
  const filings = new Set<string>();
  const runs = new Map<string, RunDetails>();
  for (const r of lines) {
    if (r.type === 'run') {
      runs.set(r.run, r);
      rows.runs.push(claimRunRow(r.run, r.at, r, scope));
    } else if (r.type === 'intent') {
      filings.add(r.issuance);
      rows.intents.push(claimIntentRow(r, scope, r.run === undefined ? undefined : runs.get(r.run)));
    } else if (r.type === 'outcome') {
      // An outcome of no intent here is read by no one (the record's readers pass it over): it is not copied.
      if (filings.has(r.issuance)) rows.outcomes.push(claimOutcomeRow(r));
    } else if (r.type === 'set-aside') {
      rows.notes.push(setAsideNote(r, filings, scope.origin, scope.storeId));
    }
  }
  return rows;
}

/** A set-aside line as a note: the action it names stays uncertain (its attempt, when this file holds it). */
function setAsideNote(
  r: { issuance: string; key: string; at: string; user: string; line: number; reason: string },
  filings: Set<string>,
  origin: string,
  storeId: string,
): NoteRow {
  return {
    kind: 'set-aside',
    filing: filings.has(r.issuance) ? r.issuance : undefined,
    origin,
    storeId,
    key: r.key === 'unknown' ? undefined : r.key,
    message: `line ${r.line} ${r.reason}`,
    osUser: r.user,
    at: r.at,
    // The issuance the line names, when it names none of this file's attempts: the file record's set-aside line has it.
    detail: present({ line: r.line, reason: r.reason, issuance: filings.has(r.issuance) ? undefined : r.issuance }),
  };
}

/** Every line of a record of claims as history reads it, a torn last line set aside; a damaged line stops here. */
function readClaimRecord(place: RecordPlace, store: RecordStore): { lines: ReadLine[]; path: string } {
  const record = ClaimRecord.openSync({ place, store });
  try {
    const lines = record.all();
    return { lines: [...lines, ...tornSetAside(record.damaged, lines)], path: record.path };
  } finally {
    record.close();
  }
}

/** The store a record of claims names in its header (line 1), or undefined. */
function storeOfRecord(place: RecordPlace, name: string): RecordStore | undefined {
  const fd = openLog(place, name, 'record of claims', false);
  if (fd === undefined) return undefined;
  try {
    const header = JSON.parse(lineAt(fd, 0) ?? 'null') as { type?: unknown; origin?: unknown; storeId?: unknown } | null;
    if (header?.type !== 'header') return undefined;
    const text = (v: unknown) => (typeof v === 'string' ? v : null);
    return { origin: text(header.origin), storeId: text(header.storeId) };
  } catch {
    // Not a header: the record's own reader names the damage.
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The records of claims of a folder (`claims-record-<hash>.jsonl`), each with its store, as sources. */
function claimRecords(place: RecordPlace): ImportSource[] {
  const names = readdirSync(place.dir)
    .filter((n) => /^claims-record-[0-9a-f]{16}\.jsonl$/.test(n))
    .sort();
  const sources: ImportSource[] = [];
  for (const name of names) {
    const store = storeOfRecord(place, name);
    // A file whose name is not its header's store is not a record of claims opcli wrote: it is no one's to copy.
    if (!store || recordFileName(store) !== name) {
      throw new OpcliError(
        `${join(place.dir, name)} is not a record of claims opcli can read (its first line names no store, or another one); nothing was copied.`,
        {
          exitCode: ExitCode.usage,
          hint: 'Move it out of the folder, or run `opcli claims repair` with the profile of its store; then import again.',
        },
      );
    }
    const { lines, path } = readClaimRecord(place, store);
    const header = lines.find((l) => l.type === 'header');
    if (!header) continue;
    const rows = claimRows(lines, store);
    sources.push(source('claims record', { fileId: fileIdOf('claims', JSON.stringify(header)), path, lines: lines.length }, rows));
  }
  return sources;
}

/** A ledger key as the database holds it: its claim or order as its identity, scoped (a key of before scopes named none: the importing profile's). */
function canonicalKey(key: string, scope: string): string {
  const parts = keyParts(key);
  return parts.what.startsWith('claim:') || parts.what.startsWith('bonus:') ? `${parts.scope ?? scope}|${parts.what}` : key;
}

/** The gift card ledger of a folder as a source (none when empty), a torn last line set aside; a damaged line stops here. */
function ledgerSource(place: RecordPlace, scope: string): ImportSource | undefined {
  const ledger = new Ledger(place);
  const read = ledger.read();
  const { damaged } = read;
  const stops = blockingDamage(damaged);
  if (stops.length) throw new DamagedRecordFileError(ledger.path, stops, LEDGER_LINES.words);
  const records: LedgerRecord[] = [...read.records, ...tornSetAside(damaged, read.records)];
  const first = records[0];
  if (!first) return undefined;
  const rows = ledgerRows(records, scope);
  const { uid: _uid, ...firstFields } = first;
  return source(
    'gift card ledger',
    { fileId: fileIdOf('ledger', JSON.stringify(firstFields)), path: ledger.path, lines: records.length + damaged.length },
    rows,
  );
}

/** The ledger's records as rows: attempts (kind credit), outcomes, warnings, set-aside notes. */
function ledgerRows(records: LedgerRecord[], scope: string): Required<ImportChunk> {
  const rows: Required<ImportChunk> = { runs: [], intents: [], outcomes: [], notes: [] };
  const filings = new Set<string>();
  for (const r of records) {
    const key = canonicalKey(r.key, scope);
    if (r.type === 'attempt') {
      if (filings.has(r.issuance)) continue;
      filings.add(r.issuance);
      rows.intents.push(attemptRow({ ...r, key }));
    } else if (r.type === 'outcome') {
      // An outcome of no attempt here is read by no one (groupIssuances passes it over): it is not copied.
      if (filings.has(r.issuance)) rows.outcomes.push(outcomeRow(r));
    } else if (r.type === 'warning') {
      if (filings.has(r.issuance)) rows.notes.push(warningRow({ ...r, key }));
    } else {
      const { origin, storeId } = scopeOf(key);
      rows.notes.push(setAsideNote({ ...r, key }, filings, origin, storeId));
    }
  }
  return rows;
}

/**
 * A batch journal as a source: read into a record of claims of its own in a temporary folder, as a batch
 * run reads one (importJournal), then that record's lines; its id is the journal's, so a second import adds nothing.
 */
async function journalSource(path: string, ctx: ImportContext): Promise<ImportSource | undefined> {
  const reader = await JournalReader.snapshot(path, { service: ctx.service, notice: ctx.notice });
  const dir = mkdtempSync(join(tmpdir(), 'opcli-import-'));
  try {
    const place = { dir, configDir: dir };
    const store = { origin: ctx.service.origin, storeId: ctx.service.storeId };
    const record = await ClaimRecord.open({ place, store, lock: { waitMs: 0 } });
    try {
      await importJournal(record, reader, ctx.service.profile, osUser(), hostName());
    } finally {
      record.close();
    }
    const { lines } = readClaimRecord(place, store);
    const rows = claimRows(lines, store);
    if (rows.intents.length === 0) return undefined;
    return source(
      'journal',
      {
        fileId: reader.id !== undefined ? `journal:${reader.id}` : fileIdOf('journal', resolve(path)),
        path: reader.path,
        lines: rows.intents.length + rows.outcomes.length,
      },
      rows,
    );
  } finally {
    await reader.closeReader();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Everything a record folder and the named journals hold, read and checked before anything is written. */
export async function readImportSources(place: RecordPlace, journals: string[], ctx: ImportContext): Promise<ImportSource[]> {
  const sources = claimRecords(place);
  const ledger = ledgerSource(place, ctx.scope);
  if (ledger) sources.push(ledger);
  for (const journal of journals) {
    const found = await journalSource(resolve(journal), ctx);
    if (found) sources.push(found);
  }
  return sources;
}

/** A journal read into this computer's record of claims: its claims, and how many were new. */
export interface JournalTaken {
  path: string;
  held: number;
  added: number;
}

/**
 * Without a record-url: the named journals read into the record of claims of `place` (importJournal), so
 * `claims history` lists what 0.2.0 filed; every journal is read before the record is written.
 */
export async function journalsIntoRecord(
  place: RecordPlace,
  journals: string[],
  ctx: ImportContext,
  dryRun: boolean,
): Promise<{ record: string; taken: JournalTaken[] }> {
  const read: { path: string; keys: string[] }[] = [];
  for (const journal of journals) {
    const found = await journalSource(resolve(journal), ctx);
    read.push({ path: found?.file.path ?? resolve(journal), keys: found?.chunks.flatMap((c) => (c.intents ?? []).map((i) => i.key)) ?? [] });
  }
  const store = { origin: ctx.service.origin, storeId: ctx.service.storeId };
  const record = dryRun ? ClaimRecord.openSync({ place, store }) : await ClaimRecord.open({ place, store, lock: { waitMs: LOCK_WAIT_MS } });
  const taken: JournalTaken[] = [];
  try {
    for (const { path, keys } of read) {
      if (dryRun) {
        taken.push({ path, held: keys.length, added: record.imported.has(path) ? 0 : keys.filter((k) => record.lookup(k) === undefined).length });
        continue;
      }
      const reader = await JournalReader.snapshot(path, { service: ctx.service });
      try {
        taken.push({ path, held: keys.length, added: await importJournal(record, reader, ctx.service.profile, osUser(), hostName()) });
      } finally {
        await reader.closeReader();
      }
    }
  } finally {
    record.close();
  }
  return { record: record.path, taken };
}
