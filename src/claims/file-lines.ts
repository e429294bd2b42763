/**
 * The lines of an append-only JSONL file (the batch journal, the record of claims), split on bytes
 * so that each line's byte offset is known: the indexes keep offsets, not lines, and read a line
 * back from its offset when they need it. The file is read in chunks; the last line, when no newline
 * ends it, is handed over as not complete (a write cut short by a crash).
 */
import { readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/** How much of the file one read takes. */
export const READ_CHUNK = 256 * 1024;

/**
 * Called for each line: its bytes are `buffer[start, end)` (no newline), `offset` is where it
 * starts in the file, and `complete` is false for a last line with no newline after it.
 */
export type OnLine = (buffer: Buffer, start: number, end: number, offset: number, complete: boolean) => void;

/** What reading the lines found: the file's size, and whether it ends with a newline (or is empty). */
export interface LinesRead {
  size: number;
  endsWithNewline: boolean;
}

/** Cuts the chunks of a file, read one after another from its start, into lines. */
export class LineSplitter {
  private rest: Buffer = Buffer.alloc(0);
  /** File offset of `rest`'s first byte. */
  private restOffset = 0;
  /** Bytes taken so far: where the next chunk is read from. */
  size = 0;

  /** Hands every line the chunk completes to `onLine`; the chunk must not be reused until `end`. */
  push(chunk: Buffer, onLine: OnLine): void {
    this.size += chunk.length;
    const buffer = this.rest.length ? Buffer.concat([this.rest, chunk]) : chunk;
    let start = 0;
    for (let nl = buffer.indexOf(10); nl !== -1; nl = buffer.indexOf(10, start)) {
      onLine(buffer, start, nl, this.restOffset + start, true);
      start = nl + 1;
    }
    this.rest = buffer.subarray(start);
    this.restOffset += start;
  }

  /** The end of the file: a last line with no newline after it goes to `onLine` as not complete. */
  end(onLine: OnLine): LinesRead {
    const torn = this.rest.length > 0;
    if (torn) onLine(this.rest, 0, this.rest.length, this.restOffset, false);
    return { size: this.size, endsWithNewline: !torn };
  }
}

/** Every line of a file open as `handle`, read in the thread pool. */
export async function eachLine(handle: FileHandle, onLine: OnLine): Promise<LinesRead> {
  const lines = new LineSplitter();
  for (;;) {
    // A new chunk each time: the split keeps a view of the last one's unfinished line.
    const chunk = Buffer.allocUnsafe(READ_CHUNK);
    const { bytesRead } = await handle.read(chunk, 0, READ_CHUNK, lines.size);
    if (bytesRead === 0) return lines.end(onLine);
    lines.push(chunk.subarray(0, bytesRead), onLine);
  }
}

/** Every line of a file open as `fd`, read on the main thread. */
export function eachLineSync(fd: number, onLine: OnLine): LinesRead {
  const lines = new LineSplitter();
  for (;;) {
    const chunk = Buffer.allocUnsafe(READ_CHUNK);
    const got = readSync(fd, chunk, 0, READ_CHUNK, lines.size);
    if (got === 0) return lines.end(onLine);
    lines.push(chunk.subarray(0, got), onLine);
  }
}

/** The first line of what a read at an offset returned; null when the buffer was filled before a newline (read more). */
function firstLine(buffer: Buffer, got: number): string | undefined | null {
  const end = buffer.subarray(0, got).indexOf(10);
  if (end === -1 && got === buffer.length) return null;
  return got === 0 ? undefined : buffer.toString('utf8', 0, end === -1 ? got : end);
}

/** The line that starts at byte `offset` of the file open as `handle`, without its newline (undefined past the end). */
export async function lineAt(handle: FileHandle, offset: number): Promise<string | undefined> {
  for (let size = 1024; ; size *= 4) {
    const buffer = Buffer.alloc(size);
    const line = firstLine(buffer, (await handle.read(buffer, 0, size, offset)).bytesRead);
    if (line !== null) return line;
  }
}

/** `lineAt` for a file open as `fd`, read on the main thread. */
export function lineAtSync(fd: number, offset: number): string | undefined {
  for (let size = 1024; ; size *= 4) {
    const buffer = Buffer.alloc(size);
    const line = firstLine(buffer, readSync(fd, buffer, 0, size, offset));
    if (line !== null) return line;
  }
}
