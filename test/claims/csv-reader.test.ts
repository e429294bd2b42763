/**
 * The batch's CSV reader (src/claims/reader.ts) reads what csv-parse reads over the whole text:
 * for any text after a claims header, cut into any chunks (a character may be cut) and saved as
 * UTF-8 or UTF-16, the same cells (a line end inside a quoted cell read as a line feed), and a break
 * where csv-parse breaks; its line numbers do not depend on the chunks or the encoding.
 */
import { PassThrough, type Readable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { openCsv } from '../../src/claims/reader.js';
import { COLUMNS } from './fixtures.js';

const HEADER = `${COLUMNS.join(',')}\r\n`;

/** The bytes in chunks cut at the given offsets. */
function stream(bytes: Buffer, cuts: number[]): Readable {
  const input = new PassThrough();
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    const to = Math.min(cut, bytes.length);
    if (to > at) input.write(bytes.subarray(at, to));
    at = Math.max(at, to);
  }
  input.end(bytes.subarray(at));
  return input;
}

function encode(text: string, encoding: 'utf-8' | 'utf-16le' | 'utf-16be'): Buffer {
  if (encoding === 'utf-8') return Buffer.from(text);
  const bytes = Buffer.from(`\ufeff${text}`, 'utf16le');
  return encoding === 'utf-16le' ? bytes : bytes.swap16();
}

/** Every row's cells and line, then the error's message. */
async function read(bytes: Buffer, cuts: number[]): Promise<({ cells?: string[]; line: number } | { error: string })[]> {
  const out: ({ cells?: string[]; line: number } | { error: string })[] = [];
  try {
    const source = await openCsv(stream(bytes, cuts), { label: 'x.csv', defaultStoreId: 'st_1' });
    for await (const row of source.rows) out.push({ cells: row.cells, line: row.line });
  } catch (error) {
    out.push({ error: (error as Error).message });
  }
  return out;
}

/** csv-parse over the whole text, as the reader's options read it: the data rows' cells, or undefined when it breaks. */
function oracle(text: string): string[][] | undefined {
  try {
    const records = parse(text, { bom: true, record_delimiter: ['\r\n', '\n', '\r'], relax_column_count: true, skip_empty_lines: true }) as string[][];
    return records.slice(1).map((cells) => cells.map((cell) => cell.replace(/\r\n?/g, '\n')));
  } catch {
    return undefined;
  }
}

describe('the CSV reader', () => {
  test('rows begin at their line: quoted line ends (CRLF, LF, CR) and empty lines counted as an editor counts them', async () => {
    const text = `\ufeff${HEADER}\r\n"x\r\ny",z\r\nq,w\n\n"a\nb\rc",d\re,f`;
    expect(await read(Buffer.from(text), [])).toEqual([
      { cells: ['x\ny', 'z'], line: 3 },
      { cells: ['q', 'w'], line: 5 },
      { cells: ['a\nb\nc', 'd'], line: 7 },
      { cells: ['e', 'f'], line: 10 },
    ]);
  });

  test('an unclosed quote breaks where its row begins, after the rows before it', async () => {
    const rows = await read(Buffer.from(`${HEADER}ok,1\n\n"never closed,c\nafter,2\n`), []);
    expect(rows).toEqual([
      { cells: ['ok', '1'], line: 2 },
      { error: 'x.csv line 3: the CSV cannot be read: a quote opened in the row starting here is never closed' },
    ]);
  });

  test('any text in any chunks, in UTF-8 or UTF-16: the cells of csv-parse over the whole text, the same lines and the same break', async () => {
    const body = fc.array(fc.stringMatching(/^[a"b,\n\r é\u{1F600}]{0,6}$/u), { maxLength: 12 }).map((cells) => cells.join(''));
    const encoding = fc.constantFrom('utf-8' as const, 'utf-16le' as const, 'utf-16be' as const);
    await fc.assert(
      fc.asyncProperty(body, fc.array(fc.nat({ max: 1_200 }), { maxLength: 4 }), encoding, async (t, cuts, enc) => {
        const text = HEADER + t;
        const whole = await read(Buffer.from(text), []);
        const ours = await read(encode(text, enc), cuts);
        expect(ours).toEqual(whole);
        const theirs = oracle(text);
        if (theirs) expect(ours.map((r) => ('cells' in r ? r.cells : r))).toEqual(theirs);
        else expect(ours.at(-1)).toHaveProperty('error');
      }),
      { numRuns: 300 },
    );
  });

  test('a byte that is not UTF-8, anywhere in any chunks, is refused at its line and byte', async () => {
    const body = fc.array(fc.stringMatching(/^[ab,\n é\u{1F600}]{0,6}$/u), { maxLength: 12 }).map((cells) => cells.join(''));
    const bad = fc.constantFrom(0x80, 0xbf, 0xc0, 0xe9, 0xf0, 0xff);
    await fc.assert(
      fc.asyncProperty(body, fc.nat(), bad, fc.array(fc.nat({ max: 1_200 }), { maxLength: 4 }), async (t, at, byte, cuts) => {
        const text = Buffer.from(HEADER + t);
        // At a character's start, so that the byte is the first that is wrong.
        const starts = [...Buffer.from(HEADER + t).keys()].filter((i) => ((text[i] as number) & 0xc0) !== 0x80 && i >= HEADER.length);
        const offset = starts.length ? (starts[at % starts.length] as number) : text.length;
        const bytes = Buffer.concat([text.subarray(0, offset), Buffer.from([byte]), Buffer.from('x'), text.subarray(offset)]);
        const line = 1 + text.subarray(0, offset).toString().split('\n').length - 1;
        const rows = await read(bytes, cuts);
        expect(rows.at(-1)).toEqual({ error: expect.stringContaining(`x.csv line ${line}: byte ${offset.toLocaleString('en-US')} (0x`) });
      }),
      { numRuns: 200 },
    );
  });
});
