/**
 * The text of a batch file in the encodings people save it in. UTF-8 (with or without a byte order
 * mark) and UTF-16, little- or big-endian, told by its byte order mark (Windows PowerShell 5.1's `>`
 * and Excel's "Unicode Text" write UTF-16LE) are decoded by Node's TextDecoder (the WHATWG Encoding
 * Standard), strictly: a byte that is not part of a character is refused, never turned into U+FFFD.
 * An encoding opcli does not read (UTF-32, UTF-16 without its mark, a legacy code page such as
 * Windows-1252) is refused naming it, with how to save the file as UTF-8. A file is checked whole
 * before its first row is read (`checkFileText`), so such a file sends nothing; standard input is
 * checked as it is read.
 */
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { UsageError } from '../core/errors.js';
import { count } from '../text/count.js';

/** The encodings opcli reads, as TextDecoder names them. */
export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be';

/** What to do about a file in an encoding opcli does not read. */
export const SAVE_AS_UTF8 =
  'Save it as UTF-8 and run again: in Excel, File > Save As > "CSV UTF-8 (Comma delimited) (*.csv)"; in Numbers or LibreOffice, export it as CSV with the character set Unicode (UTF-8). Nothing was sent.';

/** The encoding a file's first bytes name, and its name in messages. */
interface Sniffed {
  encoding: TextEncoding;
  name: string;
}

/** The encoding a file's first bytes (its first chunk, at least 4 bytes unless the file is shorter) name; a refusal for one opcli does not read. */
function sniff(head: Buffer, label: string): Sniffed {
  const at = (i: number, ...bytes: number[]) => bytes.every((b, j) => head[i + j] === b);
  const refuse = (name: string) => new UsageError(`${label} is in ${name}, an encoding opcli does not read: save it as UTF-8.`, SAVE_AS_UTF8);
  if (at(0, 0xff, 0xfe, 0, 0)) throw refuse('UTF-32LE');
  if (at(0, 0, 0, 0xfe, 0xff)) throw refuse('UTF-32BE');
  if (at(0, 0xff, 0xfe)) return { encoding: 'utf-16le', name: 'UTF-16LE' };
  if (at(0, 0xfe, 0xff)) return { encoding: 'utf-16be', name: 'UTF-16BE' };
  // Text never holds NUL: zero bytes among the first are the other half of UTF-16 (or UTF-32) characters.
  const zero = head.subarray(0, 512).indexOf(0);
  if (zero !== -1) throw refuse(`UTF-16${zero % 2 === 1 ? 'LE' : 'BE'} or UTF-32 without a byte order mark (byte ${count(zero)} is zero)`);
  return { encoding: 'utf-8', name: 'UTF-8' };
}

/** A chunk of a file's text, and whether the CSV parser's byte positions (UTF-8) are the file's. */
export interface TextChunks {
  chunks: AsyncGenerator<string>;
  /** False for UTF-16: the text is handed on as UTF-8, whose byte offsets are not the file's. */
  fileBytes: boolean;
}

/**
 * The text of `input`, chunk by chunk, decoded from the encoding its first bytes name. A UTF-8 byte
 * order mark is kept in the text (csv-parse's `bom` skips it and counts its bytes); UTF-16's is not.
 */
export async function decodeText(input: Readable, label: string): Promise<TextChunks> {
  const source = input[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const first: Buffer[] = [];
  let size = 0;
  let ended = false;
  while (size < 4) {
    const next = await source.next();
    if (next.done) {
      ended = true;
      break;
    }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    first.push(chunk);
    size += chunk.length;
  }
  const head = Buffer.concat(first);
  let sniffed: Sniffed;
  try {
    sniffed = sniff(head, label);
  } catch (error) {
    input.destroy();
    throw error;
  }
  async function* chunks(): AsyncGenerator<string> {
    const decoder = new TextDecoder(sniffed.encoding, { fatal: true, ignoreBOM: sniffed.encoding === 'utf-8' });
    const where = { bytes: 0, lines: 1 };
    const decode = (chunk: Buffer, end: boolean) => {
      try {
        return decoder.decode(chunk, { stream: !end });
      } catch {
        throw notDecodable(chunk, where, sniffed, label);
      }
    };
    try {
      if (head.length) yield decode(head, ended);
      where.bytes += head.length;
      where.lines += lineEnds(head, sniffed.encoding);
      if (ended) return;
      for (;;) {
        const next = await source.next();
        if (next.done) break;
        const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
        yield decode(chunk, false);
        where.bytes += chunk.length;
        where.lines += lineEnds(chunk, sniffed.encoding);
      }
      const rest = decode(Buffer.alloc(0), true);
      if (rest) yield rest;
    } finally {
      input.destroy();
    }
  }
  return { chunks: chunks(), fileBytes: sniffed.encoding === 'utf-8' };
}

/** The line feeds of a chunk (in UTF-16, a 0x0A byte may be half of another character: counted when aligned). */
function lineEnds(chunk: Buffer, encoding: TextEncoding): number {
  let n = 0;
  for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
    if (encoding === 'utf-8' || chunk[i + (encoding === 'utf-16le' ? 1 : -1)] === 0) n++;
  }
  return n;
}

/**
 * The refusal of a chunk that does not decode: where its first bad byte is, found by decoding it
 * again without `fatal` (the first U+FFFD that the file does not hold as a character). Bytes that
 * continue a character begun in the chunk before are skipped.
 */
function notDecodable(chunk: Buffer, where: { bytes: number; lines: number }, sniffed: Sniffed, label: string): UsageError {
  let skip = 0;
  if (sniffed.encoding === 'utf-8') while (skip < 3 && ((chunk[skip] as number) & 0xc0) === 0x80) skip++;
  else skip = where.bytes % 2;
  const text = new TextDecoder(sniffed.encoding, { ignoreBOM: true }).decode(chunk.subarray(skip));
  const genuine = Buffer.from('\ufffd', sniffed.encoding === 'utf-8' ? 'utf8' : 'utf16le');
  if (sniffed.encoding === 'utf-16be') genuine.swap16();
  let offset = 0;
  for (let i = text.indexOf('\ufffd'); i !== -1; i = text.indexOf('\ufffd', i + 1)) {
    offset = skip + (sniffed.encoding === 'utf-8' ? Buffer.byteLength(text.slice(0, i)) : 2 * i);
    if (!chunk.subarray(offset, offset + genuine.length).equals(genuine)) break;
  }
  const line = where.lines + lineEnds(chunk.subarray(0, offset), sniffed.encoding);
  const byte = where.bytes + offset;
  const legacy = sniffed.encoding === 'utf-8' ? ' (a legacy encoding such as Windows-1252, which Excel\'s "CSV (Comma delimited)" writes, or Mac Roman)' : '';
  return new UsageError(
    `${label} line ${count(line)}: byte ${count(byte)} (0x${(chunk[offset] ?? 0).toString(16).toUpperCase().padStart(2, '0')}) is not part of a ${sniffed.name} character: the file is not ${sniffed.name}${legacy}.`,
    SAVE_AS_UTF8,
  );
}

/**
 * Reads a whole file as a batch reads it, before any row is read: a file opcli cannot decode is
 * refused with nothing sent, wherever its first bad byte is.
 */
export async function checkFileText(path: string, label: string): Promise<void> {
  const { chunks } = await decodeText(createReadStream(path, { highWaterMark: 256 * 1024 }), label);
  for await (const _ of chunks) {
    // Decoding is the check.
  }
}
