import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JournalReader, PriorIndex } from '../../src/claims/journal.js';
import { tempConfigDir } from '../helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempConfigDir());
});
afterEach(() => cleanup());

const key = (i: number) => createHash('sha256').update(String(i)).digest('hex').slice(0, 32);

describe('PriorIndex (the compact index of earlier outcomes)', () => {
  it('finds every key after growing, keeps the last outcome of an attempt (filed stays filed), and tells keys apart by 64 bits', () => {
    const index = new PriorIndex();
    for (let i = 0; i < 50_000; i++) index.set(key(i), i % 3 === 0 ? 'filed' : 'sending', i * 100);
    for (let i = 0; i < 50_000; i += 3) index.set(key(i), 'rejected', i * 100 + 1);
    for (let i = 1; i < 50_000; i += 3) index.set(key(i), 'rejected', i * 100 + 1);
    expect(index.size).toBe(50_000);
    for (let i = 0; i < 50_000; i++) {
      // A filed row stays filed whatever follows (src/record/outcome.ts); a sending row takes its outcome.
      const want =
        i % 3 === 0 ? { status: 'filed', offset: i * 100 } : i % 3 === 1 ? { status: 'rejected', offset: i * 100 + 1 } : { status: 'sending', offset: i * 100 };
      expect(index.get(key(i))).toMatchObject(want);
    }
    expect(index.get(key(50_000))).toBeUndefined();
    // Same first 32 bits, different next 32: two keys. Only the last 64 of 128 bits differ: one key.
    const a = `${'0'.repeat(8)}${'1'.repeat(8)}${'2'.repeat(16)}`;
    index.set(a, 'filed', 7);
    expect(index.get(`${'0'.repeat(8)}${'3'.repeat(8)}${'2'.repeat(16)}`)).toBeUndefined();
    expect(index.get(`${'0'.repeat(8)}${'1'.repeat(8)}${'9'.repeat(16)}`)).toMatchObject({ status: 'filed', offset: 7 });
  });
});

describe('a journal of 0.2.0, read', () => {
  it('reads outcomes back with their sourceOrderId and reason only when asked, from any entry size; a torn line is skipped', async () => {
    const path = join(dir, 'j.jsonl');
    const long = 'x'.repeat(5000);
    writeFileSync(
      path,
      [
        { journal: 'opcli claims', version: 2 },
        { key: key(1), line: 2, status: 'sending' },
        { key: key(1), line: 2, status: 'filed', sourceOrderId: 'ord_1' },
        { key: key(2), line: 3, status: 'sending' },
        { key: key(2), line: 3, status: 'rejected', reason: long, errors: [{ path: 'item.price', message: long }] },
        { key: key(3), line: 4, status: 'sending' },
      ]
        .map((e) => JSON.stringify({ ...e, at: '2024-05-01T10:00:00.000Z' }))
        .join('\n') + `\n{"key":"${key(4)}","line":5,"sta`,
    );
    const journal = await JournalReader.snapshot(path);
    try {
      expect(journal.priorEntries).toBe(5);
      const filed = journal.priorOutcome(key(1));
      expect(filed?.status).toBe('filed');
      expect(await journal.priorDetail(filed as NonNullable<typeof filed>)).toEqual({ sourceOrderId: 'ord_1', reason: undefined });
      const rejected = journal.priorOutcome(key(2));
      expect(rejected?.status).toBe('rejected');
      expect(await journal.priorDetail(rejected as NonNullable<typeof rejected>)).toEqual({ sourceOrderId: undefined, reason: long });
      expect(journal.priorOutcome(key(3))?.status).toBe('sending');
      expect(journal.priorOutcome(key(4))).toBeUndefined();
    } finally {
      await journal.closeReader();
    }
  });
});
