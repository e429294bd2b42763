/**
 * What the tests of the record share: a records folder inside a fresh config folder for each test,
 * and a credit's attempt line as `giftcard issue` writes it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { issuanceKey, type LedgerRecord } from '../../src/giftcard/ledger.js';
import { tempConfigDir } from '../helpers.js';

/** A config folder made before each test of the calling file and removed after it, with its `records` folder (0700). */
export function recordsFolder(): { readonly configDir: string; readonly dir: string } {
  let temp: ReturnType<typeof tempConfigDir> | undefined;
  beforeEach(() => {
    temp = tempConfigDir();
    mkdirSync(join(temp.dir, 'records'), { recursive: true, mode: 0o700 });
  });
  afterEach(() => temp?.cleanup());
  const configDir = () => {
    if (!temp) throw new Error('recordsFolder() is used inside a test');
    return temp.dir;
  };
  return {
    get configDir() {
      return configDir();
    },
    get dir() {
      return join(configDir(), 'records');
    },
  };
}

/** The attempt line of a credit for claim `id` (order 1001, 5.00, by alice), as `giftcard issue` writes it. */
export function ledgerAttempt(id: string, at = '2026-12-01T10:00:00.000Z'): LedgerRecord {
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
