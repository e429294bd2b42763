/**
 * Reading a batch journal back: its sections (each under a header naming its service and store),
 * the entries of this service's sections into the indexes of journal-index.ts, and the notices a
 * run owes the user about the rest. Its lines are read under the one damage policy of a record of
 * actions (src/record/damage.ts): a torn last line is passed over (its row's `sending` entry, synced
 * before the request left, or the record of claims, holds the row), any other line that cannot be
 * read stops the run (exit 2, the line and byte named), and `claims repair --journal` sets it aside
 * with a copy (src/record/repair.ts). A `set-aside` line naming a row holds that row as uncertain.
 */
import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { UsageError } from '../core/errors.js';
import { HEX64 } from '../record/fields.js';
import { blockingDamage, type DamagedFileWords, type DamagedLine, DamagedRecordFileError } from '../record/damage.js';
import { eachLine, eachLineSync } from '../record/file-lines.js';
import {
  describeService,
  JOURNAL_HEADER,
  type JournalEntry,
  type JournalService,
  LEGACY_VERSION,
  NO_SERVICE,
  readService,
  sameService,
  statusCode,
} from './journal-format.js';
import { PriorIndex, rememberSimilar, SimilarIndex } from './journal-index.js';

/** What a journal holds for this run: the indexes of this service's entries, and what the notices say. */
export interface ReadJournal {
  prior: PriorIndex;
  similar: SimilarIndex;
  /** Entries of this service's sections. */
  entries: number;
  endsWithNewline: boolean;
  /** No byte yet: a new journal (its header is written on open). */
  empty: boolean;
  /** The last section is this service's (v3 header): a run appends without a new header. */
  lastIsOurs: boolean;
  /** Sections of other services or stores, by service, with their entry counts (not taken as filed). */
  foreign: { service: JournalService; entries: number }[];
  /** Entries of a section of the older format (no service recorded), taken as this service's. */
  legacyEntries: number;
  /** The service of the first header after the older format's section: the run that took it on. */
  legacyOwner?: JournalService;
  /** The file's id: its first header's `id`, else its `created` (a journal of 0.2.0); undefined for a new journal. */
  id?: string;
  /** The lines that cannot be read: only torn ones once the read returns (any other stops it). */
  damaged: DamagedLine[];
  /** Lines read (the last one's number). */
  lines: number;
}

/** What a journal that does not exist yet holds. */
export const emptyRead = (): ReadJournal => ({
  prior: new PriorIndex(),
  similar: new SimilarIndex(),
  entries: 0,
  endsWithNewline: true,
  empty: true,
  lastIsOurs: false,
  foreign: [],
  legacyEntries: 0,
  damaged: [],
  lines: 0,
});

/** How a damaged journal names itself in the error that stops a run (damage.ts DamagedRecordFileError). */
function journalWords(path: string): DamagedFileWords {
  return {
    what: 'journal',
    risk: 'a line opcli cannot read could be the record of a row already filed, and a run without it could file that row twice',
    repair: `Check the store's claims around the time of the damage (the merchant dashboard), then run \`opcli claims repair --journal ${path}\`: it keeps a copy and sets the line aside, and a row it still names is held as uncertain.`,
    detailsKey: 'journal',
  };
}

/** The start of an entry line, so a line cut short still names its row. */
const ENTRY_START = /^\{"key":"([0-9a-f]{16,})"/;

/**
 * Reads every complete line of the journal open as `handle`; the last outcome of each key wins.
 * The first line must be a header: of this format, whose sections each start with a header naming
 * their service and store (only entries of sections of `service` count: a journal of a sandbox
 * trial is no proof that the rows were filed in production), or of the older format (version 2, no
 * service: its entries count for any service, as before, since the file passed the checks of
 * batch-files.ts: yours, writable by you alone; a notice says so).
 * A journal of opcli 0.1.0 (keys that depended on line numbers) is refused; a line that cannot be
 * read stops the read (DamagedRecordFileError; `journalDamage` lists them for `repair`), never taken
 * for "nothing filed yet". Lines are split on bytes, so each entry's offset is known for `priorDetail`.
 */
export async function readJournal(handle: FileHandle, path: string, service: JournalService): Promise<ReadJournal> {
  let read = await readSections(handle, path, service);
  // The older format's entries belong to the service of the first run of this format that used the
  // journal (its header follows them): when that is another service, they are read again as foreign.
  if (read.legacyOwner && read.legacyEntries > 0 && !sameService(read.legacyOwner, service)) read = await readSections(handle, path, service, read.legacyOwner);
  const blocking = blockingDamage(read.damaged);
  if (blocking.length) throw new DamagedRecordFileError(path, blocking, journalWords(path));
  return read;
}

/** The damaged lines of the journal open as `fd` (torn ones too), read as a run reads them: what `repair` sets aside. */
export function journalDamage(fd: number, path: string): DamagedLine[] {
  const scan = new SectionScan(path, NO_SERVICE);
  eachLineSync(fd, (buffer, start, end, offset, complete, long) => (long ? scan.long(offset) : scan.line(buffer, start, end, offset, complete)));
  scan.end();
  return scan.read.damaged;
}

/** One pass over the journal's lines; `legacyOwner`: the older format's entries belong to that service. */
async function readSections(handle: FileHandle, path: string, service: JournalService, legacyOwner?: JournalService): Promise<ReadJournal> {
  const scan = new SectionScan(path, service, legacyOwner);
  const { size, endsWithNewline } = await eachLine(handle, (buffer, start, end, offset, complete, long) =>
    long ? scan.long(offset) : scan.line(buffer, start, end, offset, complete),
  );
  scan.end();
  scan.read.endsWithNewline = endsWithNewline;
  scan.read.empty = size === 0;
  return scan.read;
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

/** Whether a parsed line is one the journal holds: a header, an entry or a `set-aside` line (what a repaired journal must read as). */
export function journalLine(value: unknown): unknown {
  const e = value as ParsedLine | null;
  if (typeof e !== 'object' || e === null) return undefined;
  if (e.journal === JOURNAL_HEADER.journal) return e;
  if (e.type === 'set-aside' && typeof e.line === 'number') return e;
  return isEntry(e) ? e : undefined;
}

function isEntry(e: ParsedLine): boolean {
  return typeof e.key === 'string' && HEX64.test(e.key) && statusCode(e.status) !== undefined && typeof e.line === 'number';
}

/** The current section: whether its entries count for this service, and where they are counted when not. */
interface Section {
  counts: boolean;
  legacy: boolean;
  foreign?: { service: JournalService; entries: number };
}

/** The state of one pass over a journal's lines, fed one line at a time (`line`). */
export class SectionScan {
  readonly read = emptyRead();
  /** The number of the line being read (1-based), for messages. */
  lineNo = 0;
  /** The current section: undefined before the first header. */
  private section: Section | undefined;
  /** The lines `set-aside` lines name: a torn line a later run ended stays torn, not damage. */
  private readonly setAside = new Set<number>();

  constructor(
    private readonly path: string,
    private readonly service: JournalService,
    private readonly legacyOwner?: JournalService,
  ) {}

  /** A line that cannot be read: counted, and the read goes on so every such line is named. */
  private damage(byte: number, kind: DamagedLine['kind'], extra: Partial<DamagedLine> = {}): void {
    this.read.damaged.push({ line: this.lineNo, byte, kind, ...extra });
    // What follows a damaged first line counts, as it will once `repair` puts this service's header there.
    this.section ??= { counts: true, legacy: false };
  }

  /** A line longer than any entry (MAX_LINE_BYTES), torn or not: refused unread. */
  long(byte: number): void {
    this.lineNo++;
    this.damage(byte, 'long');
  }

  /** Takes one line (`complete`: a newline follows it; a torn last line is passed over). */
  line(buffer: Buffer, start: number, end: number, offset: number, complete: boolean): void {
    this.lineNo++;
    const text = buffer.toString('utf8', start, end);
    if (!text.trim()) return;
    const e = parse(text);
    const key = () => ENTRY_START.exec(text)?.[1];
    // CHOICE (docs/spec-choices.md#damaged-journal-lines): a torn last line is passed over; any other unreadable line stops the run until `repair`.
    if (text.includes('\u0000')) this.damage(offset, 'nul');
    else if (e === undefined || (e.journal === JOURNAL_HEADER.journal && !complete)) this.damage(offset, complete ? 'garbage' : 'torn', { key: key() });
    else if (e.journal === JOURNAL_HEADER.journal) this.header(e, offset);
    else if (e.type === 'set-aside' && typeof e.line === 'number') this.setAsideLine(e, offset);
    else if (!this.section) this.beforeHeader(e, offset);
    else if (isEntry(e)) this.entry(this.section, e as JournalEntry, offset);
    else this.damage(offset, complete ? 'garbage' : 'torn', { key: key() });
  }

  /** Once every line was read: a damaged line a `set-aside` line names (a torn line a later run ended) is torn. */
  end(): void {
    this.read.lines = this.lineNo;
    for (const d of this.read.damaged) if (d.kind === 'garbage' && this.setAside.has(d.line)) d.kind = 'torn';
    if (this.lineNo > 0 && !this.started && !this.read.damaged.length) this.read.damaged.push({ line: 1, byte: 0, kind: 'garbage' });
  }

  /** Whether a header was read. */
  get started(): boolean {
    return this.section !== undefined;
  }

  /** A header line: checks its version and starts its section. */
  private header(header: ParsedLine, offset: number): void {
    if (this.read.id === undefined) {
      const id = typeof header.id === 'string' ? header.id : typeof header.created === 'string' ? `created ${header.created}` : undefined;
      if (id !== undefined) this.read.id = id;
    }
    const { read } = this;
    const theirs = readService(header.service);
    const legacy = header.version === LEGACY_VERSION;
    if (header.version !== JOURNAL_HEADER.version && !legacy) {
      const newer = typeof header.version === 'number' && header.version > JOURNAL_HEADER.version;
      this.damage(offset, newer ? 'newer' : 'garbage', newer ? { version: header.version as number } : {});
    } else if (legacy ? this.lineNo !== 1 : !theirs) {
      // A header of the older format after the first line, or one without its service (origin and storeId).
      this.damage(offset, 'garbage');
    } else if (legacy) {
      // CHOICE (docs/spec-choices.md#journals-without-a-service): an older journal that is yours alone still protects its rows.
      this.section = this.legacyOwner ? { counts: false, legacy: true, foreign: this.foreignOf(this.legacyOwner) } : { counts: true, legacy: true };
      read.lastIsOurs = false;
    } else if (theirs) {
      if (this.section?.legacy && !read.legacyOwner) read.legacyOwner = theirs;
      const counts = sameService(theirs, this.service);
      this.section = { counts, legacy: false, foreign: counts ? undefined : this.foreignOf(theirs) };
      read.lastIsOurs = counts;
    }
  }

  /** A `set-aside` line: the line it names is no longer damage, and a row it names is held as uncertain. */
  private setAsideLine(e: ParsedLine, offset: number): void {
    this.setAside.add(e.line as number);
    if (this.section?.counts && typeof e.key === 'string' && HEX64.test(e.key)) this.read.prior.set(e.key, 'uncertain', offset);
  }

  /** A line before any header: a journal of opcli 0.1.0 is refused; else the line is damage (not a journal's header). */
  private beforeHeader(e: ParsedLine, offset: number): void {
    if (typeof e?.key === 'string' && typeof e.status === 'string' && typeof e.line === 'number') {
      throw new UsageError(
        `The journal ${this.path} was written by opcli 0.1.0, whose row keys depended on line numbers; this version cannot tell from it which rows were filed.`,
        "Nothing was sent. Each of its lines gives a row's line, status and sourceOrderId: remove the rows it shows filed (or uncertain) from the input, move the old journal aside, then run again.",
      );
    }
    this.damage(offset, 'garbage');
  }

  /** An entry: indexed when its section counts for this service, else counted for the notice. */
  private entry(section: Section, e: JournalEntry, offset: number): void {
    const { read } = this;
    if (!section.counts) {
      if (section.foreign) section.foreign.entries++;
      return;
    }
    if (section.legacy) read.legacyEntries++;
    read.prior.set(e.key, e.status, offset, e.tag);
    if (e.status === 'sending' && typeof e.sim === 'string') rememberSimilar(read.prior, read.similar, e.sim, e.key);
    read.entries++;
  }

  /** The count of entries of another service's sections. */
  private foreignOf(theirs: JournalService): { service: JournalService; entries: number } {
    let foreign = this.read.foreign.find((f) => sameService(f.service, theirs));
    if (!foreign) this.read.foreign.push((foreign = { service: theirs, entries: 0 }));
    return foreign;
  }
}

function parse(text: string): ParsedLine | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null ? (v as ParsedLine) : undefined;
  } catch {
    return undefined;
  }
}

/** What a journal is opened with: the run's service, and where its notices go. */
export interface JournalBinding {
  service?: JournalService;
  notice?: (text: string) => void;
}

/**
 * The notices of a journal read: sections of another service (while this service has none after
 * them: once a run has appended its own, later runs say nothing), and entries of the older format.
 * `run`: a run that writes (not a dry run).
 */
export function tellAbout(read: ReadJournal, path: string, binding: JournalBinding, stats: Stats, run: boolean): void {
  const notice = binding.notice;
  if (!notice) return;
  const ours = describeService(binding.service ?? NO_SERVICE);
  const appending = run && !read.empty && !read.lastIsOurs;
  for (const f of read.lastIsOurs ? [] : read.foreign.slice(0, 3)) {
    notice(
      `Notice: the journal ${path} holds ${f.entries} entr${f.entries === 1 ? 'y' : 'ies'} recorded against ${describeService(f.service)}, not ${ours}: they are no proof that a row was filed here, so a row only they record is sent as new${appending ? "; this run's entries go under a header of their own" : ''}.\n`,
    );
  }
  // Said once: the header this run writes after them takes them on for this service.
  if (read.legacyEntries > 0 && !read.legacyOwner) {
    notice(
      `Notice: the journal ${path} holds ${read.legacyEntries} entr${read.legacyEntries === 1 ? 'y' : 'ies'} of an older opcli, which did not record the service: as the file is yours and only you can write it (mode 0${(stats.mode & 0o777).toString(8)}), they are taken as filed against ${ours}, as before${appending ? ', and recorded so from now on' : ''}. If they were filed elsewhere (a trial against a sandbox), those rows were not filed here: move the journal aside and run again.\n`,
    );
  }
}
