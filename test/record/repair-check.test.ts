/**
 * A repair replaces a record only with a file that reads cleanly by the record's own rules
 * (src/record/repair.ts): the new file is read back with the client's schema before the rename. A
 * repair whose result would still be damaged says so, and the record on disk stays byte for byte as
 * it was, with no temporary file left beside it; the copy of the damaged file is kept.
 */
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { Ledger, LEDGER_FILE, LEDGER_LINES } from '../../src/giftcard/ledger.js';
import { repairFile, repairTargetOf } from '../../src/record/repair.js';
import { ledgerAttempt, recordsFolder } from './fixtures.js';

const folder = recordsFolder();

const at = '2026-12-01T10:00:00.000Z';

const attempt = (id: string) => ledgerAttempt(id, at);

it('a repair whose new file would not read cleanly by the ledger schema leaves the ledger as it was', async () => {
  const ledger = new Ledger({ dir: folder.dir });
  await ledger.appendLocked(attempt('c-1'));
  appendFileSync(join(folder.dir, LEDGER_FILE), 'not a record\n');
  const before = readFileSync(join(folder.dir, LEDGER_FILE));
  // A set-aside line the ledger's schema does not read (its type is none of the ledger's).
  const target = { ...repairTargetOf(ledger.place, LEDGER_LINES), setAside: () => JSON.stringify({ v: 1, issuance: 'x', key: 'k', type: 'nonsense' }) };

  await expect(repairFile(target, { now: () => Date.parse(at) })).rejects.toThrow(
    `The repaired gift card ledger ${join(folder.dir, LEDGER_FILE)} would still have damaged line(s) 2.`,
  );
  expect(readFileSync(join(folder.dir, LEDGER_FILE))).toEqual(before);
  const names = readdirSync(folder.dir);
  expect(names.filter((n) => n.includes('.repair-'))).toEqual([]);
  expect(names.filter((n) => n.includes('.damaged-'))).toHaveLength(1);
});

it('the same ledger repaired by its own target reads cleanly, the damaged line set aside in place', async () => {
  const ledger = new Ledger({ dir: folder.dir });
  await ledger.appendLocked(attempt('c-1'));
  appendFileSync(join(folder.dir, LEDGER_FILE), 'not a record\n');

  const plan = await repairFile(repairTargetOf(ledger.place, LEDGER_LINES), { now: () => Date.parse(at) });
  expect(plan.lines.map((d) => d.line)).toEqual([2]);
  const lines = readFileSync(join(folder.dir, LEDGER_FILE), 'utf8').trimEnd().split('\n');
  expect(lines.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(['attempt', 'set-aside']);
  expect(ledger.read().damaged).toEqual([]);
});
