/**
 * `giftcard repair`: sets the damaged lines of the ledger aside so money can move again, without
 * forgetting them (src/core/record-repair.ts does it for every record of actions). No prompt, no print.
 */
import { planRepairOf, type RepairPlan, type RepairTarget, repairFile } from '../core/record-repair.js';
import { type Ledger, LedgerRecord, type SetAsideRecord, TORN_REASON } from './ledger.js';

export type { RepairPlan } from '../core/record-repair.js';

/** The ledger as a file to repair. */
function target(ledger: Ledger, user: string): RepairTarget {
  return {
    path: ledger.path,
    what: 'gift card ledger',
    command: 'opcli giftcard repair',
    shared: ledger.shared,
    withLock: (fn) => ledger.withLock(fn),
    damaged: () => ledger.read().damaged,
    parse: (v) => LedgerRecord.safeParse(v).data,
    accept: () => ledger.acceptAsItIs(),
    setAside: (d, reason, at) => {
      const record: SetAsideRecord = {
        v: 1,
        type: 'set-aside',
        issuance: d.issuance ?? `damaged-line-${d.line}`,
        key: d.key ?? 'unknown',
        at,
        user,
        line: d.line,
        reason,
      };
      return JSON.stringify(LedgerRecord.parse(record));
    },
  };
}

/** The damaged lines the repair would set aside (none when the ledger reads cleanly); refuses lines of a newer opcli. */
export function planRepair(ledger: Ledger): RepairPlan {
  return planRepairOf(target(ledger, ''));
}

/**
 * Sets the damaged lines aside under the ledger's lock: the file is kept whole at `<ledger>.damaged-<time>`,
 * then replaced (atomically, by a rename) with each damaged line turned into a `set-aside` record.
 */
export async function repairLedger(ledger: Ledger, env: { now(): number; user: string }): Promise<RepairPlan> {
  return repairFile(target(ledger, env.user), env, TORN_REASON);
}
