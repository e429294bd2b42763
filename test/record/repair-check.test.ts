/**
 * A repair replaces a record only with a file that reads cleanly by the record's own rules
 * (src/record/repair.ts): the new file is read back with the client's schema before the rename. A
 * repair whose result would still be damaged says so, and the record on disk stays byte for byte as
 * it was, with no temporary file left beside it; the copy of the damaged file is kept.
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { issuanceKey, Ledger, LEDGER_FILE, type LedgerRecord } from '../../src/giftcard/ledger.js';
import { repairFile } from '../../src/record/repair.js';
import { tempConfigDir } from '../helpers.js';

let temp: ReturnType<typeof tempConfigDir>;
let dir: string;
beforeEach(() => {
  temp = tempConfigDir();
  dir = join(temp.dir, 'records');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
});
afterEach(() => temp.cleanup());

const at = '2026-12-01T10:00:00.000Z';

function attempt(id: string): LedgerRecord {
  const key = issuanceKey({ claimId: id, orderNumber: '1001', bonus: false }, { shopUrl: 'shop.example', storeId: 'store_1' });
  return {
    ...{ v: 1 as const, issuance: `i-${id}`, key, at, user: 'alice' },
    type: 'attempt',
    claimId: id,
    orderNumber: '1001',
    bonus: false,
    amountCents: 500,
    amount: '5.00',
    email: 'ann@example.com',
    name: 'Ann',
    profile: 'default',
    firstPath: 'trigger',
    forced: false,
    host: 'h',
  };
}

it('a repair whose new file would not read cleanly by the ledger schema leaves the ledger as it was', async () => {
  const ledger = new Ledger({ dir });
  await ledger.appendLocked(attempt('c-1'));
  appendFileSync(join(dir, LEDGER_FILE), 'not a record\n');
  const before = readFileSync(join(dir, LEDGER_FILE));
  // A set-aside line the ledger's schema does not read (its type is none of the ledger's).
  const target = { ...ledger.repairTarget(), setAside: () => JSON.stringify({ v: 1, issuance: 'x', key: 'k', type: 'nonsense' }) };

  await expect(repairFile(target, { now: () => Date.parse(at) })).rejects.toThrow(
    `The repaired gift card ledger ${join(dir, LEDGER_FILE)} would still have damaged line(s) 2.`,
  );
  expect(readFileSync(join(dir, LEDGER_FILE))).toEqual(before);
  const names = readdirSync(dir);
  expect(names.filter((n) => n.includes('.repair-'))).toEqual([]);
  expect(names.filter((n) => n.includes('.damaged-'))).toHaveLength(1);
});

it('the same ledger repaired by its own target reads cleanly, the damaged line set aside in place', async () => {
  const ledger = new Ledger({ dir });
  await ledger.appendLocked(attempt('c-1'));
  appendFileSync(join(dir, LEDGER_FILE), 'not a record\n');

  const plan = await repairFile(ledger.repairTarget(), { now: () => Date.parse(at) });
  expect(plan.lines.map((d) => d.line)).toEqual([2]);
  const lines = readFileSync(join(dir, LEDGER_FILE), 'utf8').trimEnd().split('\n');
  expect(lines.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(['attempt', 'set-aside']);
  expect(ledger.read().damaged).toEqual([]);
});
