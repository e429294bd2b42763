/**
 * The text of a batch file in the encodings people save it in: UTF-8 (with or without a byte order
 * mark), checked by Node's `isUtf8`, and UTF-16, little- or big-endian, told by its byte order mark
 * (Windows PowerShell 5.1's `>` and Excel's "Unicode Text" write UTF-16LE), decoded by Node's
 * TextDecoder (the WHATWG Encoding Standard). Strictly: a byte that is not part of a character is
 * refused, never turned into U+FFFD.
 * An encoding opcli does not read (UTF-32, UTF-16 without its mark, a legacy code page such as
 * Windows-1252) is refused naming it, with how to save the file as UTF-8. A file is checked whole
 * before its first row is read (`checkFileText`), so such a file sends nothing; standard input is
 * checked as it is read.
 */
import { isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { UsageError } from '../core/errors.js';
import { count } from '../text/count.js';

/** The encodings opcli reads, as TextDecoder names them. */
type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be';

/** What to do about a file in an encoding opcli does not read. */
const SAVE_AS_UTF8 =
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
  return UTF8;
}

const UTF8: Sniffed = { encoding: 'utf-8', name: 'UTF-8' };

/** A file's text as UTF-8, chunk by chunk, and whether the CSV parser's byte positions are the file's. */
export interface TextChunks {
  /** UTF-8 bytes of whole characters: a chunk never ends inside one. */
  chunks: AsyncGenerator<Buffer>;
  /** False for UTF-16: the text is handed on as UTF-8, whose byte offsets are not the file's. */
  fileBytes: boolean;
}

/**
 * The text of `input`, chunk by chunk, as UTF-8 from the encoding its first bytes name. UTF-8 is
 * handed on as read, its byte order mark kept (csv-parse's `bom` skips it and counts its bytes), each
 * chunk checked by Node's `isUtf8`; UTF-16 is decoded by TextDecoder, its byte order mark dropped.
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
  async function* chunks(): AsyncGenerator<Buffer> {
    const where = { bytes: 0, lines: 1 };
    const take = takerFor(sniffed, where, label);
    try {
      let chunk: Buffer = head;
      let end = ended;
      for (;;) {
        const text = take(chunk, end);
        if (text.length) yield text;
        if (end) return;
        const next = await source.next();
        chunk = next.done ? Buffer.alloc(0) : typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
        end = next.done === true;
      }
    } finally {
      input.destroy();
    }
  }
  return { chunks: chunks(), fileBytes: sniffed.encoding === 'utf-8' };
}

/** Where the text read so far ends: its bytes in the file, and the line the next byte is on. */
interface Where {
  bytes: number;
  lines: number;
}

/** Takes a chunk of the file (`end`: its last) and hands on the UTF-8 of its whole characters; refuses one that does not decode. */
type Take = (chunk: Buffer, end: boolean) => Buffer;

/** The taker of an encoding's text. */
function takerFor(sniffed: Sniffed, where: Where, label: string): Take {
  return sniffed.encoding === 'utf-8' ? utf8Text(where, label) : utf16Text(sniffed, where, label);
}

/**
 * UTF-8 checked as it comes, without decoding it: the chunk up to its last whole character (a lead
 * byte 110xxxxx, 1110xxxx or 11110xxx opens a character of 2, 3 or 4 bytes: RFC 3629), the rest
 * kept for the next chunk.
 */
function utf8Text(where: Where, label: string): Take {
  let carry: Buffer | undefined;
  return (chunk, end) => {
    const data = carry?.length ? Buffer.concat([carry, chunk]) : chunk;
    let cut = data.length;
    for (let i = data.length - 1; !end && i >= Math.max(0, data.length - 3); i--) {
      const b = data[i] as number;
      if ((b & 0xc0) === 0x80) continue;
      if (i + (b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1) > data.length) cut = i;
      break;
    }
    const text = data.subarray(0, cut);
    // A copy: the chunk's buffer may be read into again.
    carry = Buffer.from(data.subarray(cut));
    if (!isUtf8(text)) throw notDecodable(text, where, UTF8, label);
    where.bytes += text.length;
    where.lines += lineEnds(text, 'utf-8');
    return text;
  };
}

/** UTF-16 decoded by TextDecoder (fatal: an unpaired surrogate is refused), handed on as UTF-8. */
function utf16Text(sniffed: Sniffed, where: Where, label: string): Take {
  const decoder = new TextDecoder(sniffed.encoding, { fatal: true });
  return (chunk, end) => {
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: !end });
    } catch {
      throw notDecodable(chunk, where, sniffed, label);
    }
    where.bytes += chunk.length;
    where.lines += lineEnds(chunk, sniffed.encoding);
    return Buffer.from(text);
  };
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
 * again without `fatal` (the first U+FFFD that the file does not hold as a character).
 */
function notDecodable(chunk: Buffer, where: Where, sniffed: Sniffed, label: string): UsageError {
  // UTF-8 comes here in whole characters; a UTF-16 chunk may begin with the second byte of one.
  const skip = sniffed.encoding === 'utf-8' ? 0 : where.bytes % 2;
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
 * refused with nothing sent, wherever its first bad byte is. One buffer is read into again and
 * again: the check allocates nothing per chunk.
 */
export async function checkFileText(path: string, label: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(64 * 1024);
    let take: Take | undefined;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      const chunk = buffer.subarray(0, bytesRead);
      // The first read holds the byte order mark unless the file is shorter than 4 bytes: it is then whole.
      take ??= takerFor(sniff(chunk, label), { bytes: 0, lines: 1 }, label);
      take(chunk, bytesRead === 0);
      if (bytesRead === 0) return;
    }
  } finally {
    await handle.close();
  }
}
