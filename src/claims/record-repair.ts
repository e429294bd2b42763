/**
 * The record of claims as a file `claims repair` can set damaged lines aside in
 * (src/record/repair.ts does it for every record of actions).
 */
import { join } from 'node:path';
import { acquireFileLock } from '../config/lock.js';
import { acceptAsItIs, ensureRecordDir, type RecordPlace } from '../config/record-dir.js';
import { osUser } from '../config/user-name.js';
import type { RepairTarget } from '../record/repair.js';
import { ClaimRecord } from './record.js';
import { headerLine, parseRecordLine, type RecordStore, recordFileName } from './record-format.js';
import { setAsideLine } from '../record/log.js';

/** The record of a store as a file `claims repair` can set damaged lines aside in (src/record/repair.ts). */
export function recordRepairTarget(place: RecordPlace, store: RecordStore, now: () => number): RepairTarget {
  const path = join(place.dir, recordFileName(store));
  return {
    path,
    what: 'record of claims',
    command: 'opcli claims repair',
    shared: place.shared,
    withLock: async (fn) => {
      ensureRecordDir(place);
      const lock = await acquireFileLock(place.dir, ClaimRecord.lockName(store), { shared: !!place.shared });
      try {
        return await fn();
      } finally {
        lock.release();
      }
    },
    damaged: () => {
      // Read as a command that files reads it, without refusing: what it finds is what the repair sets aside.
      const probe = ClaimRecord.openSync({ place, store, tolerateDamage: true });
      probe.close();
      return probe.damaged;
    },
    parse: parseRecordLine,
    accept: () => acceptAsItIs(place, recordFileName(store), 'record of claims'),
    setAside: (d, reason, at) => (d.line === 1 ? headerLine(store, new Date(now()).toISOString()).slice(0, -1) : setAsideLine(d, reason, at, osUser())),
  };
}
