/**
 * The issuance ledger: an append-only JSONL file in the config folder (0600), written under a
 * cross-process lock. Every issuance writes an `attempt` record before any money is sent, then an
 * `outcome`; later findings (a late trigger credit) are appended as `warning` records. Nothing is
 * ever rewritten, so the file is the record of what was done, by whom and when.
 */
import { closeSync, constants, writeSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { withFileLock } from '../config/lock.js';
import { ensurePrivateDir, openPrivateFile, readPrivateFile } from '../config/private-file.js';

export const LEDGER_FILE = 'giftcard-ledger.jsonl';

/** How the credit reached the customer. */
export const CreditPath = z.enum(['trigger', 'credit-api-top-up', 'credit-api-issue', 'native']);
export type CreditPath = z.infer<typeof CreditPath>;

/** Final state of an issuance. `uncertain`: a request may have moved money but no answer says so. */
export const OutcomeStatus = z.enum(['issued', 'failed', 'uncertain']);
export type OutcomeStatus = z.infer<typeof OutcomeStatus>;

const Common = {
  v: z.literal(1),
  /** One id per issuance, shared by its attempt, outcome and warnings. */
  issuance: z.string(),
  /**
   * CHOICE (docs/spec-choices.md#ledger-key): what may be paid only once: `shop:<provider shop>|store:<service store>|claim:<id>` (or
   * `|bonus:<order number>`). Records written before the shop and store were part of the key hold
   * only `claim:<id>` / `bonus:<order>`, and still block the same claim in every shop.
   */
  key: z.string(),
  at: z.string(),
  user: z.string(),
};

export const AttemptRecord = z.object({
  ...Common,
  type: z.literal('attempt'),
  claimId: z.string().optional(),
  orderNumber: z.string(),
  bonus: z.boolean(),
  amountCents: z.number().int(),
  amount: z.string(),
  email: z.string(),
  name: z.string(),
  customerId: z.string().optional(),
  profile: z.string(),
  shopUrl: z.string().optional(),
  /** The service's store the claim belongs to. */
  storeId: z.string().optional(),
  /** The currency of `amount` (older records: none, read as the profile's currency). */
  currency: z.string().optional(),
  /** The path the chain will try first. */
  firstPath: z.enum(['trigger', 'credit-api', 'native']),
  forced: z.boolean(),
  host: z.string(),
});
export type AttemptRecord = z.infer<typeof AttemptRecord>;

export const OutcomeRecord = z.object({
  ...Common,
  type: z.literal('outcome'),
  status: OutcomeStatus,
  path: CreditPath.optional(),
  cardId: z.string().optional(),
  balanceCents: z.number().int().optional(),
  /** Whether the trigger workflow was posted (so a late credit may still arrive). */
  triggerPosted: z.boolean(),
  /** The loyalty card a late trigger credit would land on, and its balance without one. */
  watch: z
    .object({ customerId: z.string(), cardId: z.string().nullable(), expectedCents: z.number().int().nullable(), ourCardId: z.string().optional() })
    .optional(),
  possibleDoubleCredit: z.boolean(),
  error: z.string().optional(),
  notes: z.array(z.string()),
});
export type OutcomeRecord = z.infer<typeof OutcomeRecord>;

export const WarningRecord = z.object({
  ...Common,
  type: z.literal('warning'),
  kind: z.literal('possible-double-credit'),
  message: z.string(),
  cardId: z.string().optional(),
  balanceCents: z.number().int().optional(),
});
export type WarningRecord = z.infer<typeof WarningRecord>;

export const LedgerRecord = z.discriminatedUnion('type', [AttemptRecord, OutcomeRecord, WarningRecord]);
export type LedgerRecord = z.infer<typeof LedgerRecord>;

/** An issuance as history shows it: its attempt with the latest outcome and warnings. */
export interface Issuance {
  attempt: AttemptRecord;
  outcome?: OutcomeRecord;
  warnings: WarningRecord[];
}

/** The OS user running opcli (who issued the credit). */
export function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** The machine's name, recorded with each attempt. */
export function hostName(): string {
  try {
    return hostname();
  } catch {
    return 'unknown';
  }
}

/** The ledger in a config folder. */
export class Ledger {
  readonly path: string;
  constructor(private readonly dir: string) {
    this.path = join(dir, LEDGER_FILE);
  }

  /** Runs `fn` holding the ledger's cross-process lock. */
  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    ensurePrivateDir(this.dir);
    return withFileLock(this.dir, 'giftcard-ledger', fn);
  }

  /**
   * Every record, oldest first. A damaged line is reported, never silently dropped. The file is
   * never read through a link, nor from a folder or file another user owns or can write: a planted
   * ledger could hide an earlier credit and let the same claim be paid twice.
   */
  read(): { records: LedgerRecord[]; damaged: number[] } {
    ensurePrivateDir(this.dir);
    const text = readPrivateFile(this.path, 'gift card ledger');
    if (text === undefined) return { records: [], damaged: [] };
    const records: LedgerRecord[] = [];
    const damaged: number[] = [];
    text.split('\n').forEach((line, i) => {
      if (!line.trim()) return;
      try {
        const parsed = LedgerRecord.safeParse(JSON.parse(line));
        if (parsed.success) records.push(parsed.data);
        else damaged.push(i + 1);
      } catch {
        damaged.push(i + 1);
      }
    });
    return { records, damaged };
  }

  /**
   * Appends one record (call inside withLock). The file is created 0600 and never reached through a
   * link (O_NOFOLLOW): a planted link must not make opcli append the record of a payment elsewhere.
   */
  append(record: LedgerRecord): void {
    const line = `${JSON.stringify(LedgerRecord.parse(record))}\n`;
    ensurePrivateDir(this.dir);
    const fd = openPrivateFile(this.path, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND, 'gift card ledger') as number;
    try {
      writeSync(fd, line);
    } finally {
      closeSync(fd);
    }
  }

  /** Appends one record under the lock. */
  async appendLocked(record: LedgerRecord): Promise<void> {
    await this.withLock(async () => this.append(record));
  }

  /** Records grouped by issuance, oldest first. */
  issuances(records = this.read().records): Issuance[] {
    const byId = new Map<string, Issuance>();
    for (const r of records) {
      if (r.type === 'attempt') byId.set(r.issuance, { attempt: r, warnings: [] });
      else {
        const entry = byId.get(r.issuance);
        if (!entry) continue;
        if (r.type === 'outcome') entry.outcome = r;
        else entry.warnings.push(r);
      }
    }
    return [...byId.values()];
  }
}

/**
 * The key that may be paid once: the claim (or the order, for a bonus credit) in one provider shop
 * and one service store. The same shop is the same money whatever the profile, so profiles that
 * point at one shop and store share a key, and a sandbox profile never blocks the real one.
 */
export function issuanceKey(input: { claimId?: string; orderNumber: string; bonus: boolean }, scope: { shopUrl?: string; storeId?: string }): string {
  const what = input.bonus ? `bonus:${input.orderNumber}` : `claim:${input.claimId}`;
  return `shop:${(scope.shopUrl ?? '-').trim().toLowerCase()}|store:${scope.storeId ?? '-'}|${what}`;
}

/** Whether a recorded key is the same claim or order as `key` (an old unscoped key matches any scope). */
function sameKey(recorded: string, key: string): boolean {
  return recorded === key || (!recorded.includes('|') && key.endsWith(`|${recorded}`));
}

/**
 * Earlier issuances that block a new one for the same key: issued, uncertain, or an attempt with no
 * outcome (still running, or the process died mid-way). A `failed` outcome proves nothing was paid.
 */
export function blockingIssuances(issuances: Issuance[], key: string): Issuance[] {
  return issuances.filter((i) => sameKey(i.attempt.key, key) && i.outcome?.status !== 'failed');
}
