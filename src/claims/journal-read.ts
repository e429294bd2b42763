/**
 * Reading a batch journal back: its sections (each under a header naming its service and store),
 * the entries of this service's sections into the indexes of journal-index.ts, and the notices a
 * run owes the user about the rest. A line that cannot be read refuses the whole journal (named
 * with its line number); only a torn last line (a crash mid-write) is skipped.
 */
import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { UsageError } from '../core/errors.js';
import { HEX64 } from '../record/fields.js';
import { MAX_LINE_BYTES } from '../record/damage.js';
import { eachLine } from '../record/file-lines.js';
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
});

const HINT_DAMAGED = 'opcli does not guess which rows a damaged journal filed. Restore it from a backup or fix the line named above; nothing was sent.';

/**
 * Reads every complete line of the journal open as `handle`; the last outcome of each key wins.
 * The first line must be a header: of this format, whose sections each start with a header naming
 * their service and store (only entries of sections of `service` count: a journal of a sandbox
 * trial is no proof that the rows were filed in production), or of the older format (version 2, no
 * service: its entries count for any service, as before, since the file passed the checks of
 * batch-files.ts: yours, writable by you alone; a notice says so).
 * A journal of opcli 0.1.0 (keys that depended on line numbers) or any line that cannot be read is
 * refused, never taken for "nothing filed yet". Only a torn last line (a crash mid-write, no newline
 * after it) is skipped. Lines are split on bytes, so each entry's offset is known for `priorDetail`.
 */
export async function readJournal(handle: FileHandle, path: string, service: JournalService): Promise<ReadJournal> {
  const read = await readSections(handle, path, service);
  // The older format's entries belong to the service of the first run of this format that used the
  // journal (its header follows them): when that is another service, they are read again as foreign.
  if (read.legacyOwner && read.legacyEntries > 0 && !sameService(read.legacyOwner, service)) return readSections(handle, path, service, read.legacyOwner);
  return read;
}

/** One pass over the journal's lines; `legacyOwner`: the older format's entries belong to that service. */
async function readSections(handle: FileHandle, path: string, service: JournalService, legacyOwner?: JournalService): Promise<ReadJournal> {
  const scan = new SectionScan(path, service, legacyOwner);
  const { size, endsWithNewline } = await eachLine(handle, (buffer, start, end, offset, complete, long) =>
    long ? scan.long() : scan.line(buffer, start, end, offset, complete),
  );
  if (size > 0 && !scan.started) {
    scan.lineNo = 1;
    throw scan.damaged('is not the header of an opcli claims journal');
  }
  scan.read.endsWithNewline = endsWithNewline;
  scan.read.empty = size === 0;
  return scan.read;
}

/** A line as parsed: an entry, or a header's fields. */
type ParsedLine = JournalEntry & { journal?: unknown; version?: unknown; service?: unknown; id?: unknown; created?: unknown };

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

  constructor(
    private readonly path: string,
    private readonly service: JournalService,
    private readonly legacyOwner?: JournalService,
  ) {}

  /** Whether a header was read. */
  get started(): boolean {
    return this.section !== undefined;
  }

  /** The error for a line that cannot be read: the journal is refused, nothing is sent. */
  damaged(why: string): UsageError {
    return new UsageError(`The journal ${this.path} cannot be read: line ${this.lineNo} ${why}.`, HINT_DAMAGED);
  }

  /** A line longer than any entry (MAX_LINE_BYTES), torn or not: refused unread. */
  long(): never {
    this.lineNo++;
    throw this.damaged(`is longer than ${MAX_LINE_BYTES / (1024 * 1024)} MiB, which no journal line opcli writes is`);
  }

  /** Takes one line (`complete`: a newline follows it; a torn last line that cannot be read is skipped). */
  line(buffer: Buffer, start: number, end: number, offset: number, complete: boolean): void {
    this.lineNo++;
    if (end <= start) {
      if (complete && this.lineNo > 1) throw this.damaged('is empty');
      return;
    }
    let e: ParsedLine;
    try {
      e = JSON.parse(buffer.toString('utf8', start, end));
    } catch {
      if (!complete) return; // a torn last line from a crash mid-write
      throw this.damaged('is not JSON');
    }
    if (e?.journal === JOURNAL_HEADER.journal) {
      if (complete) this.header(e);
      return;
    }
    if (!this.section) throw this.beforeHeader(e);
    if (typeof e?.key !== 'string' || !HEX64.test(e.key) || statusCode(e.status) === undefined || typeof e.line !== 'number') {
      if (!complete) return;
      throw this.damaged('is not a journal entry');
    }
    this.entry(this.section, e, offset);
  }

  /** A header line: checks its version and starts its section. */
  private header(header: { version?: unknown; service?: unknown; id?: unknown; created?: unknown }): void {
    if (this.read.id === undefined) {
      const id = typeof header.id === 'string' ? header.id : typeof header.created === 'string' ? `created ${header.created}` : undefined;
      if (id !== undefined) this.read.id = id;
    }
    if (header.version !== JOURNAL_HEADER.version && header.version !== LEGACY_VERSION) {
      throw new UsageError(
        `The journal ${this.path} is in format version ${String(header.version)}, which this opcli does not read.`,
        'Use the opcli version that wrote it.',
      );
    }
    const { read } = this;
    // CHOICE (docs/spec-choices.md#journals-without-a-service): an older journal that is yours alone still protects its rows.
    if (header.version === LEGACY_VERSION) {
      if (this.lineNo !== 1) throw this.damaged('is a header of the older format after the first line');
      this.section = this.legacyOwner ? { counts: false, legacy: true, foreign: this.foreignOf(this.legacyOwner) } : { counts: true, legacy: true };
      read.lastIsOurs = false;
      return;
    }
    const theirs = readService(header.service);
    if (!theirs) throw this.damaged('is a header without its service (origin and storeId)');
    if (this.section?.legacy && !read.legacyOwner) read.legacyOwner = theirs;
    const counts = sameService(theirs, this.service);
    this.section = { counts, legacy: false, foreign: counts ? undefined : this.foreignOf(theirs) };
    read.lastIsOurs = counts;
  }

  /** Why a line before any header is refused: a journal of opcli 0.1.0, or not a journal. */
  private beforeHeader(e: ParsedLine): UsageError {
    if (typeof e?.key === 'string' && typeof e.status === 'string' && typeof e.line === 'number') {
      return new UsageError(
        `The journal ${this.path} was written by opcli 0.1.0, whose row keys depended on line numbers; this version cannot tell from it which rows were filed.`,
        "Nothing was sent. Each of its lines gives a row's line, status and sourceOrderId: remove the rows it shows filed (or uncertain) from the input, move the old journal aside, then run again.",
      );
    }
    return this.damaged('is not the header of an opcli claims journal');
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
