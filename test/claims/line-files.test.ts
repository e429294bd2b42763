/**
 * The journal and the record of claims read their files in chunks of 256 KiB, split into lines on
 * bytes (src/record/file-lines.ts): a line that straddles two reads is read whole, its offset is
 * right, and a damaged line after the first read is still named by its line number. A line longer
 * than any opcli writes is refused by its number, without holding it.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LONG_HEAD, LineSplitter, type OnLine } from '../../src/record/file-lines.js';
import { JournalReader } from '../../src/claims/journal.js';
import { batchIntentLine, outcomeLine } from '../../src/claims/record-format.js';
import { parseRecordLine } from '../../src/claims/record.js';
import { ClaimRecord, recordFileName } from '../../src/claims/record.js';
import { describeDamage, MAX_LINE_BYTES } from '../../src/record/damage.js';
import { readLog } from '../../src/record/log.js';
import { tempConfigDir } from '../helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempConfigDir());
});
afterEach(() => cleanup());

const key = (i: number) => createHash('sha256').update(String(i)).digest('hex').slice(0, 32);
const at = '2024-05-01T10:00:00.000Z';
/** Enough entries of about 330 bytes to pass the first 256 KiB read twice over. */
const ENTRIES = 1_600;

describe('the journal over more than one read', () => {
  /** A journal of ENTRIES filed rows (lines 2 on), each with a long reason. */
  function bigJournal(path: string) {
    const lines = [JSON.stringify({ journal: 'opcli claims', version: 3, created: at, service: { origin: null, storeId: null } })];
    for (let i = 1; i <= ENTRIES; i++)
      lines.push(JSON.stringify({ key: key(i), line: i + 1, status: 'filed', sourceOrderId: `ord_${i}`, reason: 'é'.repeat(100), at }));
    writeFileSync(path, `${lines.join('\n')}\n`);
  }

  it('reads every entry, and each one back from its offset, on either side of a read', async () => {
    const path = join(dir, 'j.jsonl');
    bigJournal(path);
    expect(readFileSync(path).length).toBeGreaterThan(2 * 256 * 1024);
    const journal = await JournalReader.snapshot(path);
    try {
      expect(journal.priorEntries).toBe(ENTRIES);
      for (let i = 1; i <= ENTRIES; i++) {
        const prior = journal.priorOutcome(key(i));
        expect(prior?.status).toBe('filed');
        expect((await journal.priorDetail(prior as NonNullable<typeof prior>)).sourceOrderId).toBe(`ord_${i}`);
      }
    } finally {
      await journal.closeReader();
    }
  });

  it('names a damaged line after the first read by its line number, and sends nothing', async () => {
    const path = join(dir, 'j.jsonl');
    bigJournal(path);
    appendFileSync(path, `{"key":"${key(0)}","line":1,"sta\n${JSON.stringify({ key: key(-1), line: 9, status: 'filed', at })}\n`);
    await expect(JournalReader.snapshot(path)).rejects.toThrow(`The journal ${path} cannot be read: line ${ENTRIES + 2} is not a record opcli can read.`);
  });

  it("writes a batch row's intent and outcome whose free text needs quoting as JSON that reads back the same", () => {
    const reason = 'said "no"\\ on\nline 2\u2028 é 🙂 \u0001';
    const at = '2026-12-07T10:00:00.000Z';
    const intent = batchIntentLine(
      {
        issuance: 'r.2',
        key: key(1),
        run: 'r',
        line: 2,
        like: 'abcdef0123456789',
        row: key(2),
        tag: 4_000_000_000,
        email: 'a"b@example.com',
        claimJson: '{"a":"b"}',
      },
      at,
    );
    const outcome = outcomeLine({ issuance: 'r.2', key: key(1), status: 'rejected', error: reason }, at);
    expect(parseRecordLine(JSON.parse(intent))).toEqual({
      v: 1,
      issuance: 'r.2',
      key: key(1),
      type: 'intent',
      at,
      run: 'r',
      line: 2,
      email: 'a"b@example.com',
      row: key(2),
      tag: 4_000_000_000,
      like: 'abcdef0123456789',
      claim: { a: 'b' },
    });
    expect(parseRecordLine(JSON.parse(outcome))).toEqual({ v: 1, issuance: 'r.2', key: key(1), type: 'outcome', at, status: 'rejected', error: reason });
  });
});

describe('the record of claims over more than one read', () => {
  const store = { origin: 'https://api.example.com', storeId: 'store_1' };
  /** A record of ENTRIES claims filed, each an intent and an outcome. */
  function bigRecord(path: string) {
    const lines = [JSON.stringify({ v: 1, type: 'header', record: 'opcli claims', origin: store.origin, storeId: store.storeId, created: at })];
    for (let i = 1; i <= ENTRIES; i++) {
      const issuance = `run.${i}`;
      lines.push(
        JSON.stringify({
          v: 1,
          issuance,
          key: key(i),
          type: 'intent',
          at,
          user: 'alice',
          host: 'h',
          profile: 'p',
          source: '/x.csv',
          line: i + 1,
          item: 'é'.repeat(60),
        }),
        JSON.stringify({ v: 1, issuance, key: key(i), type: 'outcome', at, status: 'filed', sourceOrderId: `ord_${i}` }),
      );
    }
    writeFileSync(path, `${lines.join('\n')}\n`, { mode: 0o600 });
  }

  it('finds every claim with its intent and outcome, on either side of a read', () => {
    const path = join(dir, recordFileName(store));
    bigRecord(path);
    expect(readFileSync(path).length).toBeGreaterThan(2 * 256 * 1024);
    const record = ClaimRecord.openSync({ place: { dir }, store });
    try {
      for (let i = 1; i <= ENTRIES; i++) {
        const hit = record.lookup(key(i));
        expect(hit).toMatchObject({ state: 'filed', intent: { line: i + 1, user: 'alice' }, outcome: { sourceOrderId: `ord_${i}` } });
      }
      expect([...record.all()]).toHaveLength(2 * ENTRIES + 1);
    } finally {
      record.close();
    }
  });

  it('names a damaged line after the first read by its line number', () => {
    const path = join(dir, recordFileName(store));
    bigRecord(path);
    appendFileSync(path, 'not json\n');
    const opened = () => ClaimRecord.openSync({ place: { dir }, store });
    expect(opened).toThrow(expect.objectContaining({ exitCode: 2, message: expect.stringMatching(new RegExp(`line ${2 * ENTRIES + 2}\\b`)) }));
  });
});

/**
 * Issue 38 (rows 8 and 12): one line of 100 MB made every claims command take 75-86 s and 450 MB,
 * because the splitter joined a long line's pieces again at every read (its square in time). A line
 * over the limit is now refused by its number, read once and never held whole.
 */
describe('a line longer than any opcli writes', () => {
  /** Splits `text` fed in pieces of the given sizes; checks after each piece that no more than `limit` bytes are held. */
  function split(text: string, sizes: number[], limit: number) {
    const lines: { text: string; offset: number; complete: boolean; long: boolean }[] = [];
    const splitter = new LineSplitter(limit);
    const onLine: OnLine = (buffer, start, end, offset, complete, long) => lines.push({ text: buffer.toString('latin1', start, end), offset, complete, long });
    const bytes = Buffer.from(text, 'latin1');
    let at = 0;
    for (let i = 0; at < bytes.length; i++) {
      const size = Math.max(1, sizes[i % sizes.length] ?? 1);
      splitter.push(Buffer.from(bytes.subarray(at, at + size)), onLine);
      at += size;
      expect(splitter.buffered).toBeLessThanOrEqual(limit);
    }
    splitter.end(onLine);
    return lines;
  }

  it('whatever the chunks: every line once, at its offset; one over the limit flagged long with only its head; never more than the limit held', () => {
    const line = fc.stringMatching(/^[a-z{}":,]{0,40}$/);
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 12 }),
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 30 }),
        (parts, ends, sizes, limit) => {
          const text = parts.join('\n') + (ends && parts.length ? '\n' : '');
          const lines = split(text, sizes, limit);
          const expected = text.split('\n');
          if (text.endsWith('\n') || text === '') expected.pop();
          expect(lines.map((l) => l.long)).toEqual(expected.map((l) => l.length > limit));
          let offset = 0;
          expected.forEach((want, i) => {
            const got = lines[i] as (typeof lines)[number];
            expect(got.offset).toBe(offset);
            expect(got.text).toBe(got.long ? want.slice(0, Math.min(LONG_HEAD, limit)) : want);
            expect(got.complete).toBe(i < expected.length - 1 || text.endsWith('\n'));
            offset += want.length + 1;
          });
        },
      ),
    );
  });

  /** Appends a line of `mib` MiB (a record's beginning, then filler) and a good line after it. */
  function appendLong(path: string, mib: number, after: string): void {
    appendFileSync(path, `{"v":1,"issuance":"a","key":"${key(1)}","type":"intent","x":"`);
    for (let i = 0; i < mib; i++) appendFileSync(path, 'x'.repeat(1024 * 1024));
    appendFileSync(path, `"}\n${after}\n`);
  }

  it('in the record of claims: refused by its number (a damaged line, which claims repair sets aside), not read as a record', async () => {
    const store = { origin: 'https://api.example.com', storeId: 'store_1' };
    const path = join(dir, recordFileName(store));
    writeFileSync(path, `${JSON.stringify({ v: 1, type: 'header', record: 'opcli claims', origin: store.origin, storeId: store.storeId, created: at })}\n`, {
      mode: 0o600,
    });
    appendLong(path, 3, JSON.stringify({ v: 1, issuance: 'b', key: key(2), type: 'outcome', at, status: 'filed' }));
    const opened = () => ClaimRecord.openSync({ place: { dir }, store });
    expect(opened).toThrow(expect.objectContaining({ exitCode: 2 }));
    expect(opened).toThrow(`The record of claims ${path} cannot be read: line 2 is longer than 1 MiB, which no record opcli writes is.`);
    // The one damage policy names the line and the byte it starts at (issue 40): the header's length.
    const headerBytes = readFileSync(path, 'utf8').indexOf('\n') + 1;
    expect(opened).toThrow(`Line 2 starts at byte ${headerBytes} of the file.`);
    const tolerant = ClaimRecord.openSync({ place: { dir }, store, tolerateDamage: true });
    try {
      expect(tolerant.damaged).toEqual([{ line: 2, byte: headerBytes, kind: 'long' }]);
      expect([...tolerant.all()].map((r) => r.type)).toEqual(['header', 'outcome']);
    } finally {
      tolerant.close();
    }
  });

  it('in a journal: refused by its number, nothing taken from it', async () => {
    const path = join(dir, 'j.jsonl');
    writeFileSync(path, `${JSON.stringify({ journal: 'opcli claims', version: 3, created: at, service: { origin: null, storeId: null } })}\n`);
    appendLong(path, 3, JSON.stringify({ key: key(2), line: 3, status: 'filed', at }));
    await expect(JournalReader.snapshot(path)).rejects.toThrow(
      `The journal ${path} cannot be read: line 2 is longer than 1 MiB, which no record opcli writes is.`,
    );
  });

  it('in a record read by its schema (a repaired file checked): a damaged line named by its number and byte', () => {
    const long = `{"v":1,"issuance":"a","key":"k","x":"${'x'.repeat(MAX_LINE_BYTES)}"}`;
    const path = join(dir, 'repaired.jsonl');
    writeFileSync(path, `${long}\n{"v":1}\n`);
    const fd = openSync(path, 'r');
    try {
      expect(readLog(fd, { version: 1, parse: (v) => v }, () => {}).damaged).toEqual([{ line: 1, byte: 0, kind: 'long' }]);
    } finally {
      closeSync(fd);
    }
    expect(describeDamage({ line: 1, kind: 'long' })).toBe('line 1 is longer than 1 MiB, which no record opcli writes is');
  });
});
