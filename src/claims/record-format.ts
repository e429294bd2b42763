/**
 * The record of claims' lines: their schemas (a line that does not parse is damaged), the file's name
 * for a store, and the text opcli writes: a batch row's lines by hand, the fast path
 * (docs/benchmarks.md#the-record-of-claims), free text quoted by JSON.stringify. No file access here.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as z from 'zod';
import { ACTION_START, WRITER_UID } from '../record/damage.js';
import { SET_ASIDE } from '../record/log.js';
import { claimWeight, RANK } from '../record/outcome.js';

/** A key (or similarity fingerprint) as the record indexes it: hex, at least 64 bits. */
export const HEX64 = /^[0-9a-f]{16}/;

/** `,"name":"text"` with the text quoted by JSON.stringify, or nothing when there is no text: an optional field of a hand-written line. */
const quoteField = (text: string | undefined, name: string): string => (text === undefined ? '' : `,"${name}":${JSON.stringify(text)}`);

/** The store a record belongs to: the API base URL's origin and the store id. */
export interface RecordStore {
  origin: string | null;
  storeId: string | null;
}

const Header = z.object({
  v: z.literal(1),
  type: z.literal('header'),
  record: z.literal('opcli claims'),
  origin: z.string().nullable(),
  storeId: z.string().nullable(),
  created: z.string(),
});

/** A claim about to be sent (durable before it leaves). */
const DiskIntent = z.object({
  // `issuance`: the filing's id (0.2.0's name), shared by its intent and outcome; `key`: the claim's content key (plan.ts).
  ...ACTION_START,
  type: z.literal('intent'),
  /** A batch's rows name their run (a `run` line), which says once who filed them, from where. */
  run: z.string().optional(),
  user: z.string().optional(),
  host: z.string().optional(),
  profile: z.string().optional(),
  /** Where the claim came from: the input file (absolute), `--data <file>`, or `prompt`. */
  source: z.string().optional(),
  line: z.number().int().optional(),
  /** The batch's journal: its request leaves only once both are durable, so an intent its journal lacks never left. */
  journal: z.string().optional(),
  /** recordSimilarity (plan.ts): the customer's e-mail and the item. */
  sim: z.string().optional(),
  email: z.string().optional(),
  item: z.string().optional(),
  forced: z.boolean().optional(),
  /** A batch row's key in its run when not `key`: the hash of its --key value (plan.ts userKeyHash); with `tag`, what a resume asks by. */
  row: z.string().optional(),
  /** Under --key: the 32-bit tag of the row's content (plan.ts contentTag), to tell a changed row under one key. */
  tag: z.number().int().nonnegative().optional(),
  /** A batch row's "looks like" fingerprint in its batch (plan.ts `similarity`: the e-mail and the item's name and sku). */
  like: z.string().optional(),
  /** A batch row's claim in its robust form (plan.ts), to show what differs when a changed or similar row turns up in its batch. */
  claim: z.unknown().optional(),
  uid: WRITER_UID,
});

/** A batch run: who filed its rows, with which profile, from which file and journal. */
const RunLine = z.object({
  v: z.literal(1),
  type: z.literal('run'),
  run: z.string(),
  at: z.string(),
  user: z.string(),
  host: z.string(),
  profile: z.string(),
  source: z.string(),
  journal: z.string().optional(),
  /** The journal file's id (0.2.0's, read by journal.ts): only that file can say a row of this run never left. */
  journalId: z.string().optional(),
  uid: WRITER_UID,
});
export type RunLine = z.infer<typeof RunLine>;

export type DiskIntent = z.infer<typeof DiskIntent>;

/** An intent with its run's details filled in. */
export type IntentLine = z.infer<typeof DiskIntent> & { user: string; host: string; profile: string; source: string; journalId?: string };

/** What a command gives for an intent (the rest is filled in). */
export type NewIntent = Omit<z.infer<typeof DiskIntent>, 'v' | 'type' | 'at' | 'user' | 'host' | 'claim'> & {
  /** A batch row's claim as JSON text (its robust form), written as the intent's `claim`. */
  claimJson?: string;
};

/** A row's last attempt in its batch's earlier runs (ClaimRecord.batchRow); `sending`: no outcome (the run was stopped: it may have been sent). */
export interface BatchRow {
  status: 'sending' | RecordStatus;
  /** The input line, date, content tag (--key) and claim (robust form) of the attempt's intent. */
  line?: number;
  at?: string;
  tag?: number;
  claim?: unknown;
  sourceOrderId?: string;
  reason?: string;
}

/** filed: created; rejected and not_sent: nothing was created; uncertain: sent, fate unknown. */
export const RecordStatus = z.enum(['filed', 'rejected', 'uncertain', 'not_sent']);
export type RecordStatus = z.infer<typeof RecordStatus>;

const OutcomeLine = z.object({
  ...ACTION_START,
  type: z.literal('outcome'),
  status: RecordStatus,
  sourceOrderId: z.string().optional(),
  error: z.string().optional(),
});
export type OutcomeLine = z.infer<typeof OutcomeLine>;

/** A journal whose filed and uncertain rows were read into the record (once: a later run skips it). */
const ImportedLine = z.object({
  v: z.literal(1),
  type: z.literal('imported'),
  at: z.string(),
  journal: z.string(),
  entries: z.number().int().nonnegative(),
});

export const RecordLine = z.discriminatedUnion('type', [Header, DiskIntent, OutcomeLine, z.object(SET_ASIDE), ImportedLine, RunLine]);
export type RecordLine = z.infer<typeof RecordLine>;

/** A line as the record's readers see it: an intent with its run's details filled in. */
export type ReadLine = Exclude<RecordLine, { type: 'intent' }> | IntentLine;

/** Parses a line of the record (undefined: not a record of this version). */
export const parseRecordLine = (value: unknown): RecordLine | undefined => RecordLine.safeParse(value).data;

// CHOICE (docs/spec-choices.md#record-of-claims): one append-only file per API origin and store id, beside the ledger.
/** The record's file name for a store: the origin and store id hashed (the header names them in full). */
export function recordFileName(store: RecordStore): string {
  const id = createHash('sha256')
    .update(`${store.origin ?? '-'}\n${store.storeId ?? '-'}`)
    .digest('hex')
    .slice(0, 16);
  return `claims-record-${id}.jsonl`;
}

/** Where a claim stands in the record: what a new filing of it is checked against. */
export type RecordState = 'sending' | RecordStatus | 'torn';

/** The first line of a record, with its newline. */
export function headerLine(store: RecordStore, created: string): string {
  return `${JSON.stringify({ v: 1, type: 'header', record: 'opcli claims', origin: store.origin, storeId: store.storeId, created })}\n`;
}

/** A batch row's intent line (its run line says who and from where): the id and key first, its claim's JSON text spliced in last. */
export function batchIntentLine(l: NewIntent & { run: string }, at: string): string {
  return `{"v":1,"issuance":${JSON.stringify(l.issuance)},"key":${JSON.stringify(l.key)},"type":"intent","at":"${at}","run":${JSON.stringify(l.run)}${l.line === undefined ? '' : `,"line":${l.line}`}${quoteField(l.sim, 'sim')}${quoteField(l.email, 'email')}${quoteField(l.item, 'item')}${quoteField(l.row, 'row')}${l.tag === undefined ? '' : `,"tag":${l.tag}`}${quoteField(l.like, 'like')}${l.claimJson ? `,"claim":${l.claimJson}` : ''}}\n`;
}

/** An outcome line, with its newline. */
export function outcomeLine(o: Omit<OutcomeLine, 'v' | 'type' | 'at'>, at: string): string {
  return `{"v":1,"issuance":${JSON.stringify(o.issuance)},"key":${JSON.stringify(o.key)},"type":"outcome","at":"${at}","status":"${o.status}"${quoteField(o.sourceOrderId, 'sourceOrderId')}${quoteField(o.error, 'error')}}\n`;
}

/** What the record says of a key: its state and, when one was read, its intent and outcome. */
export interface RecordHit {
  state: RecordState;
  intent?: IntentLine;
  outcome?: OutcomeLine;
  /** The record's line of a torn or set-aside entry. */
  tornLine?: number;
}

/** The strongest of several records' answers for one key (filed, then may exist, then nothing filed); the first on a tie. */
export function strongest(hits: (RecordHit | undefined)[]): RecordHit | undefined {
  let best: RecordHit | undefined;
  for (const hit of hits) if (hit && (!best || RANK[claimWeight(hit.state)] > RANK[claimWeight(best.state)])) best = hit;
  return best;
}

/** A new id for one filing (an intent's `issuance` field). */
export function newFilingId(): string {
  return randomBytes(9).toString('hex');
}

/** "from claims.csv line 4 on 2026-11-27 14:03 UTC (profile prod, user alice, sourceOrderId SO-1)": an earlier filing in words. */
export function describeHit(hit: RecordHit): string {
  const i = hit.intent;
  if (!i) return `(line ${hit.tornLine ?? '?'} of the record, cut short: its outcome is unknown)`;
  const from =
    i.source === 'prompt' ? 'at the prompt' : i.source.startsWith('--data ') ? `from ${i.source}` : `from ${i.source}${i.line ? ` line ${i.line}` : ''}`;
  const id = hit.outcome?.sourceOrderId ? `, sourceOrderId ${hit.outcome.sourceOrderId}` : '';
  return `${from} on ${i.at.slice(0, 16).replace('T', ' ')} UTC (profile ${i.profile}, user ${i.user}${id})`;
}

/** The words for a hit's state: "filed", "sent (outcome uncertain)". */
export function stateWords(state: RecordState): string {
  if (state === 'filed') return 'filed';
  if (state === 'torn' || state === 'uncertain' || state === 'sending') return 'sent (outcome uncertain)';
  return state === 'rejected' ? 'rejected' : 'not sent';
}
