/**
 * The check and key stages of a batch, for one row: is it a valid claim for the store we are logged
 * in to, what is its identity, and what did earlier runs do with it. The answer is either "send it"
 * (with what to journal) or the row's result without sending anything: settled earlier, invalid,
 * or held because it looks like a claim that exists.
 * The validation of a claim (`validateClaim`, at the end: a row's, or a single claim's from flags or
 * a file) and what a row comes to (`RowResult`) are here too.
 */
import { ApiError } from '../core/errors.js';
import { claimMayExist } from '../record/outcome.js';
import { readErrorBody } from '../http/error-body.js';
import { OfflineClaim, type FieldIssue } from '../schemas.js';
import { compiled } from './compiled.js';
import { flattenClaim, spreadsheetDamage, CLAIM_FIELDS, FIELD_BY_KEY, getPath } from './fields.js';
import { contentTag, hashOfRobust, OccurrenceCounter, occurrenceKey, recordSimilarity, robustJson, robustText, similarity, userKeyHash } from './identity.js';
import { type BatchRow, describeHit, type NewIntent, newFilingId, type RecordHit, stateWords } from './record.js';
import type { ClaimsRecord } from './record-open.js';
import type { SourceRow } from './reader.js';
import { excerpt, quoteInput } from '../text/excerpt.js';
import { fieldIssues, fieldMessage, missingMessage } from '../core/field-issues.js';

/**
 * Final state of a row in this run. `invalid`: refused by the checks, never sent; `held`: looks like
 * (or has the --key of) a claim filed earlier, not sent; `not_sent`: nothing was created, the next
 * run sends it; `rejected`: refused by the API.
 */
export type RowStatus = 'filed' | 'rejected' | 'invalid' | 'held' | 'uncertain' | 'not_sent' | 'valid';

export interface RowResult {
  line: number;
  status: RowStatus;
  sourceOrderId?: string;
  error?: string;
  errors?: FieldIssue[];
  /** The outcome was recorded by an earlier run; nothing was sent now. */
  earlier?: boolean;
  /**
   * What rows alike share, without this row's details (a held row: "already filed from a.csv"):
   * the display shows the first in full and folds the others into one line.
   */
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
  /** Results are printed per row: earlier rows need their sourceOrderId and reason. */
  perRow: boolean;
  /** `--allow-duplicates`: file rows the record holds, and rows repeated in this file. */
  allowDuplicates?: boolean;
  /** The record of claims for this store (record.ts): rows filed from anywhere are held. */
  record?: ClaimsRecord;
  /** What this run's intents record: the input file and the profile. */
  provenance?: { source: string; profile: string; journal?: string };
}

/**
 * What the earlier runs of a batch did with a row: the record of claims (ClaimsRecord.batchRow, a file
 * or the team's database), and a journal of 0.2.0 the record has not read in (a dry run, or the
 * database, which takes journals by `opcli record import`), that journal too (record-import.ts).
 */
export interface BatchHistory {
  /** The batch's name (docs/spec-choices.md#the-same-batch): the path its journal had, or --journal. */
  readonly batch: string;
  batchRow(batch: string, by: { key: string } | { like: string }): BatchRow | undefined | Promise<BatchRow | undefined>;
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
    if (p) options.record?.startRun(this.run, p);
  }

  /** Decides one row: check, then key, then what earlier runs and the record of claims say of it. */
  async plan(row: SourceRow): Promise<ToSend | NotToSend> {
    const checked = this.check(row);
    if (!checked.ok) return checked.refused;
    const claim = checked.claim;
    const robust = robustJson(claim);
    const id = this.identify(row, robust);
    if ('send' in id) return id;
    const recordKey = this.options.keyColumn === undefined ? id.key : hashOfRobust(robust);
    const { record, allowDuplicates } = this.options;
    // The batch's earlier runs and the record of claims are asked at once: with the team's database, one round trip's wait, not two.
    const [prior, hit] = await Promise.all([
      this.history.batchRow(this.history.batch, { key: id.key }),
      record && !allowDuplicates ? record.lookup(recordKey) : undefined,
    ]);
    const earlier = await this.earlier(row, claim, id, prior);
    if (earlier) return earlier;
    const recordSim = recordSimilarity(claim);
    const sim = similarity(claim);
    const duplicate = await this.duplicate(row, claim, id, { prior, hit, recordKey, recordSim, sim });
    if (duplicate) return duplicate;
    const intent: NewIntent | undefined =
      this.options.record && this.options.provenance
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
  private async earlier(row: SourceRow, claim: OfflineClaim, id: Identity, prior: BatchRow | undefined): Promise<NotToSend | undefined> {
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
    const unknown = prior.status === 'sending' || prior.status === 'uncertain';
    if (!settled || (unknown && this.options.retryUncertain)) return undefined;
    const detail = prior;
    const status = unknown ? 'uncertain' : (prior.status as 'filed' | 'rejected');
    const error = unknown ? (detail.reason ?? 'the run that journaled it stopped before its answer was recorded (it may have been sent)') : detail.reason;
    return { send: false, earlierUncertain: unknown, result: { line: row.line, status, sourceOrderId: detail.sourceOrderId, error, earlier: true } };
  }

  /** A row repeated in this file, held in the record of claims, or looking like a claim filed earlier: held. */
  private async duplicate(
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
  ): Promise<NotToSend | undefined> {
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
    if (record && !allowDuplicates) {
      const unknown = prior?.status === 'sending' || prior?.status === 'uncertain';
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
    const [like, recorded] = await Promise.all([
      sim === undefined ? undefined : this.history.batchRow(this.history.batch, { like: sim }),
      allowDuplicates ? undefined : record?.similar(recordSim, recordKey),
    ]);
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

/**
 * Validates with the shared schema (a batch passes it compiled: compiled.ts); issues found
 * while reading the row come first, each path once.
 */
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
