/**
 * The batch journal of opcli 0.2.0 (v2/v3), read only (needed for upgrades): a JSONL file beside
 * the input with, for each row key, its `sending` entry and then its outcome; read into the record
 * of claims once (importJournal: by the batch, which picks the journals, and by `record import`).
 * Each section's header names the service and store its rows were filed with
 * (docs/guides/batch-claims.md): only this run's count as proof that a row was filed.
 * Lines are read under the damage policy of src/record/damage.ts; `claims repair --journal` sets a
 * damaged one aside (journalRepairTarget), and a `set-aside` line naming a row holds it as
 * uncertain.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { acquireFileLock } from '../config/lock.js';
import { openPrivateFile } from '../config/private-file.js';
import { osUser } from '../config/user-name.js';
import { OpcliError, UsageError } from '../core/errors.js';
import { blockingDamage, type DamagedLine, DamagedRecordFileError } from '../record/damage.js';
import { HEX64 } from './record-format.js';
import { eachLine, lineAt } from '../record/file-lines.js';
import { half, KeyTable } from '../record/key-table.js';
import { setAsideLine } from '../record/log.js';
import { actOn, claimMayExist, claimWeight, endAttempt, fromFlags, type Standing, standingFlags, startAttempt } from '../record/outcome.js';
import type { RepairTarget } from '../record/repair.js';
import { JOURNAL_ROLE, openBatchFile } from './batch-files.js';
import type { OfflineClaim } from '../schemas.js';
import type { ClaimRecord, IntentLine, OutcomeLine } from './record.js';

/** `sending`: the request may be on its way (left by a crash, read as uncertain); `not_sent`: provably never created. */
export type JournalStatus = 'sending' | 'filed' | 'rejected' | 'uncertain' | 'not_sent';

export interface JournalEntry {
  key: string;
  line: number;
  status: JournalStatus;
  at: string;
  sourceOrderId?: string;
  reason?: string;
  /** `sending` only: the "looks like" fingerprint (plan.ts `similarity`). */
  sim?: string;
  /** `sending` only: the 32-bit tag of the row's content hash (tells a changed row under one `--key`). */
  tag?: number;
  /** `sending` only: the claim in its robust form (plan.ts robustJson). */
  claim?: unknown;
}

/** The service and store a journal section's rows were filed with. */
export interface JournalService {
  /** The API base URL's origin (scheme://host:port), or null when none was set. */
  origin: string | null;
  /** The store the profile files for, or null when the rows carry it. */
  storeId: string | null;
  /** The profile's name: for the person reading the file, never compared. */
  profile?: string;
}

/** What a header line names itself; version 2 (0.2.0 before the service was recorded) is still read. */
const HEADER = { journal: 'opcli claims', version: 3, legacy: 2 } as const;

/** The service of a run without a profile (tests of the journal alone). */
const NO_SERVICE: JournalService = { origin: null, storeId: null };

/** The base URL's origin, as a header records it (null when there is none or it is not a URL). */
export function serviceOrigin(baseUrl: string | undefined): string | null {
  if (!baseUrl) return null;
  try {
    return new URL(baseUrl).origin;
  } catch {
    return null;
  }
}

/** Whether two sections were filed with the same service and store (the profile's name aside). */
const sameService = (a: JournalService, b: JournalService) => a.origin === b.origin && a.storeId === b.storeId;

/** "https://api.example.com, store store_1 (profile prod)". */
function describeService(s: JournalService): string {
  return `${s.origin ?? '(no base URL)'}, store ${s.storeId ?? '(none: rows carry it)'}${s.profile ? ` (profile ${s.profile})` : ''}`;
}

/** A header's service, when it is one (origin and storeId: a string or null each). */
function readService(value: unknown): JournalService | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const ok = (x: unknown) => x === null || typeof x === 'string';
  if (!ok(v.origin) || !ok(v.storeId)) return undefined;
  return { origin: v.origin as string | null, storeId: v.storeId as string | null, profile: typeof v.profile === 'string' ? v.profile : undefined };
}

const STATUS_CODES: readonly JournalStatus[] = ['sending', 'filed', 'rejected', 'uncertain', 'not_sent'];
const STATUS_CODE = new Map(STATUS_CODES.map((s, i) => [s, i + 1]));
const statusOfCode = (code: number): JournalStatus => STATUS_CODES[code - 1] as JournalStatus;

/** What the journal remembers of a row from earlier runs. */
export interface PriorOutcome {
  status: JournalStatus;
  /** Byte offset of the last entry of the key, where `priorDetail` reads its sourceOrderId and reason. */
  offset: number;
  /** Byte offset of its last `sending` entry (-1 when none): its line, date, content tag and claim. */
  sendOffset: number;
  /** The content tag of that entry (0 when none). */
  tag: number;
}

/** The last outcome of each key, in a key-table.ts table (30 bytes a key); the entries stay in the file, read back by offset. */
export class PriorIndex {
  private readonly table = new KeyTable(1024, (n) => ({
    /** 1 + the status's index in STATUS_CODES. */
    status: new Uint8Array(n),
    offset: new Float64Array(n),
    /** 1 + the byte offset of the key's last `sending` entry (0: none). */
    sendOffset: new Float64Array(n),
    tag: new Uint32Array(n),
    /** standingFlags (src/record/outcome.ts). */
    flags: new Uint8Array(n),
  }));

  get size(): number {
    return this.table.size;
  }

  /** Records an entry: `sending` starts an attempt, an outcome settles it, by the one rule of src/record/outcome.ts. */
  set(key: string, status: JournalStatus, offset: number, tag?: number): void {
    if (!STATUS_CODE.has(status) || !HEX64.test(key)) return;
    const i = this.table.slot(key);
    const c = this.table.columns;
    const before: Standing<JournalStatus> | undefined = this.table.fresh
      ? undefined
      : { state: statusOfCode(c.status[i] as number), ...fromFlags(c.flags[i] as number) };
    const after =
      status === 'sending'
        ? startAttempt(before, status, undefined, claimWeight)
        : (endAttempt(before, status, undefined, claimWeight) ?? { state: status, settled: true, earlierMaybe: false });
    if (after === before) return;
    c.status[i] = STATUS_CODE.get(after.state) as number;
    c.flags[i] = standingFlags(after);
    c.offset[i] = offset;
    if (status === 'sending') {
      c.sendOffset[i] = offset + 1;
      c.tag[i] = (tag ?? 0) >>> 0;
    }
  }

  get(key: string): PriorOutcome | undefined {
    const i = HEX64.test(key) ? this.table.find(key) : -1;
    if (i < 0) return undefined;
    const c = this.table.columns;
    return {
      status: actOn({ state: statusOfCode(c.status[i] as number), ...fromFlags(c.flags[i] as number) }, 'uncertain', claimWeight),
      offset: c.offset[i] as number,
      sendOffset: (c.sendOffset[i] as number) - 1,
      tag: c.tag[i] as number,
    };
  }
}

/** For each "looks like" fingerprint, the key (its first 64 bits) of the last row sent with it, preferring one whose claim may exist. */
class SimilarIndex {
  private readonly table = new KeyTable(256, (n) => ({ khi: new Uint32Array(n), klo: new Uint32Array(n) }));

  set(sim: string, key: string, prior: PriorIndex): void {
    if (!HEX64.test(sim) || !HEX64.test(key)) return;
    const i = this.table.slot(sim);
    if (!this.table.fresh) {
      const existing = this.keyAt(i);
      const p = prior.get(existing);
      if (p !== undefined && claimMayExist(p.status) && existing !== key.slice(0, 16)) return;
    }
    this.table.columns.khi[i] = half(key, 0);
    this.table.columns.klo[i] = half(key, 8);
  }

  get(sim: string): string | undefined {
    const i = HEX64.test(sim) ? this.table.find(sim) : -1;
    return i < 0 ? undefined : this.keyAt(i);
  }

  private keyAt(i: number): string {
    const c = this.table.columns;
    return `${(c.khi[i] as number).toString(16).padStart(8, '0')}${(c.klo[i] as number).toString(16).padStart(8, '0')}`;
  }
}

/** A line as parsed: an entry, a header's fields, or a `set-aside` line's (src/record/log.ts setAsideLine). */
type ParsedLine = Omit<JournalEntry, 'line'> & {
  line: unknown;
  journal?: unknown;
  version?: unknown;
  service?: unknown;
  id?: unknown;
  created?: unknown;
  type?: unknown;
};

const isEntry = (e: ParsedLine): boolean => typeof e.key === 'string' && HEX64.test(e.key) && STATUS_CODE.has(e.status) && typeof e.line === 'number';

/** Whether a parsed line is one the journal holds: a header, an entry or a `set-aside` line (what a repaired journal must read as). */
function journalLine(value: unknown): unknown {
  const e = value as ParsedLine | null;
  if (typeof e !== 'object' || e === null) return undefined;
  if (e.journal === HEADER.journal || (e.type === 'set-aside' && typeof e.line === 'number')) return e;
  return isEntry(e) ? e : undefined;
}

function parse(text: string): ParsedLine | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null ? (v as ParsedLine) : undefined;
  } catch {
    return undefined;
  }
}

/** The start of an entry line, so a line cut short still names its row. */
const ENTRY_START = /^\{"key":"([0-9a-f]{16,})"/;

/** The current section: whether its entries count for this service, and where they are counted when not. */
interface Section {
  counts: boolean;
  legacy: boolean;
  foreign?: { service: JournalService; entries: number };
}

/** What one pass over a journal found for this service: its entries' indexes, and what the notices say. */
class JournalScan {
  readonly prior = new PriorIndex();
  readonly similar = new SimilarIndex();
  /** Entries of this service's sections. */
  entries = 0;
  /** The last section is this service's: the notices of other services' sections are not owed. */
  lastIsOurs = false;
  /** Sections of other services or stores, by service, with their entry counts (not taken as filed). */
  readonly foreign: { service: JournalService; entries: number }[] = [];
  /** Entries of a section of the older format (no service recorded), taken as this service's. */
  legacyEntries = 0;
  /** The service of the first header after the older format's section: the run that took it on. */
  legacyOwner?: JournalService;
  /** The file's id: its first header's `id`, else its `created` (a journal of 0.2.0's first versions). */
  id?: string;
  /** The lines that cannot be read, torn ones too. */
  readonly damaged: DamagedLine[] = [];
  private lineNo = 0;
  /** The current section: undefined before the first header. */
  private section: Section | undefined;
  /** The lines `set-aside` lines name: a torn line a later run ended stays torn, not damage. */
  private readonly setAside = new Set<number>();

  /** `owner`: the older format's entries belong to that service (read as foreign when it is not this one). */
  constructor(
    private readonly path: string,
    private readonly service: JournalService,
    private readonly owner?: JournalService,
  ) {}

  /** Reads every line of the journal open as `fd` (lines are split on bytes, so each entry's offset is known). */
  scan(fd: number): this {
    eachLine(fd, (buffer, start, end, offset, complete, long) => {
      this.lineNo++;
      if (long) this.damage(offset, 'long');
      else this.line(buffer.toString('utf8', start, end), offset, complete);
    });
    for (const d of this.damaged) if (d.kind === 'garbage' && this.setAside.has(d.line)) d.kind = 'torn';
    if (this.lineNo > 0 && !this.section && !this.damaged.length) this.damaged.push({ line: 1, byte: 0, kind: 'garbage' });
    return this;
  }

  /** A line that cannot be read: counted, and the read goes on so every such line is named. */
  private damage(byte: number, kind: DamagedLine['kind'], extra: Partial<DamagedLine> = {}): void {
    this.damaged.push({ line: this.lineNo, byte, kind, ...extra });
    // What follows a damaged first line counts, as it will once `repair` puts this service's header there.
    this.section ??= { counts: true, legacy: false };
  }

  private line(text: string, offset: number, complete: boolean): void {
    if (!text.trim()) return;
    const e = parse(text);
    const torn = () => this.damage(offset, complete ? 'garbage' : 'torn', { key: ENTRY_START.exec(text)?.[1] });
    // CHOICE (docs/spec-choices.md#damaged-journal-lines): a torn last line is passed over; any other unreadable line stops the run until `repair`.
    if (text.includes('\u0000')) this.damage(offset, 'nul');
    else if (e === undefined || (e.journal === HEADER.journal && !complete)) torn();
    else if (e.journal === HEADER.journal) this.header(e, offset);
    else if (e.type === 'set-aside' && typeof e.line === 'number') {
      this.setAside.add(e.line);
      if (this.section?.counts && typeof e.key === 'string' && HEX64.test(e.key)) this.prior.set(e.key, 'uncertain', offset);
    } else if (!this.section) this.beforeHeader(e, offset);
    else if (isEntry(e)) this.entry(this.section, e as JournalEntry, offset);
    else torn();
  }

  /** A header line: checks its version and starts its section. */
  private header(header: ParsedLine, offset: number): void {
    this.id ??= typeof header.id === 'string' ? header.id : typeof header.created === 'string' ? `created ${header.created}` : undefined;
    const theirs = readService(header.service);
    const legacy = header.version === HEADER.legacy;
    if (header.version !== HEADER.version && !legacy) {
      const newer = typeof header.version === 'number' && header.version > HEADER.version;
      this.damage(offset, newer ? 'newer' : 'garbage', newer ? { version: header.version as number } : {});
    } else if (legacy ? this.lineNo !== 1 : !theirs) {
      // A header of the older format after the first line, or one without its service (origin and storeId).
      this.damage(offset, 'garbage');
    } else if (legacy) {
      // CHOICE (docs/spec-choices.md#journals-without-a-service): an older journal that is yours alone still protects its rows.
      this.section = this.owner ? { counts: false, legacy: true, foreign: this.foreignOf(this.owner) } : { counts: true, legacy: true };
      this.lastIsOurs = false;
    } else if (theirs) {
      if (this.section?.legacy && !this.legacyOwner) this.legacyOwner = theirs;
      const counts = sameService(theirs, this.service);
      this.section = { counts, legacy: false, foreign: counts ? undefined : this.foreignOf(theirs) };
      this.lastIsOurs = counts;
    }
  }

  /** A line before any header: a journal of opcli 0.1.0 is refused; else the line is damage (not a journal's header). */
  private beforeHeader(e: ParsedLine, offset: number): void {
    if (typeof e.key === 'string' && typeof e.status === 'string' && typeof e.line === 'number') {
      throw new UsageError(
        `The journal ${this.path} was written by opcli 0.1.0, whose row keys depended on line numbers; this version cannot tell from it which rows were filed.`,
        "Nothing was sent. Each of its lines gives a row's line, status and sourceOrderId: remove the rows it shows filed (or uncertain) from the input, move the old journal aside, then run again.",
      );
    }
    this.damage(offset, 'garbage');
  }

  /** An entry: indexed when its section counts for this service, else counted for the notice. */
  private entry(section: Section, e: JournalEntry, offset: number): void {
    if (!section.counts) {
      if (section.foreign) section.foreign.entries++;
      return;
    }
    if (section.legacy) this.legacyEntries++;
    this.prior.set(e.key, e.status, offset, e.tag);
    if (e.status === 'sending' && typeof e.sim === 'string') this.similar.set(e.sim, e.key, this.prior);
    this.entries++;
  }

  /** The count of entries of another service's sections. */
  private foreignOf(theirs: JournalService): { service: JournalService; entries: number } {
    let foreign = this.foreign.find((f) => sameService(f.service, theirs));
    if (!foreign) this.foreign.push((foreign = { service: theirs, entries: 0 }));
    return foreign;
  }
}

/**
 * Reads the journal open as `fd` for `service`: the last outcome of each key wins. Version 2
 * entries (no service) count for any service until a version 3 header follows them: they are then
 * that header's, read again as foreign when it is another.
 */
function readJournal(fd: number, path: string, service: JournalService): JournalScan {
  let read = new JournalScan(path, service).scan(fd);
  if (read.legacyOwner && read.legacyEntries > 0 && !sameService(read.legacyOwner, service)) read = new JournalScan(path, service, read.legacyOwner).scan(fd);
  const blocking = blockingDamage(read.damaged);
  if (blocking.length) {
    throw new DamagedRecordFileError(path, blocking, {
      what: 'journal',
      risk: 'a line opcli cannot read could be the record of a row already filed, and a run without it could file that row twice',
      repair: `Check the store's claims around the time of the damage (the merchant dashboard), then run \`opcli claims repair --journal ${path}\`: it keeps a copy and sets the line aside, and a row it still names is held as uncertain.`,
      detailsKey: 'journal',
    });
  }
  return read;
}

/** What a journal is opened with: the run's service, and where its notices go. */
export interface JournalBinding {
  service?: JournalService;
  notice?: (text: string) => void;
}

/** The notices of a read: sections of another service (unless the last is this one's), older entries taken as this service's. */
function tellAbout(read: JournalScan, path: string, binding: JournalBinding, stats: Stats): void {
  const notice = binding.notice;
  if (!notice) return;
  const ours = describeService(binding.service ?? NO_SERVICE);
  for (const f of read.lastIsOurs ? [] : read.foreign.slice(0, 3)) {
    notice(
      `Notice: the journal ${path} holds ${f.entries} entr${f.entries === 1 ? 'y' : 'ies'} recorded against ${describeService(f.service)}, not ${ours}: they are no proof that a row was filed here, so a row only they record is sent as new.\n`,
    );
  }
  if (read.legacyEntries > 0 && !read.legacyOwner) {
    notice(
      `Notice: the journal ${path} holds ${read.legacyEntries} entr${read.legacyEntries === 1 ? 'y' : 'ies'} of an older opcli, which did not record the service: as the file is yours and only you can write it (mode 0${(stats.mode & 0o777).toString(8)}), they are taken as filed against ${ours}, as before. If they were filed elsewhere (a trial against a sandbox), those rows were not filed here: move the journal aside and run again.\n`,
    );
  }
}

/** What earlier runs recorded, read from a journal: the outcomes of this service's sections, and the entries behind them by offset. */
export class JournalReader {
  /** Number of entries read back from earlier runs (of this service's sections). */
  readonly priorEntries: number;
  /** The file's id (its first header's): a journal made again has another. */
  readonly id: string | undefined;

  private constructor(
    readonly path: string,
    /** The journal, read by offset (undefined: no journal). */
    private readonly source: FileHandle | undefined,
    private readonly read: JournalScan | undefined,
  ) {
    this.priorEntries = read?.entries ?? 0;
    this.id = read?.id;
  }

  /** Reads the journal at `path`: a missing journal reads as empty; one that is a link, another user's or others can write is refused. */
  static async snapshot(path: string, binding: JournalBinding = {}): Promise<JournalReader> {
    const opened = await openBatchFile(path, JOURNAL_ROLE, 'read');
    if (!opened) return new JournalReader(path, undefined, undefined);
    try {
      const read = readJournal(opened.handle.fd, path, binding.service ?? NO_SERVICE);
      tellAbout(read, path, binding, opened.stats);
      return new JournalReader(path, opened.handle, read);
    } catch (error) {
      await opened.handle.close().catch(() => {});
      throw error;
    }
  }

  priorOutcome(key: string): PriorOutcome | undefined {
    return this.read?.prior.get(key);
  }

  /** The earlier row that `sim` looks like and whose claim exists or may exist (filed, uncertain, or sent with no answer), with its outcome. */
  similarTo(sim: string | undefined): PriorOutcome | undefined {
    const key = sim ? this.read?.similar.get(sim) : undefined;
    const prior = key ? this.priorOutcome(key) : undefined;
    return prior && claimMayExist(prior.status) && prior.sendOffset >= 0 ? prior : undefined;
  }

  /** The sourceOrderId and reason of an earlier outcome, read back from the journal at its offset (the index keeps only the status). */
  async priorDetail(prior: PriorOutcome): Promise<{ sourceOrderId?: string; reason?: string }> {
    const e = await this.entryAt(prior.offset);
    return { sourceOrderId: e?.sourceOrderId, reason: e?.reason };
  }

  /** The entry that starts at a byte offset of the journal (undefined when it cannot be read). */
  async entryAt(offset: number): Promise<Partial<JournalEntry> | undefined> {
    const text = offset < 0 || !this.source ? undefined : lineAt(this.source.fd, offset);
    return text === undefined ? undefined : (parse(text) as Partial<JournalEntry> | undefined);
  }

  async closeReader(): Promise<void> {
    await this.source?.close().catch(() => {});
  }
}

/** The journal as `claims repair --journal` repairs it (src/record/repair.ts); a damaged first line becomes a header of `service`. */
export function journalRepairTarget(path: string, service: JournalService, now: () => number): RepairTarget {
  return {
    path,
    what: 'journal',
    command: `opcli claims repair --journal ${path}`,
    withLock: async (fn) => {
      const lock = await acquireFileLock(dirname(path), basename(path), {
        waitMs: 0,
        busy: (holder) =>
          new OpcliError(`Another opcli run is using the journal ${path}. Its lock is held by ${holder}.`, {
            hint: 'Run it again once the other has finished.',
          }),
      });
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
        return new JournalScan(path, NO_SERVICE).scan(fd).damaged;
      } finally {
        closeSync(fd);
      }
    },
    client: { version: 1, parse: journalLine },
    setAside: (d, reason, at) => {
      if (d.line !== 1) return setAsideLine(d, reason, at, osUser());
      const header = { journal: HEADER.journal, version: HEADER.version, created: new Date(now()).toISOString(), id: randomBytes(8).toString('hex'), service };
      return JSON.stringify(header);
    },
  };
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
  /** The claim's keys and words, as a batch row's intent has them (plan.ts). */
  keys: Pick<typeof import('./plan.js'), 'hashOfRobust' | 'itemWords' | 'recordSimilarity' | 'robustJson'>;
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
  const key = tag ? by.keys.hashOfRobust(by.keys.robustJson(claim)) : e.key;
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
      sim: by.keys.recordSimilarity(claim),
      email: typeof claim.customer?.email === 'string' ? claim.customer.email : undefined,
      item: claim.item ? by.keys.itemWords(claim) : undefined,
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
  // Imported here, not at the top: `claims repair` and `claims history` load this file but read no journal in, so they load no planner.
  const keys = await import('./plan.js');
  // Opened again the checked way (no link, no FIFO, a regular file of yours): it may have been swapped since.
  const opened = await openBatchFile(journal.path, JOURNAL_ROLE, 'read');
  if (!opened) return 0;
  const by: Importer = { record, journal, keys, fd: opened.handle.fd, profile, user, host };
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
