/**
 * Who wrote each line of a record of business actions, and the chain that shows a line removed,
 * changed or inserted (in a team's record-dir every member can write the file). Every line opcli
 * writes ends with `"uid":<the writer's OS uid>,"prev":"<sha256 of the previous non-blank line>"`.
 *
 * CHOICE (docs/spec-choices.md#record-chain): lines of 0.2.0 have neither; the chain starts at the
 * first line that has one, which names the sha256 of every line before it (each followed by a
 * newline), and every line after it must carry it. A break stops money like a damaged line. Anyone
 * who can write the file can recompute a chain: what shows a rewrite is each member's witness (witness.ts).
 *
 * The uid is what the writer says (POSIX keeps no author per line): the author is shown as the OS
 * names that uid, the line's own `user` text only beside it when they differ.
 */
import { createHash, hash } from 'node:crypto';
import { fstatSync, readSync } from 'node:fs';
import { userName } from '../config/user-name.js';

/** The `prev` of a file's first line: the hash of no bytes. */
export const NO_LINE = createHash('sha256').digest('hex');

/** The hash a line's successor names: sha256 of its bytes (UTF-8, without the newline). */
export function lineHash(line: string | Buffer): string {
  // The one-shot hash (Node 20.12+) costs a third of a Hash object's per line: a record is read whole at each batch's start.
  return hash('sha256', line);
}

const TAIL = /^,"uid":(\d+|null),"prev":"([0-9a-f]{64})"\}$/;

/** The uid a line names and the hash it chains to (undefined: a line without them, as 0.2.0 wrote). */
function chainOf(line: string): { uid: number | null; prev: string } | undefined {
  // Only the line's end is looked at (a regex anchored at the end alone would try every position).
  const at = line.lastIndexOf(',"uid":');
  const m = at < 0 ? null : TAIL.exec(line.slice(at));
  if (!m) return undefined;
  return { uid: m[1] === 'null' ? null : Number(m[1]), prev: m[2] as string };
}

/** The running process's uid, asked once: a process keeps its uid (opcli never calls setuid), and a batch seals a group of lines every turn. */
let ownUid: number | null | undefined;

/** The uid of the running process (null where the platform has none: Windows). */
export function myUid(): number | null {
  if (ownUid === undefined) ownUid = typeof process.getuid === 'function' ? process.getuid() : null;
  return ownUid;
}

/** One JSON line (no newline) with its author and chain after the line whose hash is `prev`. */
function sealLine(json: string, prev: string, uid: number | null = myUid()): string {
  return `${json.slice(0, -1)},"uid":${uid},"prev":"${prev}"}`;
}

/** Every line of `text` sealed in turn after `prev` (blank lines are left as they are); the text and its last line's hash. */
export function sealText(text: string, prev: string, uid: number | null = myUid()): { text: string; last: string } {
  // The parts joined once, a blank line told without trim's copy: a batch seals every line it writes (1.3 against 1.75 us a line).
  const parts: string[] = [];
  let last = prev;
  let at = 0;
  while (at < text.length) {
    const nl = text.indexOf('\n', at);
    const end = nl < 0 ? text.length : nl;
    const line = text.slice(at, end);
    if (BLANK.test(line)) parts.push(line);
    else {
      const sealed = sealLine(line, last, uid);
      last = lineHash(sealed);
      parts.push(sealed);
    }
    if (nl >= 0) parts.push('\n');
    at = end + 1;
  }
  return { text: parts.join(''), last };
}

/** A line trim() would leave empty. */
const BLANK = /^\s*$/;

/** The `prev` the next line appended to the file open as `fd` names (read under the record's lock). */
export function tailHash(fd: number, size = fstatSync(fd).size): string {
  // Read back 4 KiB at a time until the last non-blank line begins: a record's lines are a few hundred bytes.
  let tail = Buffer.alloc(0);
  let start = size;
  let end = size;
  while (end > 0) {
    // (An offset below 0 would count from the buffer's end.)
    const nl = end > start ? tail.lastIndexOf(10, end - start - 1) : -1;
    if (nl < 0 && start > 0) {
      const from = Math.max(0, start - 4096);
      tail = Buffer.concat([readAt(fd, from, start - from), tail]);
      start = from;
      continue;
    }
    // The line from after that newline (or the file's start) to `end`, as a reader takes it (damage.ts: blank lines skipped, others hashed whole).
    const last = tail.toString('utf8', nl + 1, end - start);
    if (last.trim()) return chainOf(last) ? lineHash(last) : prevOfWhole(readAt(fd, 0, size).toString('utf8'), last);
    end = start + Math.max(nl, 0);
  }
  return NO_LINE;
}

/** The `prev` after a file whose last line has no chain: its hash once the chain has begun (a line cut short), else every line's. */
function prevOfWhole(text: string, last: string): string {
  return text.split('\n').some((line) => chainOf(line)) ? lineHash(last) : legacyDigest(text);
}

/** Up to `length` bytes at `position` of the file open as `fd`. */
export function readAt(fd: number, position: number, length: number): Buffer {
  const b = Buffer.alloc(length);
  const n = readSync(fd, b, 0, length, position);
  return b.subarray(0, n);
}

/** The hash the first chained line names after lines of 0.2.0: every non-blank line, each followed by a newline. */
function legacyDigest(text: string): string {
  const h = createHash('sha256');
  for (const line of text.split('\n')) if (line.trim()) h.update(line).update('\n');
  return h.digest('hex');
}

/** Checks the chain of a file's lines as they are read, in order. */
export class ChainCheck {
  /** The hash of the lines of 0.2.0 so far (before the chain begins). */
  private readonly legacy = createHash('sha256');
  /** The hash of the last line once the chain has begun. */
  private last: string | undefined;

  /** `after`: the hash of the line a read goes on from, once the chain has begun there (a read of the part an index does not cover). */
  constructor(after?: string) {
    this.last = after;
  }

  /** Whether the chain has begun by the lines taken so far. */
  get begun(): boolean {
    return this.last !== undefined;
  }

  /** The next line is not checked against this one (a line too long to read, whose hash is unknown); the chain goes on from it. */
  skip(): void {
    this.unknown = true;
  }

  private unknown = false;

  /** Takes the next non-blank line; returns the damage when it breaks the chain. `complete`: a newline follows it (a torn last line is not checked). */
  take(line: string | Buffer, number: number, complete = true): { line: number; kind: 'chain' } | undefined {
    const text = typeof line === 'string' ? line : line.toString('utf8');
    const c = chainOf(text);
    let broken = false;
    if (this.last !== undefined) broken = complete && (c === undefined || c.prev !== this.last);
    else if (c) broken = complete && c.prev !== this.legacy.copy().digest('hex');
    else this.legacy.update(text).update('\n');
    if (this.unknown) {
      this.unknown = false;
      broken = false;
    }
    if (c || this.last !== undefined) this.last = lineHash(text);
    return broken ? { line: number, kind: 'chain' } : undefined;
  }
}

/**
 * The lines of a repaired file chained again from the first sealed one on (a line set aside changes
 * its hash): each sealed line keeps its uid and names its new predecessor; a line after the chain
 * began that has none is sealed by the person repairing.
 */
export function rechain(lines: string[]): string[] {
  let prev: string | undefined;
  const legacy = createHash('sha256');
  return lines.map((line) => {
    if (!line.trim()) return line;
    const c = chainOf(line);
    const expected = prev ?? legacy.copy().digest('hex');
    let out = line;
    if (c) out = sealLine(`${line.slice(0, line.lastIndexOf(',"uid":'))}}`, expected, c.uid);
    else if (prev !== undefined && line.startsWith('{') && line.endsWith('}')) out = sealLine(line, expected);
    if (prev === undefined && !chainOf(out)) legacy.update(out).update('\n');
    else prev = lineHash(out);
    return out;
  });
}

/** A line's author as a person reads it: the OS's name for its uid, with the line's own claim beside it when they differ. */
export function authorName(uid: number | null | undefined, claimed: string | undefined): string {
  if (uid === undefined || uid === null) return claimed ?? '?';
  const name = userName(uid) ?? `uid ${uid}`;
  return claimed !== undefined && claimed !== name ? `${name} (the line says "${claimed}")` : name;
}
