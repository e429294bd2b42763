/**
 * The lines of a batch journal of opcli 0.2.0: what an entry and a header hold (a repaired first
 * line becomes a header). No file access here (journal-read.ts reads the file).
 */
import { randomBytes } from 'node:crypto';
import type { FieldIssue } from '../schemas.js';

/**
 * sending: the request may be on its way (a crash leaves this, which reads as uncertain);
 * filed: created, with its sourceOrderId; rejected: refused by the API (nothing created);
 * uncertain: sent, fate unknown; not_sent: provably never created (sent again on the next run).
 */
export type JournalStatus = 'sending' | 'filed' | 'rejected' | 'uncertain' | 'not_sent';

export interface JournalEntry {
  key: string;
  line: number;
  status: JournalStatus;
  at: string;
  sourceOrderId?: string;
  reason?: string;
  errors?: FieldIssue[];
  /** `sending` only: the "looks like" fingerprint (identity.ts `similarity`). */
  sim?: string;
  /** `sending` only: the 32-bit tag of the row's content hash (tells a changed row under one `--key`). */
  tag?: number;
  /** `sending` only: the claim in its robust form (identity.ts), to show what differs when a similar row turns up. */
  claim?: unknown;
}

/** What a journal's header line starts with: what wrote it and in which format. */
export const JOURNAL_HEADER = { journal: 'opcli claims', version: 3 } as const;
/** The format before the service was recorded (opcli 0.2 to 0.x): still read, see journal-read.ts. */
export const LEGACY_VERSION = 2;

/** The service and store a journal section's rows were filed with. */
export interface JournalService {
  /** The API base URL's origin (scheme://host:port), or null when none was set. */
  origin: string | null;
  /** The store the profile files for, or null when the rows carry it. */
  storeId: string | null;
  /** The profile's name: for the person reading the file, never compared. */
  profile?: string;
}

/**
 * A header line (docs/guides/batch-claims.md#the-journals-header): the first line of a journal, and
 * again wherever a run with another service or store starts appending. Entries below it belong to it.
 * `{"journal":"opcli claims","version":3,"created":"…","service":{"origin":"https://…","storeId":"…","profile":"…"}}`
 */
export interface JournalHeader {
  journal: typeof JOURNAL_HEADER.journal;
  version: typeof JOURNAL_HEADER.version;
  created: string;
  /**
   * A random id of the file, in its first header (later headers repeat it): the record of claims
   * names it with each batch run, so a journal deleted and made again is never taken for the one
   * the run wrote (journal-read.ts `id`). Journals of 0.2.0 have none (their first `created` serves).
   */
  id?: string;
  service: JournalService;
}

/** The service of a run without a profile (tests of the journal alone). */
export const NO_SERVICE: JournalService = { origin: null, storeId: null };

/** The base URL's origin, as a header records it (null when there is none or it is not a URL). */
export function serviceOrigin(baseUrl: string | undefined): string | null {
  if (!baseUrl) return null;
  try {
    return new URL(baseUrl).origin;
  } catch {
    return null;
  }
}

/** Whether two sections were filed with the same service and store (the profile's name aside). */
export const sameService = (a: JournalService, b: JournalService) => a.origin === b.origin && a.storeId === b.storeId;

/** "https://api.example.com, store store_1 (profile prod)". */
export function describeService(s: JournalService): string {
  return `${s.origin ?? '(no base URL)'}, store ${s.storeId ?? '(none: rows carry it)'}${s.profile ? ` (profile ${s.profile})` : ''}`;
}

/** A header's service, when it is one (origin and storeId: a string or null each). */
export function readService(value: unknown): JournalService | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const ok = (x: unknown) => x === null || typeof x === 'string';
  if (!ok(v.origin) || !ok(v.storeId)) return undefined;
  return { origin: v.origin as string | null, storeId: v.storeId as string | null, profile: typeof v.profile === 'string' ? v.profile : undefined };
}

/** The header line a run writes before its entries, with its newline; `id`: the file's (a new one for a new file). */
export function headerLine(service: JournalService, created: string, id: string = newJournalId()): string {
  const header: JournalHeader = { ...JOURNAL_HEADER, created, id, service };
  return `${JSON.stringify(header)}\n`;
}

/** A new journal file's id. */
export function newJournalId(): string {
  return randomBytes(8).toString('hex');
}

const STATUS_CODES: readonly JournalStatus[] = ['sending', 'filed', 'rejected', 'uncertain', 'not_sent'];
const STATUS_CODE = new Map(STATUS_CODES.map((s, i) => [s, i + 1]));

/** A status as a small number (1 + its index), for the compact index; undefined when it is not one. */
export const statusCode = (status: unknown): number | undefined => STATUS_CODE.get(status as JournalStatus);
/** The status of a `statusCode`. */
export const statusOfCode = (code: number): JournalStatus => STATUS_CODES[code - 1] as JournalStatus;
