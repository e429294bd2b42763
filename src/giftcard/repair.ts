/**
 * The gift card ledger as a file `giftcard repair` can set damaged lines aside in
 * (src/record/repair.ts does it for every record of actions).
 */
import { osUser } from '../config/user-name.js';
import type { RepairTarget } from '../record/repair.js';
import { setAsideLine } from '../record/log.js';
import { type Ledger, LedgerRecord } from './ledger.js';

/** The ledger as a file to repair. */
export function ledgerRepairTarget(ledger: Ledger): RepairTarget {
  return {
    path: ledger.path,
    what: 'gift card ledger',
    command: 'opcli giftcard repair',
    shared: ledger.shared,
    withLock: (fn) => ledger.withLock(fn),
    damaged: () => ledger.read().damaged,
    parse: (v) => LedgerRecord.safeParse(v).data,
    accept: () => ledger.acceptAsItIs(),
    setAside: (d, reason, at) => setAsideLine(d, reason, at, osUser()),
  };
}
