/**
 * A last line cut short is ended in one way by both clients of the record (src/record/log.ts
 * LogGroup's opening): the gift card ledger's durable append and the record of claims opened to
 * file. What reaches the disk is checked: a torn last line gets a newline and one set-aside line
 * naming it (its action uncertain); a last line that lost only its newline gets the newline alone;
 * a torn line set aside earlier is never set aside again. (The places keep no witness: a line that
 * lost its newline is cut here by truncating the file, which a witness would rightly refuse.)
 */
import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClaimRecord, recordFileName } from '../../src/claims/record.js';
import { Ledger, LEDGER_FILE } from '../../src/giftcard/ledger.js';
import { ledgerAttempt, recordsFolder } from './fixtures.js';

const folder = recordsFolder();

const at = '2026-12-01T10:00:00.000Z';
const hex = (s: string) => createHash('sha256').update(s).digest('hex');

/** One way of writing a record: append one action naming `id`, and the record's file. */
interface Client {
  path(): string;
  append(id: string): Promise<void>;
  /** The first bytes of an action's line naming `id`, as an interrupted write leaves them. */
  torn(id: string): string;
  /** The key the record files `id` under, as a set-aside line names it. */
  key(id: string): string;
}

const attempt = (id: string) => ledgerAttempt(id, at);

const ledger: Client = {
  path: () => join(folder.dir, LEDGER_FILE),
  append: async (id) => new Ledger({ dir: folder.dir }).appendLocked(attempt(id)),
  torn: (id) => JSON.stringify(attempt(id)).slice(0, 140),
  key: (id) => attempt(id).key,
};

const store = { origin: 'https://api.example', storeId: 'store_1' };
const claims: Client = {
  path: () => join(folder.dir, recordFileName(store)),
  append: async (id) => {
    const record = await ClaimRecord.open({ place: { dir: folder.dir }, store, lock: { waitMs: 0 } });
    try {
      record.intents([{ issuance: `f-${id}`, key: hex(id), source: 'prompt', profile: 'default' }]);
    } finally {
      record.close();
    }
  },
  torn: (id) => `{"v":1,"issuance":"f-${id}","key":"${hex(id)}","type":"intent","at":"2026`,
  key: hex,
};

const lines = (c: Client) => readFileSync(c.path(), 'utf8').split('\n');
const setAside = (c: Client) => lines(c).flatMap((l) => (l.includes('"type":"set-aside"') ? [JSON.parse(l) as { line: number; key: string }] : []));

describe.each([
  ['the gift card ledger', ledger],
  ['the record of claims', claims],
])('a last line cut short in %s', (_name, c) => {
  it('is ended and set aside once, by the next write; a later last line that lost only its newline gets the newline alone', async () => {
    await c.append('C-1');
    appendFileSync(c.path(), c.torn('C-2'));
    const tornLine = lines(c).length;
    await c.append('C-3');
    expect(lines(c)[tornLine - 1]).toBe(c.torn('C-2'));
    expect(setAside(c)).toEqual([expect.objectContaining({ line: tornLine, key: c.key('C-2') })]);

    // The last line written whole but its newline lost: it is ended, and nothing else is set aside.
    const before = readFileSync(c.path(), 'utf8');
    truncateSync(c.path(), Buffer.byteLength(before) - 1);
    await c.append('C-4');
    const after = readFileSync(c.path(), 'utf8');
    expect(after.startsWith(before)).toBe(true);
    expect(after.slice(before.length)).toMatch(/^[^\n]*"C-4|^[^\n]*"f-C-4/);
    expect(setAside(c)).toHaveLength(1);

    // A second torn last line, after the first was set aside: the set-aside names it, not the first.
    appendFileSync(c.path(), c.torn('C-5'));
    const second = lines(c).length;
    await c.append('C-6');
    expect(setAside(c).map((s) => [s.line, s.key])).toEqual([
      [tornLine, c.key('C-2')],
      [second, c.key('C-5')],
    ]);
  });
});
