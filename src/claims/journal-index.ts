/**
 * What the batch journal remembers of earlier runs, in key-table.ts tables (30 bytes a key, so a
 * journal of a million rows fits): each key's last outcome with the byte offsets of its entries,
 * and for each "looks like" fingerprint the key of the last row sent with it. The entries
 * themselves stay in the file and are read back by offset when a message needs them.
 */
import { HEX64 } from '../record/fields.js';
import { type JournalStatus, statusCode, statusOfCode } from './journal-format.js';
import { half, KeyTable } from '../record/key-table.js';
import { actOn, claimMayExist, claimWeight, endAttempt, fromFlags, type Standing, standingFlags, startAttempt } from '../record/outcome.js';

/** What the journal remembers of a row from earlier runs. */
export interface PriorOutcome {
  status: JournalStatus;
  /** Byte offset of the last entry of the key, where `priorDetail` reads its sourceOrderId and reason. */
  offset: number;
  /** Byte offset of its last `sending` entry (-1 when none): its line, date, content tag and claim. */
  sendOffset: number;
  /** The content tag of that entry (0 when none). */
  tag: number;
}

/** The last outcome of each key of earlier runs (a key-table.ts table: 30 bytes a slot). */
export class PriorIndex {
  private readonly table = new KeyTable(1024, (n) => ({
    /** statusCode of the status. */
    status: new Uint8Array(n),
    /** Byte offset of the key's last entry. */
    offset: new Float64Array(n),
    /** 1 + the byte offset of its last `sending` entry (0: none). */
    sendOffset: new Float64Array(n),
    tag: new Uint32Array(n),
    /** standingFlags (src/record/outcome.ts). */
    flags: new Uint8Array(n),
  }));

  get size(): number {
    return this.table.size;
  }

  /**
   * Records an entry of a key: a `sending` entry starts an attempt (and sets the content), an outcome
   * settles it, by the one rule of src/record/outcome.ts (a filed row stays filed).
   */
  set(key: string, status: JournalStatus, offset: number, tag?: number): void {
    const code = statusCode(status);
    if (code === undefined || !HEX64.test(key)) return;
    const i = this.table.slot(key);
    const c = this.table.columns;
    const before: Standing<JournalStatus> | undefined = this.table.fresh
      ? undefined
      : { state: statusOfCode(c.status[i] as number), ...fromFlags(c.flags[i] as number) };
    const after =
      status === 'sending'
        ? startAttempt(before, status, undefined, claimWeight)
        : (endAttempt(before, status, undefined, claimWeight) ?? { state: status, settled: true, earlierMaybe: false });
    if (after === before) return;
    c.status[i] = statusCode(after.state) as number;
    c.flags[i] = standingFlags(after);
    c.offset[i] = offset;
    if (status === 'sending') {
      c.sendOffset[i] = offset + 1;
      c.tag[i] = (tag ?? 0) >>> 0;
    }
  }

  /** The last outcome recorded for a key. */
  get(key: string): PriorOutcome | undefined {
    if (!HEX64.test(key)) return undefined;
    const i = this.table.find(key);
    if (i < 0) return undefined;
    const c = this.table.columns;
    return {
      status: actOn({ state: statusOfCode(c.status[i] as number), ...fromFlags(c.flags[i] as number) }, 'uncertain', claimWeight),
      offset: c.offset[i] as number,
      sendOffset: (c.sendOffset[i] as number) - 1,
      tag: c.tag[i] as number,
    };
  }
}

/**
 * The "looks like" index: for each similarity fingerprint of earlier runs, the key of the last row
 * sent with it (preferring one whose claim exists or may exist).
 */
export class SimilarIndex {
  private readonly table = new KeyTable(256, (n) => ({ khi: new Uint32Array(n), klo: new Uint32Array(n) }));

  /** Remembers `key` for `sim`, unless `keep(existing key)` says the one already there is better. */
  set(sim: string, key: string, keep: (existing: string) => boolean): void {
    if (!HEX64.test(sim) || !HEX64.test(key)) return;
    const i = this.table.slot(sim);
    if (!this.table.fresh && keep(this.keyAt(i))) return;
    this.table.columns.khi[i] = half(key, 0);
    this.table.columns.klo[i] = half(key, 8);
  }

  /** The key (its first 64 bits, enough for `PriorIndex.get`) of the row remembered for `sim`. */
  get(sim: string): string | undefined {
    if (!HEX64.test(sim)) return undefined;
    const i = this.table.find(sim);
    return i < 0 ? undefined : this.keyAt(i);
  }

  private keyAt(i: number): string {
    const c = this.table.columns;
    return `${(c.khi[i] as number).toString(16).padStart(8, '0')}${(c.klo[i] as number).toString(16).padStart(8, '0')}`;
  }
}

/** Remembers a `sending` entry of `key` under its fingerprint, keeping an earlier row whose claim may exist. */
export function rememberSimilar(prior: PriorIndex, similar: SimilarIndex, sim: string, key: string): void {
  similar.set(sim, key, (existing) => {
    const p = prior.get(existing);
    return p !== undefined && claimMayExist(p.status) && existing !== key.slice(0, 16);
  });
}
