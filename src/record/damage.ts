/**
 * Reading an append-only record of actions that moved money, where a line that cannot be read is
 * never skipped in silence (it could be a payment, and skipping it would pay again). A line that fails
 * its schema is classed, so the message can say what to do:
 * - `newer`: a newer format version (`"v"` above this opcli's): upgrade;
 * - `nul`: NUL bytes, what a crash leaves when the file grew but its data never reached the disk;
 * - `torn`: the last line cut short (no newline) yet naming its action, or such a line a later write
 *   set aside: the only damage passed over, its action then `uncertain`, never absent;
 * - `long`: over MAX_LINE_BYTES: refused unread (a pass over its bytes, never that much memory);
 * - `chain`: not naming the hash of the line before it (chain.ts): a line was removed, changed or inserted;
 * - `garbage`: anything else.
 */
import * as z from 'zod';
import { ExitCode, OpcliError } from '../core/errors.js';
import { ChainCheck } from './chain.js';

/** Why a line cannot be read. */
type DamageKind = 'newer' | 'nul' | 'torn' | 'long' | 'garbage' | 'chain';

/** The longest line a record or journal may hold (1 MiB): opcli's own lines are a few hundred bytes. */
export const MAX_LINE_BYTES = 1024 * 1024;

/** What happened to a torn line, after "line N" / "Line N of the ledger": its action is uncertain. */
export const TORN_REASON = 'was cut short by an interrupted write';

/** A line that cannot be read, with what can still be told about it. */
export interface DamagedLine {
  line: number;
  /** Where the line starts in the file. */
  byte?: number;
  kind: DamageKind;
  /** For a torn line: the key and the id of the action it recorded, read from its beginning. */
  key?: string;
  issuance?: string;
  /** The version a `newer` line declares. */
  version?: number;
}

/** The fields of every action's line, the first three first in this order, so a line cut short still names its action (recordStart). */
export const ACTION_START = { v: z.literal(1), issuance: z.string(), key: z.string(), at: z.string() };

/** Who wrote a line, as the OS numbers users (chain.ts; none in lines of 0.2.0). */
export const WRITER_UID = z.number().int().nullable().optional();

/** The start every record line of format `version` has: `{"v":1,"issuance":"…","key":"…"`. */
function recordStart(version: number): RegExp {
  return new RegExp(`^\\{"v":${version},"issuance":"((?:[^"\\\\]|\\\\.)*)","key":"((?:[^"\\\\]|\\\\.)*)"`);
}

/** One line's record by the schema, or what is wrong with it (`last`: no newline after it, so it may be `torn`). */
function readRecordLine<T>(line: string, number: number, last: boolean, { version, parse }: LineSchema<T>): { record: T } | { damaged: DamagedLine } {
  if (line.includes('\u0000')) return { damaged: { line: number, kind: 'nul' } };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    value = undefined;
  }
  if (value !== undefined) {
    const record = parse(value);
    if (record !== undefined) return { record };
    const v = (value as { v?: unknown } | null)?.v;
    if (typeof v === 'number' && v > version) return { damaged: { line: number, kind: 'newer', version: v } };
  }
  // A line cut short keeps its beginning: the action's id and key come first in every record.
  const begun = value === undefined ? recordStart(version).exec(line) : null;
  const unquote = (text: string | undefined) => parseText((v) => v as string, `"${text}"`);
  const issuance = begun ? unquote(begun[1]) : undefined;
  const key = begun ? unquote(begun[2]) : undefined;
  if (begun && issuance !== undefined && key !== undefined) return { damaged: { line: number, kind: last ? 'torn' : 'garbage', key, issuance } };
  return { damaged: { line: number, kind: 'garbage' } };
}

/** A line's text parsed by a schema's `parse` (undefined: no text, not JSON, or not a record of this version). */
export function parseText<T>(parse: (value: unknown) => T | undefined, text: string | undefined): T | undefined {
  try {
    return text ? parse(JSON.parse(text)) : undefined;
  } catch {
    return undefined;
  }
}

/** How a record's lines read: the format version this opcli reads, their schema, and the line a set-aside names (a client's, log.ts RecordClient). */
export interface LineSchema<T> {
  version: number;
  parse(value: unknown): T | undefined;
  setAsideOf?(record: T): number | undefined;
  /** The record's header: its first line, and no other (a line of it elsewhere, or none first, is damage). */
  isHeader?(record: T): boolean;
  /** A header of another owner's record (another store's: a file copied or renamed): damage on line 1 too. */
  foreign?(record: T): boolean;
}

/** The one damage policy, line by line: each line parsed by the schema, classed when it cannot be, checked against the chain (chain.ts). */
export class LineCheck<T> {
  readonly damaged: DamagedLine[] = [];
  readonly chain: ChainCheck;
  private readonly setAside = new Set<number>();

  /** `after`: the hash of the line the read goes on from, when it does not start at the file's start (chain.ts). */
  constructor(
    private readonly schema: LineSchema<T>,
    after?: string,
  ) {
    this.chain = new ChainCheck(after);
  }

  /** Line `number` (1-based), starting at byte `byte`; `complete`: a newline follows it; `long`: over MAX_LINE_BYTES, not read. Its record, or undefined. */
  take(text: string, number: number, byte: number, complete: boolean, long = false): T | undefined {
    if (long) {
      this.damaged.push({ line: number, byte, kind: 'long' });
      // Its hash cannot be known: the next line is not held to it.
      this.chain.skip();
      return undefined;
    }
    if (!text.trim()) return undefined;
    const read = readRecordLine(text, number, !complete, this.schema);
    const broken = this.chain.take(text, number, complete);
    if ('damaged' in read) {
      this.damaged.push({ ...read.damaged, byte });
      return undefined;
    }
    if (broken) this.damaged.push({ ...broken, byte, ...named(read.record) });
    const aside = this.schema.setAsideOf?.(read.record);
    if (aside !== undefined) this.setAside.add(aside);
    const header = this.schema.isHeader?.(read.record);
    if (header !== undefined && (header !== (number === 1) || this.schema.foreign?.(read.record))) {
      this.damaged.push({ line: number, byte, kind: 'garbage' });
      return undefined;
    }
    return read.record;
  }

  /** The damaged lines, once every line was taken: one a `set-aside` record names (a torn line a later write ended) is `torn`, not garbage. */
  end(): DamagedLine[] {
    for (const d of this.damaged) if (d.kind === 'garbage' && d.key !== undefined && this.setAside.has(d.line)) d.kind = 'torn';
    return this.damaged;
  }
}

/** The key and action id of a record that broke the chain, so that setting it aside keeps its action uncertain. */
function named(record: unknown): { key?: string; issuance?: string } {
  const r = record as { key?: unknown; issuance?: unknown };
  return { key: typeof r.key === 'string' ? r.key : undefined, issuance: typeof r.issuance === 'string' ? r.issuance : undefined };
}

/** The damaged lines that stop anything that moves money: all but torn ones, whose action is `uncertain`. */
export function blockingDamage(damaged: DamagedLine[]): DamagedLine[] {
  return damaged.filter((d) => d.kind !== 'torn');
}

/** A damaged line in words: what it is and what happened to it. */
export function describeDamage(d: DamagedLine): string {
  switch (d.kind) {
    case 'newer':
      return `line ${d.line} was written by a newer version of opcli (format ${d.version})`;
    case 'nul':
      return `line ${d.line} holds NUL bytes (what a crash or a full disk leaves when the data never reached the disk)`;
    case 'torn':
      return `line ${d.line} ${TORN_REASON}`;
    case 'long':
      return `line ${d.line} is longer than ${MAX_LINE_BYTES / (1024 * 1024)} MiB, which no record opcli writes is`;
    case 'garbage':
      return `line ${d.line} is not a record opcli can read`;
    case 'chain':
      return `line ${d.line} does not follow the line before it (the hash it names is not that line's: a line before it was removed, changed or inserted)`;
  }
}

/** The first damaged line described, and how many more there are (up to five named): the start of a damaged file's error. */
function describeDamaged(lines: DamagedLine[]): string {
  const first = lines[0] as DamagedLine;
  const rest = lines.slice(1);
  const named = rest
    .slice(0, 5)
    .map((d) => d.line)
    .join(', ');
  return `${describeDamage(first)}${rest.length ? ` (and ${rest.length} more line(s): ${named}${rest.length > 5 ? ', …' : ''})` : ''}`;
}

/** How a record names itself everywhere: a damaged line's refusal (below), a file that shrank (witness.ts), its repair (repair.ts). */
export interface RecordWords {
  /** "record of claims", "gift card ledger". */
  what: string;
  /** Why nothing was sent: "a line opcli cannot read could be …, and … without it could … twice". */
  risk: string;
  /** What to do, for damage a repair can set aside. */
  repair: string;
  /** The name of the file's path in the error's JSON details. */
  detailsKey: string;
  /** The command that repairs it: "opcli claims repair". */
  command: string;
}

/** A record of actions that cannot be read safely: nothing may be filed or paid until it is repaired (exit 2). */
export class DamagedRecordFileError extends OpcliError {
  constructor(
    readonly path: string,
    readonly lines: DamagedLine[],
    words: Omit<RecordWords, 'command'>,
  ) {
    const first = lines[0];
    const at = first?.byte === undefined ? '' : ` Line ${first.line} starts at byte ${first.byte} of the file.`;
    super(`The ${words.what} ${path} cannot be read: ${describeDamaged(lines)}. Nothing was sent: ${words.risk}.${at}`, {
      exitCode: ExitCode.usage,
      hint:
        lines[0]?.kind === 'newer' ? 'Upgrade opcli to the version that wrote it (npm install -g opcli), or use that version on this computer.' : words.repair,
      details: { [words.detailsKey]: path, lines: lines.map((d) => ({ line: d.line, byte: d.byte, kind: d.kind })) },
    });
  }
}
