/**
 * The records of a batch's CSV split by hand (src/claims/csv-records.ts) are csv-parse's: the same
 * cells, lines and errors for any text, in any chunks, as the reader that gave all of it to
 * csv-parse (kept below as the oracle).
 */
import { PassThrough, type Readable } from 'node:stream';
import { parse } from 'csv-parse';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { CsvGuard } from '../../src/claims/csv-guard.js';
import { type CsvRecord, csvError, csvRecords } from '../../src/claims/csv-records.js';

/** The reader before the hand split: every chunk written to csv-parse (its records, and the first line of each). */
async function* oracle(input: Readable, guard: CsvGuard): AsyncGenerator<{ record: string[]; line: number; lines: number }> {
  const queue: { record: string[]; line: number; lines: number }[] = [];
  let failure: unknown;
  const parser = parse({
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    on_record: (record: string[], info: { lines: number }) => {
      let inner = 0;
      for (const cell of record) if (cell.includes('\n')) inner += cell.split('\n').length - 1;
      queue.push({ record, line: info.lines - inner, lines: info.lines });
      return null;
    },
  });
  parser.on('error', (error) => {
    failure ??= error;
  });
  parser.resume();
  const write = (chunk?: string) =>
    new Promise<void>((resolve) => {
      if (chunk === undefined) {
        parser.once('error', () => resolve());
        parser.end(() => resolve());
      } else
        parser.write(chunk, (error) => {
          if (error) failure ??= error;
          resolve();
        });
    });
  input.setEncoding('utf8');
  const text = input.pipe(guard);
  let lastLine = 0;
  const drain = function* () {
    for (const item of queue.splice(0)) {
      lastLine = item.lines;
      yield item;
    }
  };
  for await (const chunk of text as AsyncIterable<string>) {
    await write(chunk);
    yield* drain();
    if (failure || guard.failure) break;
  }
  if (!failure && !guard.failure) await write();
  yield* drain();
  if (failure) throw csvError(failure, 'x.csv', lastLine);
  if (guard.failure) throw guard.failure;
}

/** The text in chunks cut at the given byte offsets (a multi-byte character may be cut). */
function stream(text: string, cuts: number[]): Readable {
  const bytes = Buffer.from(text);
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

/** Every record, then the error's message. */
async function collect(rows: AsyncGenerator<CsvRecord[] | CsvRecord>): Promise<unknown[]> {
  const out: unknown[] = [];
  try {
    for await (const batch of rows) for (const { record, line } of [batch].flat()) out.push({ record, line });
  } catch (error) {
    out.push({ error: (error as Error).message });
  }
  return out;
}

/** The same text read both ways. */
async function both(text: string, cuts: number[]) {
  const ours = await collect(csvRecords(stream(text, cuts), 'x.csv', new CsvGuard('x.csv')));
  const theirs = await collect(oracle(stream(text, cuts), new CsvGuard('x.csv')));
  return { ours, theirs };
}

describe('CSV records split by hand', () => {
  test('plain records: quoted commas, newlines and quotes, empty lines, a BOM, CRLF, a last line without a line end', async () => {
    const text = '\ufeffa,b,c\r\n\r\n"x, y","two\nlines","say ""hi"""\n,,\n""\nlast,row';
    const { ours, theirs } = await both(text, [3, 17, 18, 40]);
    expect(ours).toEqual(theirs);
    expect(ours).toEqual([
      { record: ['a', 'b', 'c'], line: 1 },
      { record: ['x, y', 'two\nlines', 'say "hi"'], line: 3 },
      { record: ['', '', ''], line: 5 },
      { record: [''], line: 6 },
      { record: ['last', 'row'], line: 7 },
    ]);
  });

  test('a record that is not plain goes to csv-parse from there, with the rows before it read and its line in the message', async () => {
    for (const bad of ['a"b,c', '"a"b,c', '"never closed,c', 'a\rb,c']) {
      const text = `h1,h2\nok,1\n\n${bad}\nafter,2\n`;
      const { ours, theirs } = await both(text, []);
      expect(ours.slice(0, 2)).toEqual([
        { record: ['h1', 'h2'], line: 1 },
        { record: ['ok', '1'], line: 2 },
      ]);
      expect(ours, bad).toEqual(theirs);
    }
    const { ours } = await both('h1,h2\nok,1\n\na"b,c\n', []);
    expect(ours.at(-1)).toEqual({
      error: 'x.csv line 4, column 1: the CSV cannot be read: Invalid Opening Quote: a quote is found on field 0 at line 4, value is "a"',
    });
  });

  test('any text in any chunks: the records and lines of csv-parse, and an error where it fails', async () => {
    const cell = fc.stringMatching(/^[a"b,\n\r é\ufeff]{0,6}$/);
    const text = fc.array(cell, { maxLength: 12 }).map((cells) => cells.join(''));
    await fc.assert(
      fc.asyncProperty(text, fc.array(fc.nat({ max: 80 }), { maxLength: 4 }), async (t, cuts) => {
        const { ours, theirs } = await both(t, cuts);
        expect(ours).toEqual(theirs);
      }),
      { numRuns: 400 },
    );
  });
});
