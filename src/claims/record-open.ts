/**
 * Which record of claims a profile files against, picked in this one place (as openLedger picks the
 * gift card ledger): the team's record in PostgreSQL when the profile has a record-url
 * (src/record-pg/claims.ts), else the file record (record.ts) in the config folder or the record-dir.
 * Both answer the same questions (ClaimsRecord), so a single claim, a batch and `claims history`
 * are one code whatever holds the record. The database's answers are promises: callers await them.
 */
import type { ResolvedProfile } from '../config/profile.js';
import { type RecordPlace, recordPlace } from '../config/record-dir.js';
import type { ConnectionContext } from '../record-pg/connection.js';
import { DatabaseClaimRecord, type Taken } from '../record-pg/claims.js';
import { type ClaimEntry, type ClaimHistoryFilter, filingFilter, claimEntry, openClaimHistory } from './history.js';
import { ClaimRecord, type OpenRecord } from './record.js';
import type { BatchRow, NewIntent, OutcomeLine, RecordHit, RecordStore } from './record-format.js';

export type { Taken } from '../record-pg/claims.js';

/**
 * What writing intents answers: nothing (the file record, under its lock, takes every intent), or
 * the filings another member committed first (the database), which must not be sent.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: the file record's writes return nothing
export type Durable = Taken | undefined | void;

/** An answer now (the file) or later (the database). */
type Answer<T> = T | Promise<T>;

/** The record of claims of one store, as its clients use it (ClaimRecord and DatabaseClaimRecord). */
export interface ClaimsRecord {
  /** The file's path, or `record database HOST:PORT/DB` (never the password). */
  readonly path: string;
  /** A batch run's provenance (`journal`: the batch's name, docs/spec-choices.md#the-same-batch), written before its first intents. */
  startRun(run: string, details: { profile: string; source: string; journal?: string }, now?: number): void;
  /** What the record holds for a content key (undefined: never filed from anywhere). */
  lookup(key: string): Answer<RecordHit | undefined>;
  /**
   * A batch's resume: what the earlier runs of the batch named `batch` did with a row, by its row key
   * or by its "looks like" fingerprint in the batch (undefined: the batch never tried it).
   */
  batchRow(batch: string, by: { key: string } | { like: string }): Answer<BatchRow | undefined>;
  /** The last claim that may exist with this similarity fingerprint and another key. */
  similar(sim: string | undefined, key: string): Answer<RecordHit | undefined>;
  /** One claim's intent, durable before it returns; the filings in `Taken` (another member's attempt first) must not be sent. */
  intents(lines: NewIntent[], now?: number): Answer<Durable>;
  /** A batch group's intents, durable when the promise resolves; the filings in `Taken` must not be sent. */
  intentsDurable(lines: NewIntent[], now?: number): Promise<Durable>;
  /** Queues an attempt's outcome. */
  outcome(o: Omit<OutcomeLine, 'v' | 'type' | 'at'>, now?: number): void;
  /** Whether another run took the record's lock since it was opened (the database takes none: never). */
  lost(): boolean;
  /** Writes what is queued, durably, and closes. */
  closeDurable(): Promise<void>;
  /** Closes (the file: what is queued is written; the database: closeDurable writes it). */
  close(): Answer<void>;
}

/** What picking the record needs beyond the profile: the environment and folder the database's credentials are read from (libpq's rules). */
export type RecordContext = Omit<ConnectionContext, 'passwordSource'>;

/** The store a profile files for. */
export interface OpenClaims {
  store: RecordStore;
  /** To file: the file record's lock is taken, waiting this long for another run (the database takes none). */
  lock?: OpenRecord['lock'];
}

/** The record of claims for a profile: the database with a record-url, else the file record in `place` (recordPlace: checked before anything else is read or written). */
export async function openClaimsRecord(
  place: RecordPlace,
  profile: ResolvedProfile | undefined,
  ctx: RecordContext,
  options: OpenClaims,
): Promise<ClaimsRecord> {
  if (!profile?.record) return ClaimRecord.open({ place, store: options.store, lock: options.lock });
  // The file record of this config folder and of every place it lived before: read, never written.
  const earlier = ClaimRecord.openSync({ place, store: options.store });
  return DatabaseClaimRecord.open(profile.record, { ...ctx, passwordSource: profile.record.passwordSource }, options.store, earlier);
}

/** `claims history`'s reader: the claims as they come, the lines it could not read, its place in words. */
export interface ClaimHistory {
  path: string;
  damaged: string[];
  each: (filter: ClaimHistoryFilter, emit: (c: ClaimEntry) => void) => Answer<void>;
  close: () => Answer<void>;
}

/** The history of a profile's record of claims: streamed from the database with a record-url, else from the file record. */
export async function openClaimsHistory(configDir: string, profile: ResolvedProfile, ctx: RecordContext, store: RecordStore): Promise<ClaimHistory> {
  const place = recordPlace(configDir, profile);
  if (!profile.record) return openClaimHistory({ place, store });
  const record = await DatabaseClaimRecord.open(profile.record, { ...ctx, passwordSource: profile.record.passwordSource }, store, undefined);
  return {
    path: record.path,
    damaged: [],
    each: (filter, emit) => {
      const matches = filingFilter(filter);
      return record.eachClaim(filter, (attempts) => {
        const claim = claimEntry(attempts);
        if (claim.rows.some(matches)) emit(claim.entry);
      });
    },
    close: () => record.close(),
  };
}
