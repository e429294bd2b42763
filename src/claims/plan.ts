/**
 * The check and key stages of a batch, for one row: is it a valid claim for the token's store, what
 * is its identity, and what did earlier runs do with it. The answer is "send it" (with its intent)
 * or the row's result: settled earlier, invalid, or held. The validation of any claim
 * (`validateClaim`: a row's, or a single claim's) is here too.
 */
import { compile } from 'zod';
import { hash } from 'node:crypto';
import { emailIdentity, idIdentity } from '../core/identity.js';
import { KeyTable } from '../record/key-table.js';
import { ApiError } from '../core/errors.js';
import { claimMayExist, claimWeight } from '../record/outcome.js';
import { readErrorBody } from '../http/error-body.js';
import { OfflineClaim, type FieldIssue } from '../schemas.js';
import { flattenClaim, spreadsheetDamage, CLAIM_FIELDS, FIELD_BY_KEY, getPath } from './fields.js';
import { type BatchRow, describeHit, type NewIntent, newFilingId, type RecordHit, stateWords } from './record-format.js';
import type { SourceRow } from './reader.js';
import { excerpt, quoteInput } from '../text/excerpt.js';
import { fieldIssues, fieldMessage, missingMessage } from '../core/field-issues.js';

/*
 * The check: schemas compiled by zod (`z.compile`): a generated validator runs first and, on any
 * value it does not accept, zod's own parser decides, so answers and messages are the schema's own.
 * Compiling costs more than one claim wins back: only a batch does.
 */

const COMPILED = new WeakMap<object, unknown>();

export function compiled<T extends object>(schema: T): T {
  let fast = COMPILED.get(schema) as T | undefined;
  if (!fast) {
    fast = compile(schema as Parameters<typeof compile>[0]) as T;
    COMPILED.set(schema, fast);
  }
  return fast;
}

/*
 * The key: a row's identity is its parsed claim in a form that survives what spreadsheets do to a
 * file (reordered rows or columns, re-quoting, CRLF, `1.50`, `TRUE`, leading zeros or `+` dropped,
 * `1E5`), hashed, plus its occurrence among identical rows; with `--key COLUMN`, the user's own id.
 * The line number is only for messages.
 */

/** Digits only, perhaps with a leading `+` (a zip, an id, a phone number). */
const DIGITS = /^\+?\d+$/;
/** A plain decimal written as text. */
const DECIMAL_TEXT = /^([+-]?)(\d*)\.(\d*)$/;
/** Exponent notation a person may have typed (`1E5`); read by value when it is a whole number. */
const EXPONENT_TEXT = /^\d+(\.\d+)?e\+?\d+$/i;

/** Text in a form a spreadsheet round trip cannot change: trimmed, digits without `+` or leading zeros, decimals unpadded, `1E5` by value. */
export function robustText(text: string): string {
  const t = text.trim();
  // Most text (names, e-mails, URLs) starts with a letter: none of the forms below can apply.
  const c = t.charCodeAt(0);
  if (!((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46)) return t;
  // The forms below are written with digits, signs, points and exponents only: a date or an
  // address (`1 Main St`) stops at its first other character, without a regular expression.
  for (let i = 1; i < t.length; i++) {
    const d = t.charCodeAt(i);
    if (!((d >= 48 && d <= 57) || d === 43 || d === 45 || d === 46 || d === 69 || d === 101)) return t;
  }
  if (DIGITS.test(t)) return t.replace(/^\+/, '').replace(/^0+(?=\d)/, '');
  const d = DECIMAL_TEXT.exec(t);
  if (d && (d[2] || d[3])) {
    const whole = (d[2] ?? '').replace(/^0+(?=\d)/, '') || '0';
    const fraction = (d[3] ?? '').replace(/0+$/, '');
    const sign = d[1] === '-' && (whole !== '0' || fraction) ? '-' : '';
    return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
  }
  if (EXPONENT_TEXT.test(t)) {
    const n = Number(t);
    if (Number.isSafeInteger(n)) return String(n);
  }
  return t;
}

/** CHOICE (docs/spec-choices.md#row-key): the claim as canonical text: keys sorted, empty values dropped, strings robust, numbers by value. */
export function robustJson(value: unknown): string {
  return canonical(value) ?? '';
}

/** An object's keys as they come, sorted, and each sorted key as JSON text with its colon. */
interface Shape {
  keys: string[];
  sorted: string[];
  names: string[];
}

/** The last key lists seen (by their first key) with their sorted order: a batch's rows share their objects' keys. */
const SHAPES = new Map<string, Shape>();

/** An object's keys, sorted; a sort (and its copy of the keys) only when this list of keys was not the last one seen. */
function shapeOf(value: object): Shape {
  const keys = Object.keys(value);
  const first = keys[0] ?? '';
  const known = SHAPES.get(first);
  if (known && sameList(known.keys, keys)) return known;
  const sorted = [...keys].sort();
  const shape = { keys, sorted, names: sorted.map((name) => `${JSON.stringify(name)}:`) };
  if (SHAPES.size < 256 || known) SHAPES.set(first, shape);
  return shape;
}

function sameList(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Text JSON.stringify writes as it is, between quotes: no quote, backslash, control character or surrogate. */
const JSON_PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

function canonical(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    const t = robustText(value);
    // JSON.stringify's text, without its call for most strings (this runs for every cell of every row).
    return t === '' ? undefined : JSON_PLAIN.test(t) ? `"${t}"` : JSON.stringify(t);
  }
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'object') return JSON.stringify(value);
  // Built as one string, without an array of parts per object (this runs for every claim row).
  let out = '';
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) out += `${i ? ',' : ''}${canonical(value[i]) ?? 'null'}`;
    return value.length ? `[${out}]` : undefined;
  }
  const { sorted, names } = shapeOf(value);
  for (let i = 0; i < sorted.length; i++) {
    const v = canonical((value as Record<string, unknown>)[sorted[i] as string]);
    if (v !== undefined) out = out === '' ? `{${names[i]}${v}` : `${out},${names[i]}${v}`;
  }
  return out === '' ? undefined : `${out}}`;
}

/** The first 128 bits of a SHA-256, as hex (crypto.hash: no Hash object per row). */
function hex128(text: string): string {
  return hash('sha256', text, 'hex').slice(0, 32);
}

/** The hash of a row's robust content (128 bits, hex). */
export function contentHash(claim: unknown): string {
  return hashOfRobust(robustJson(claim));
}

/** The content hash of a claim already in its robust form (`robustJson`). */
export function hashOfRobust(robust: string): string {
  return hex128(`claim\u0000${robust}`);
}

/** The identity of a `--key` value (compared in its robust form). */
export function userKeyHash(value: string): string {
  return hex128(`key\u0000${robustText(value)}`);
}

/** The key of the `occurrence`-th row (1-based) with a given hash: the second identical row is a second claim. */
export function occurrenceKey(hash: string, occurrence: number): string {
  return occurrence === 1 ? hash : hex128(`${hash}#${occurrence}`);
}

/** A 32-bit tag of a content hash, kept in the journal index to tell "same key, other content". */
export function contentTag(hash: string): number {
  return Number.parseInt(hash.slice(0, 8), 16);
}

/** CHOICE (docs/spec-choices.md#held-rows): the "looks like" fingerprint of a claim: its customer e-mail and item (name, sku), in any case. */
export function similarity(claim: unknown): string | undefined {
  const c = claim as { customer?: { email?: unknown }; item?: { name?: unknown; sku?: unknown } } | undefined;
  const email = typeof c?.customer?.email === 'string' ? robustText(c.customer.email).toLowerCase() : '';
  const name = typeof c?.item?.name === 'string' ? robustText(c.item.name).toLowerCase() : '';
  if (!email || !name) return undefined;
  const sku = typeof c?.item?.sku === 'string' ? robustText(c.item.sku).toLowerCase() : '';
  return hex128(`similar\u0000${email}\u0000${name}\u0000${sku}`).slice(0, 16);
}

/** Counts rows by hash (a key-table.ts table), remembering the line of the first: how many times a content (or a `--key` value) was seen. */
class OccurrenceCounter {
  private readonly table = new KeyTable(1024, (n) => ({ count: new Uint32Array(n), first: new Uint32Array(n) }));

  /** Counts one more row with this hash; returns its occurrence (1-based) and the first one's line. */
  add(hash: string, line: number): { occurrence: number; firstLine: number } {
    const i = this.table.slot(hash);
    const c = this.table.columns;
    if (this.table.fresh) c.first[i] = line;
    c.count[i] = (c.count[i] as number) + 1;
    return { occurrence: c.count[i] as number, firstLine: c.first[i] as number };
  }
}

/** CHOICE (docs/spec-choices.md#similar-claims): the record's fingerprint: the e-mail's identity and the item's sku, else sourceProductId. */
export function recordSimilarity(claim: unknown): string | undefined {
  const c = claim as { customer?: { email?: unknown }; item?: { sku?: unknown; sourceProductId?: unknown } } | undefined;
  const email = typeof c?.customer?.email === 'string' ? emailIdentity(c.customer.email) : '';
  const sku = typeof c?.item?.sku === 'string' ? idIdentity(robustText(c.item.sku)) : '';
  const product = typeof c?.item?.sourceProductId === 'string' ? idIdentity(robustText(c.item.sourceProductId)) : '';
  if (!email || !(sku || product)) return undefined;
  return hex128(`record-similar\u0000${email}\u0000${sku ? `sku:${sku}` : `product:${product}`}`).slice(0, 16);
}

/** A row's final state in this run (`held`: looks like, or has the --key of, a claim filed earlier; `not_sent`: the next run sends it). */
export type RowStatus = 'filed' | 'rejected' | 'invalid' | 'held' | 'uncertain' | 'not_sent' | 'valid';

export interface RowResult {
  line: number;
  status: RowStatus;
  sourceOrderId?: string;
  error?: string;
  errors?: FieldIssue[];
  /** The outcome was recorded by an earlier run; nothing was sent now. */
  earlier?: boolean;
  /** What rows alike share ("already filed from a.csv"): the display shows the first in full and folds the others into one line. */
  cause?: string;
}

export interface PlanOptions {
  /** `--key COLUMN`: the row's identity is that column's value. */
  keyColumn?: string;
  /** `--allow-similar`: file rows that look like a claim filed earlier. */
  allowSimilar: boolean;
  /** `--retry-uncertain`: send rows whose earlier outcome is unknown. */
  retryUncertain: boolean;
  /** The store the token belongs to, when known: rows for another store are refused here. */
  tokenStore?: string;
  /** `--allow-duplicates`: file rows the record holds, and rows repeated in this file. */
  allowDuplicates?: boolean;
  /** The record of claims for this store (record.ts): rows filed from anywhere are held. */
  record: PlanRecord;
  /** What this run's intents record: the input file and the profile. */
  provenance?: { source: string; profile: string; journal?: string };
}

/** An answer now (the file record) or later (the team's database). */
export type Answer<T> = T | Promise<T>;

/** Whether an answer is still to come (a promise: the team's database). */
export function isLater<T>(a: Answer<T>): a is Promise<T> {
  return typeof (a as { then?: unknown } | undefined)?.then === 'function';
}

/** `f` of an answer: at once when it is there now, else when it comes (a file record's questions cost a row no promise). */
function andThen<A, B>(a: Answer<A>, f: (a: A) => Answer<B>): Answer<B> {
  return isLater(a) ? a.then(f) : f(a);
}

/** Two questions asked at once: both answers now, or (the team's database) when both have come. */
function both<A, B>(a: Answer<A>, b: Answer<B>): Answer<[A, B]> {
  return isLater(a) || isLater(b) ? Promise.all([a, b]) : [a, b];
}

/** What the planner asks of the record of claims (ClaimsRecord's questions, record.ts: a file or the team's database). */
export interface PlanRecord {
  /** A batch run's provenance (`journal`: the batch's name, docs/spec-choices.md#the-same-batch), written before its first intents. */
  startRun(run: string, details: { profile: string; source: string; journal?: string }, now?: number): void;
  /** What the record holds for a content key (undefined: never filed from anywhere). */
  lookup(key: string): Answer<RecordHit | undefined>;
  /** A batch's resume: what earlier runs of `batch` did with a row, by its key or "looks like" fingerprint (undefined: never tried). */
  batchRow(batch: string, by: { key: string } | { like: string }): Answer<BatchRow | undefined>;
  /** The last claim that may exist with this similarity fingerprint and another key. */
  similar(sim: string | undefined, key: string): Answer<RecordHit | undefined>;
}

/** What the earlier runs of a batch did with a row: the record, and a 0.2.0 journal it has not read in (batch.ts historyOf). */
export interface BatchHistory extends Pick<PlanRecord, 'batchRow'> {
  /** The batch's name (docs/spec-choices.md#the-same-batch): the path its journal had, or --journal. */
  readonly batch: string;
}

/** A row to send, with what its intent in the record of claims holds. */
export interface ToSend {
  send: true;
  key: string;
  claim: OfflineClaim;
  sim?: string;
  tag?: number;
  /** The claim in its robust form (JSON text), in its intent for "looks like" messages. */
  robust: string;
  /** Its intent in the record of claims (when the run keeps one). */
  intent?: NewIntent;
}

/** A row settled without sending anything now. */
export interface NotToSend {
  send: false;
  result: RowResult;
  /** Sent by an earlier run whose answer was never read. */
  earlierUncertain?: boolean;
}

/** The words for a claim whose storeId is not the token's store (a local check or the API's 403). */
export function storeMismatch(storeId: unknown, tokenStore: string | undefined): string {
  return `storeId ${String(storeId)} is not the store you are logged in to${tokenStore ? ` (${tokenStore})` : ''}`;
}

// CHOICE (docs/spec-choices.md#claims-for-another-store): a 403 saying store_mismatch rejects the row; the batch goes on.
/** Whether a 403 says the claim's storeId is not the token's store (in any body shape), not a missing scope. */
export function isStoreMismatch(error: unknown): boolean {
  if (!(error instanceof ApiError) || error.status !== 403) return false;
  const info = readErrorBody(error.body);
  const code = (info.code ?? '').toLowerCase();
  if (code === 'store_mismatch') return true;
  if (code === 'insufficient_scope' || /scope/i.test(code)) return false;
  return info.texts.some((t) => /store_mismatch|storeid|not the store|store (does not|doesn't) match|another store|different store/i.test(t));
}

/** Plans the rows of one run; the occurrence counts live as long as the run. */
export class Planner {
  private readonly contents = new OccurrenceCounter();
  private readonly schema = compiled(OfflineClaim);
  /** This run's id: a row's filing in the record is `<run>.<line>`. */
  private readonly run = newFilingId();

  constructor(
    private readonly history: BatchHistory,
    private readonly options: PlanOptions,
  ) {
    // Who files, from where, written once for the run (before its first intent) rather than on every row.
    const p = options.provenance;
    if (p) options.record.startRun(this.run, p);
  }

  /** Decides one row: check, then key, then what earlier runs and the record of claims say of it (now, when the record answers now). */
  plan(row: SourceRow): Answer<ToSend | NotToSend> {
    const checked = this.check(row);
    if (!checked.ok) return checked.refused;
    const claim = checked.claim;
    const robust = robustJson(claim);
    const id = this.identify(row, robust);
    if ('send' in id) return id;
    const recordKey = this.options.keyColumn === undefined ? id.key : hashOfRobust(robust);
    const { record, allowDuplicates } = this.options;
    // The batch's earlier runs and the record of claims are asked at once: with the team's database, one round trip's wait, not two.
    const asked = both(this.history.batchRow(this.history.batch, { key: id.key }), allowDuplicates ? undefined : record.lookup(recordKey));
    return andThen(asked, ([prior, hit]) => {
      const earlier = this.earlier(row, claim, id, prior);
      if (earlier) return earlier;
      const recordSim = recordSimilarity(claim);
      const sim = similarity(claim);
      const duplicate = this.duplicate(row, claim, id, { prior, hit, recordKey, recordSim, sim });
      return andThen(duplicate, (held) => held ?? this.toSend(row, claim, id, { robust, recordKey, recordSim, sim }));
    });
  }

  /** A row to send, with its intent when the run keeps a record. */
  private toSend(
    row: SourceRow,
    claim: OfflineClaim,
    id: Identity,
    { robust, recordKey, recordSim, sim }: { robust: string; recordKey: string; recordSim: string | undefined; sim: string | undefined },
  ): ToSend {
    const intent: NewIntent | undefined = this.options.provenance
      ? {
          issuance: `${this.run}.${row.line}`,
          key: recordKey,
          run: this.run,
          line: row.line,
          sim: recordSim,
          email: claim.customer.email,
          item: itemWords(claim),
          like: sim,
          claimJson: robust,
          // Under --key the row's key is its value's hash, not the content's: kept, with its content tag, for a resume that asks the record.
          ...(this.options.keyColumn === undefined ? {} : { row: id.key, tag: id.tag }),
        }
      : undefined;
    return { send: true, key: id.key, claim, sim, tag: id.tag, robust, intent };
  }

  /** The check: a valid claim, for the store the token belongs to. */
  private check(row: SourceRow): { ok: true; claim: OfflineClaim } | { ok: false; refused: NotToSend } {
    const checked = validateClaim(row.value, row.issues, this.schema);
    if (!checked.ok) return { ok: false, refused: invalid(row, checked.issues) };
    const tokenStore = this.options.tokenStore;
    if (tokenStore && checked.claim.storeId !== tokenStore) {
      return { ok: false, refused: invalid(row, [{ path: 'storeId', message: storeMismatch(checked.claim.storeId, tokenStore) }]) };
    }
    return { ok: true, claim: checked.claim };
  }

  /** The key: the --key column's value, or the content and its occurrence in this file. */
  private identify(row: SourceRow, robust: string): Identity | NotToSend {
    const keyColumn = this.options.keyColumn;
    if (keyColumn === undefined) {
      const hash = hashOfRobust(robust);
      const seen = this.contents.add(hash, row.line);
      return { key: occurrenceKey(hash, seen.occurrence), repeatOf: seen.occurrence > 1 ? seen.firstLine : undefined };
    }
    if (!row.userKey) return invalid(row, [{ path: keyColumn, message: `the --key column ${keyColumn} is empty` }]);
    const damage = spreadsheetDamage({ key: keyColumn, type: 'string' }, row.userKey);
    if (damage) return invalid(row, [{ path: keyColumn, message: damage }]);
    const hash = userKeyHash(row.userKey);
    const seen = this.contents.add(hash, row.line);
    if (seen.occurrence > 1) {
      return invalid(row, [
        { path: keyColumn, message: `${excerpt(row.userKey, 60)} appears again (first on line ${seen.firstLine}); each --key value must be one claim` },
      ]);
    }
    return { key: hash, tag: contentTag(hashOfRobust(robust)) };
  }

  /** What this batch's earlier runs did with the row: a --key reused with other content is held; a settled row is not sent again. */
  private earlier(row: SourceRow, claim: OfflineClaim, id: Identity, prior: BatchRow | undefined): NotToSend | undefined {
    if (!prior) return undefined;
    const keyColumn = this.options.keyColumn;
    if (keyColumn !== undefined && (prior.tag ?? 0) !== (id.tag ?? 0) && claimMayExist(prior.status)) {
      const changes = differences(prior.claim, claim);
      const when = prior.at ? ` on ${prior.at.slice(0, 10)}` : '';
      const verb = prior.status === 'filed' ? 'was filed' : 'was sent (outcome uncertain)';
      return held(row, `${excerpt(row.userKey ?? '', 60)} ${verb}${when} from line ${prior.line ?? '?'} with different content${changes}; not sent`);
    }
    // A row rejected earlier whose content changed under its --key is a fix: it is sent.
    const settled = prior.status !== 'not_sent' && !(prior.status === 'rejected' && keyColumn !== undefined && (prior.tag ?? 0) !== (id.tag ?? 0));
    // Sent and never answered (its intent alone, or uncertain): the one rule of outcomes calls that 'maybe'.
    const unknown = claimWeight(prior.status) === 'maybe';
    if (!settled || (unknown && this.options.retryUncertain)) return undefined;
    const status = unknown ? 'uncertain' : (prior.status as 'filed' | 'rejected');
    const error = unknown ? (prior.reason ?? 'the run that journaled it stopped before its answer was recorded (it may have been sent)') : prior.reason;
    return { send: false, earlierUncertain: unknown, result: { line: row.line, status, sourceOrderId: prior.sourceOrderId, error, earlier: true } };
  }

  /** A row repeated in this file, held in the record of claims, or looking like a claim filed earlier: held. */
  private duplicate(
    row: SourceRow,
    claim: OfflineClaim,
    id: Identity,
    found: {
      prior?: BatchRow;
      /** What the record holds for the row's content key (asked unless --allow-duplicates). */
      hit?: RecordHit;
      recordKey: string;
      recordSim: ReturnType<typeof recordSimilarity>;
      sim: ReturnType<typeof similarity>;
    },
  ): Answer<NotToSend | undefined> {
    const { prior, hit, recordKey, recordSim, sim } = found;
    const { keyColumn, record, retryUncertain, allowSimilar } = this.options;
    const allowDuplicates = !!this.options.allowDuplicates;
    // CHOICE (docs/spec-choices.md#repeated-rows): a row repeated in one file is held from its second copy on, unless --allow-duplicates.
    if (id.repeatOf !== undefined && !prior && !allowDuplicates) {
      return held(
        row,
        `the same claim as line ${id.repeatOf} of this file (a row repeated); not sent; --allow-duplicates files it`,
        'a row repeated in this file; --allow-duplicates files it',
      );
    }
    if (!allowDuplicates) {
      const unknown = prior !== undefined && claimWeight(prior.status) === 'maybe';
      // A row this batch sent without an answer and --retry-uncertain sends again: the record holds that same sending.
      const retrying = unknown && retryUncertain && hit?.state !== 'filed';
      if (hit && claimMayExist(hit.state) && !retrying) {
        const from = hit.intent ? ` from ${hit.intent.source === 'prompt' ? 'the prompt' : hit.intent.source}` : '';
        return held(
          row,
          `already ${stateWords(hit.state)} ${describeHit(hit)}; not sent; --allow-duplicates files it`,
          `already ${stateWords(hit.state)}${from}; --allow-duplicates files it`,
        );
      }
    }
    // A repeated row filed on purpose (--allow-duplicates) is not held for looking like its first copy.
    const repeatAllowed = id.repeatOf !== undefined && allowDuplicates;
    if (prior || allowSimilar || keyColumn !== undefined || repeatAllowed) return undefined;
    // The batch's look-alike and the record's are asked at once, the batch's answer first.
    const asked = both(
      sim === undefined ? undefined : this.history.batchRow(this.history.batch, { like: sim }),
      allowDuplicates ? undefined : record.similar(recordSim, recordKey),
    );
    return andThen(asked, ([like, recorded]) => this.lookAlike(row, claim, like, recorded));
  }

  /** A row held for looking like a claim of this batch's earlier runs (`like`) or of the record (`recorded`). */
  private lookAlike(row: SourceRow, claim: OfflineClaim, like: BatchRow | undefined, recorded: RecordHit | undefined): NotToSend | undefined {
    if (like) return { send: false, result: this.held(row, claim, like) };
    if (!recorded) return undefined;
    return held(
      row,
      `looks like the claim ${stateWords(recorded.state)} ${describeHit(recorded)} (the same customer and item: earlier ${recorded.intent?.email ?? '?'}, ${recorded.intent?.item ?? '?'}; this one ${claim.customer.email}, ${itemWords(claim)}); not sent; --allow-similar files it`,
    );
  }

  private held(row: SourceRow, claim: OfflineClaim, like: BatchRow): RowResult {
    const when = like.at ? ` on ${like.at.slice(0, 10)}` : '';
    const what = like.status === 'filed' ? 'the claim filed' : 'the claim sent (outcome uncertain)';
    return {
      line: row.line,
      status: 'held',
      error: `looks like ${what} from line ${like.line ?? '?'}${when}${differences(like.claim, claim)}; not sent; --allow-similar files it`,
    };
  }
}

/** A row's identity in the journal: its key, the content tag under --key, and the first line it repeats. */
interface Identity {
  key: string;
  tag?: number;
  repeatOf?: number;
}

/** An invalid row: refused by the checks, never sent. */
function invalid(row: SourceRow, errors: { path: string; message: string }[]): NotToSend {
  return { send: false, result: { line: row.line, status: 'invalid', errors } };
}

/** A held row: not sent, with why; `cause`: what rows held alike share, for the display to fold them. */
function held(row: SourceRow, error: string, cause?: string): NotToSend {
  return { send: false, result: { line: row.line, status: 'held', error, cause } };
}

/** "Blender (sku B-1)": the item as the record of claims names it. */
export function itemWords(claim: OfflineClaim): string {
  const item = claim.item as { name?: string; sku?: string; sourceProductId?: string };
  const id = item.sku ? `sku ${item.sku}` : item.sourceProductId ? `sourceProductId ${item.sourceProductId}` : '';
  return `${item.name ?? 'item'}${id ? ` (${id})` : ''}`;
}

/** " (zip 02139 → 2139, item.details a → b)": the fields that differ, as written, at most four. */
function differences(before: unknown, after: unknown): string {
  if (!before) return '';
  const a = flattenClaim(before);
  const b = flattenClaim(after);
  // Only real changes: a field a spreadsheet merely wrote differently (zip 2903 and 02903) holds the same value.
  const changed: string[] = [];
  let rewritten = false;
  for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const x = a[name] ?? '';
    const y = b[name] ?? '';
    if (x === y) continue;
    if (robustText(x) === robustText(y)) rewritten = true;
    else changed.push(`${name} ${x === '' ? '(empty)' : clip(x)} → ${y === '' ? '(empty)' : clip(y)}`);
  }
  if (!changed.length) return rewritten ? ' (the same values, written differently)' : ' (the same content: a second identical row)';
  return ` (${changed.slice(0, 4).join(', ')}${changed.length > 4 ? `, and ${changed.length - 4} more` : ''})`;
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

// Validation of a claim built from a row, flags or a file, with messages a support agent can act on.
/** The claim field a zod path points into: `item.images.0` is in `item.images`. */
function fieldAt(path: string) {
  const parts = path.split('.');
  for (let n = parts.length; n > 0; n--) {
    const field = FIELD_BY_KEY.get(parts.slice(0, n).join('.'));
    if (field) return field;
  }
  return undefined;
}

/** One zod issue as the messages a person reads (src/core/field-issues.ts): a missing object is its missing fields. */
function explain(value: unknown, issue: FieldIssue): FieldIssue[] {
  const field = fieldAt(issue.path);
  if (field?.type === 'array' && issue.path !== field.key) {
    // One item of a list (`item.images.0`): named by its place, with the schema's words.
    const item = getPath(value, issue.path.split('.'));
    return [{ path: issue.path, message: `${issue.message}, got ${typeof item === 'string' ? quoteInput(item) : excerpt(JSON.stringify(item) ?? '')}` }];
  }
  if (field && !issue.message.startsWith('unknown field')) {
    return [{ path: field.key, message: fieldMessage(field, getPath(value, field.path)) ?? issue.message }];
  }
  const below = issue.path ? CLAIM_FIELDS.filter((f) => f.required && f.key.startsWith(`${issue.path}.`)) : [];
  const here = getPath(value, issue.path.split('.'));
  if (below.length && here === undefined) return below.map((f) => ({ path: f.key, message: missingMessage(f) }));
  const fields = CLAIM_FIELDS.filter((f) => f.key.startsWith(`${issue.path}.`));
  if (fields.length && (here === null || typeof here !== 'object' || Array.isArray(here))) {
    // A JSON row with `"customer": "alice@example.com"`: the object's fields are what to write.
    const names = fields.map((f) => f.path.at(-1)).slice(0, 4);
    return [
      {
        path: issue.path,
        message: `expected an object of fields (${names.join(', ')}${fields.length > 4 ? ', …' : ''}), got ${excerpt(JSON.stringify(here) ?? '')}`,
      },
    ];
  }
  return [issue];
}

/** Validates with the shared schema (a batch's compiled); issues found while reading the row come first, each path once. */
export function validateClaim(
  value: unknown,
  readIssues: FieldIssue[] = [],
  schema: typeof OfflineClaim = OfflineClaim,
): { ok: true; claim: OfflineClaim } | { ok: false; issues: FieldIssue[] } {
  const parsed = schema.safeParse(value);
  if (parsed.success && readIssues.length === 0) return { ok: true, claim: parsed.data };
  const seen = new Set(readIssues.map((i) => i.path));
  const issues = [...readIssues];
  if (!parsed.success) {
    for (const issue of fieldIssues(parsed.error).flatMap((i) => explain(value, i))) {
      if (seen.has(issue.path)) continue;
      seen.add(issue.path);
      issues.push(issue);
    }
  }
  return { ok: false, issues };
}
