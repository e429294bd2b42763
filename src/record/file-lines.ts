/**
 * The lines of an append-only JSONL file split on bytes, each with its byte offset (indexes keep
 * offsets, not lines): a last line without a newline is not complete (a write cut short), one over
 * MAX_LINE_BYTES is `long`, in time linear in the file and memory bounded by the limit.
 */
import { readSync } from 'node:fs';
import { MAX_LINE_BYTES } from './damage.js';

/** How much of the file one read takes. */
const READ_CHUNK = 256 * 1024;

/** Each line: bytes `buffer[start, end)` from file `offset`; `complete`: a newline follows; `long`: over the limit, only its head (LONG_HEAD). */
export type OnLine = (buffer: Buffer, start: number, end: number, offset: number, complete: boolean, long: boolean) => void;

/** How much of a line over the limit is kept and handed over: enough to name it, never to read it. */
export const LONG_HEAD = 1024;

/**
 * Cuts a file's chunks into lines. A line spanning chunks is joined once, at its newline (joining at
 * every chunk costs its square in time); one past `limit` bytes keeps only its head (`buffered` <= `limit`).
 */
export class LineSplitter {
  /** The pieces of the unfinished line, and their length. */
  private parts: Buffer[] = [];
  private pending = 0;
  /** Set once the unfinished line has passed the limit: its first bytes; the rest is skipped. */
  private head: Buffer | undefined;
  /** File offset of the unfinished line's first byte. */
  private lineOffset: number;

  /** `size`: bytes taken so far, where the next chunk is read from (at first `from`, the start of a line). */
  constructor(
    private readonly limit = MAX_LINE_BYTES,
    public size = 0,
  ) {
    this.lineOffset = size;
  }

  /** Bytes held for the unfinished line: never more than the limit. */
  get buffered(): number {
    return this.pending + (this.head?.length ?? 0);
  }

  /** Hands every line the chunk completes to `onLine`; the chunk must not be reused until `end`. */
  push(chunk: Buffer, onLine: OnLine): void {
    const base = this.size;
    this.size += chunk.length;
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      if (this.pending > 0 || this.head) this.finish(chunk.subarray(start, nl), onLine, true);
      else if (nl - start > this.limit) onLine(chunk, start, start + Math.min(LONG_HEAD, this.limit), base + start, true, true);
      else onLine(chunk, start, nl, base + start, true, false);
      start = nl + 1;
      this.lineOffset = base + start;
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
  }

  /** The end of the file: a last line with no newline after it goes to `onLine` as not complete. */
  end(onLine: OnLine): void {
    if (this.pending > 0 || this.head !== undefined) this.finish(Buffer.alloc(0), onLine, false);
  }

  /** Keeps a piece of the unfinished line, or only its head once the line is over the limit. */
  private keep(piece: Buffer): void {
    if (this.head || piece.length === 0) return;
    this.parts.push(piece);
    this.pending += piece.length;
    if (this.pending <= this.limit) return;
    const first = this.parts.length === 1 ? piece : Buffer.concat(this.parts);
    this.head = Buffer.from(first.subarray(0, Math.min(LONG_HEAD, this.limit)));
    this.parts = [];
    this.pending = 0;
  }

  /** Hands over the unfinished line, ended by `tail` (the bytes before its newline, or none at the end). */
  private finish(tail: Buffer, onLine: OnLine, complete: boolean): void {
    this.keep(tail);
    const long = this.head !== undefined;
    const line = this.head ?? (this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts));
    this.parts = [];
    this.pending = 0;
    this.head = undefined;
    onLine(line, 0, line.length, this.lineOffset, complete, long);
  }
}

/** Every line of a file open as `fd` from byte `from` (the start of a line). */
export function eachLine(fd: number, onLine: OnLine, from = 0): void {
  const lines = new LineSplitter(MAX_LINE_BYTES, from);
  for (;;) {
    const chunk = Buffer.allocUnsafe(READ_CHUNK);
    const got = readSync(fd, chunk, 0, READ_CHUNK, lines.size);
    if (got === 0) break;
    lines.push(chunk.subarray(0, got), onLine);
  }
  lines.end(onLine);
}

/** The line that starts at byte `offset` of the file open as `fd`, without its newline (undefined past the end). */
export function lineAt(fd: number, offset: number): string | undefined {
  for (let size = 1024; ; size *= 4) {
    const buffer = Buffer.alloc(size);
    const got = readSync(fd, buffer, 0, size, offset);
    const end = buffer.subarray(0, got).indexOf(10);
    if (end !== -1 || got < size) return got === 0 ? undefined : buffer.toString('utf8', 0, end === -1 ? got : end);
    // The file changed under the index (no line it indexed is this long): its head, which reads as no record.
    if (size > MAX_LINE_BYTES) return buffer.toString('utf8', 0, LONG_HEAD);
  }
}
