/**
 * The record of claims on the record's index (issue 40): a claim is found by key and by similarity
 * from the index kept in the reader's config folder, and lines moved under the index (two lines of
 * one length swapped, so the covered part still ends as the index says) never give an answer that
 * skips a filed claim: the record is read whole again and the broken chain stops the command, naming
 * the line.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClaimRecord } from '../../src/claims/record.js';
import { batchIntentLine, headerLine, outcomeLine, recordFileName } from '../../src/claims/record-format.js';
import { LogWriter, openLog } from '../../src/record/log.js';
import { recordsFolder } from './fixtures.js';

const store = { origin: 'https://api.example', storeId: 'store_1' };
const hex = (s: string) => createHash('sha256').update(s).digest('hex');
const at = '2026-01-01T00:00:00.000Z';

const folder = recordsFolder();

/** Claims 1..n, each an intent then its outcome (filed), as a batch writes them: lines 3, 5, 7... are intents of one length. */
function writeRecord(n: number): string {
  const fd = openLog({ dir: folder.dir }, recordFileName(store), 'record of claims', true) as number;
  let text = headerLine(store, at);
  text += `${JSON.stringify({ v: 1, type: 'run', run: 'r1', at, user: 'alice', host: 'desk', profile: 'default', source: '/data/a.csv' })}\n`;
  for (let i = 1; i <= n; i++) {
    text += batchIntentLine(
      { issuance: `f${i}`, key: hex(`k${i}`), run: 'r1', line: i + 1, sim: hex(`s${i}`), email: `c${i}@example.com`, item: `Kettle ${i}` },
      at,
    );
    text += outcomeLine({ issuance: `f${i}`, key: hex(`k${i}`), status: 'filed', sourceOrderId: `SO-${i}` }, at);
  }
  new LogWriter().append(fd, text);
  return join(folder.dir, recordFileName(store));
}

const open = () => ClaimRecord.openSync({ place: { dir: folder.dir, configDir: folder.configDir }, store });

describe('the record of claims on the index', () => {
  it('finds each claim by key and by similarity, from an index in the reader’s config folder', () => {
    writeRecord(9);
    const record = open();
    try {
      for (let i = 1; i <= 9; i++) {
        expect(record.lookup(hex(`k${i}`))).toMatchObject({
          state: 'filed',
          intent: { line: i + 1, user: expect.stringContaining('alice'), source: '/data/a.csv' },
          outcome: { sourceOrderId: `SO-${i}` },
        });
        expect(record.similar(hex(`s${i}`), hex('another'))).toMatchObject({ state: 'filed', intent: { key: hex(`k${i}`) } });
        expect(record.similar(hex(`s${i}`), hex(`k${i}`))).toBeUndefined();
      }
      expect(record.lookup(hex('k10'))).toBeUndefined();
    } finally {
      record.close();
    }
    expect(existsSync(join(folder.configDir, 'record-index'))).toBe(true);
    expect(existsSync(join(folder.dir, 'record-index'))).toBe(false);
  });

  it('two intents of one length swapped under the index (each pair of a family): the record is read whole, the first moved line named, exit 2', () => {
    for (const [a, b] of [
      [3, 5],
      [3, 9],
      [7, 11],
    ] as const) {
      rmSync(join(folder.configDir, 'record-index'), { recursive: true, force: true });
      rmSync(folder.dir, { recursive: true, force: true });
      mkdirSync(folder.dir, { recursive: true, mode: 0o700 });
      const path = writeRecord(6);
      open().close();
      const lines = readFileSync(path, 'utf8').split('\n');
      expect((lines[a - 1] as string).length).toBe((lines[b - 1] as string).length);
      [lines[a - 1], lines[b - 1]] = [lines[b - 1] as string, lines[a - 1] as string];
      writeFileSync(path, lines.join('\n'));
      const record = open();
      try {
        // The claim whose intent moved: its entry names a line holding another key.
        const asked = hex(`k${(a - 1) / 2}`);
        expect(() => record.lookup(asked), `lines ${a} and ${b} swapped`).toThrow(expect.objectContaining({ exitCode: 2 }));
        expect(() => record.lookup(asked)).toThrow(new RegExp(`line ${a} does not follow the line before it`));
      } finally {
        record.close();
      }
    }
  });
});
