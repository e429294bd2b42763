/**
 * The check and key stages of a batch, for one row: is it a valid claim for the store we are logged
 * in to, what is its identity, and what did earlier runs do with it. The answer is either "send it"
 * (with what to journal) or the row's result without sending anything: settled earlier, invalid,
 * or held because it looks like a claim that exists.
 */
import { ApiError } from '../errors.js';
import { readErrorBody } from '../http/error-body.js';
import { OfflineClaim } from '../schemas.js';
import { compiled } from './compiled.js';
import { flattenClaim, spreadsheetDamage } from './fields.js';
import { contentTag, hashOfRobust, OccurrenceCounter, occurrenceKey, robustJson, robustText, similarity, userKeyHash } from './identity.js';
import type { JournalReader, PriorOutcome } from './journal.js';
import type { SourceRow } from './reader.js';
import type { RowResult } from './results.js';
import { validateClaim } from './validate.js';
import { excerpt } from '../text/excerpt.js';

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
}

/** A row to send, with what its `sending` journal entry records. */
export interface ToSend {
  send: true;
  key: string;
  claim: OfflineClaim;
  sim?: string;
  tag?: number;
  /** The claim in its robust form (JSON text), journaled with the `sending` entry for "looks like" messages. */
  robust: string;
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

const MAY_EXIST = new Set(['filed', 'uncertain', 'sending']);

/** Plans the rows of one run; the occurrence counts live as long as the run. */
export class Planner {
  private readonly contents = new OccurrenceCounter();
  private readonly schema = compiled(OfflineClaim);

  constructor(
    private readonly journal: JournalReader,
    private readonly options: PlanOptions,
  ) {}

  /** Decides one row. */
  async plan(row: SourceRow): Promise<ToSend | NotToSend> {
    const invalid = (errors: { path: string; message: string }[]): NotToSend => ({ send: false, result: { line: row.line, status: 'invalid', errors } });
    const checked = validateClaim(row.value, row.issues, this.schema);
    if (!checked.ok) return invalid(checked.issues);
    const claim = checked.claim;
    const { tokenStore, keyColumn } = this.options;
    if (tokenStore && claim.storeId !== tokenStore) return invalid([{ path: 'storeId', message: storeMismatch(claim.storeId, tokenStore) }]);

    let key: string;
    let tag: number | undefined;
    const robust = robustJson(claim);
    if (keyColumn !== undefined) {
      if (!row.userKey) return invalid([{ path: keyColumn, message: `the --key column ${keyColumn} is empty` }]);
      const damage = spreadsheetDamage({ key: keyColumn, type: 'string' }, row.userKey);
      if (damage) return invalid([{ path: keyColumn, message: damage }]);
      const hash = userKeyHash(row.userKey);
      const seen = this.contents.add(hash, row.line);
      if (seen.occurrence > 1)
        return invalid([
          { path: keyColumn, message: `${excerpt(row.userKey, 60)} appears again (first on line ${seen.firstLine}); each --key value must be one claim` },
        ]);
      key = hash;
      tag = contentTag(hashOfRobust(robust));
    } else {
      const hash = hashOfRobust(robust);
      key = occurrenceKey(hash, this.contents.add(hash, row.line).occurrence);
    }

    const prior = this.journal.priorOutcome(key);
    if (prior && keyColumn !== undefined && prior.tag !== tag && MAY_EXIST.has(prior.status)) {
      const earlier = await this.journal.entryAt(prior.sendOffset);
      const changes = differences(earlier?.claim, claim);
      const when = earlier?.at ? ` on ${earlier.at.slice(0, 10)}` : '';
      const verb = prior.status === 'filed' ? 'was filed' : 'was sent (outcome uncertain)';
      return {
        send: false,
        result: {
          line: row.line,
          status: 'held',
          error: `${excerpt(row.userKey ?? '', 60)} ${verb}${when} from line ${earlier?.line ?? '?'} with different content${changes}; not sent`,
        },
      };
    }
    // A row rejected earlier whose content changed under its --key is a fix: it is sent.
    const settled = prior && prior.status !== 'not_sent' && !(prior.status === 'rejected' && keyColumn !== undefined && prior.tag !== tag);
    const unknown = prior?.status === 'sending' || prior?.status === 'uncertain';
    if (prior && settled && !(unknown && this.options.retryUncertain)) {
      const detail = this.options.perRow || unknown ? await this.journal.priorDetail(prior) : {};
      const status = unknown ? 'uncertain' : (prior.status as 'filed' | 'rejected');
      const error = unknown ? (detail.reason ?? 'the run that journaled it stopped before its answer was recorded (it may have been sent)') : detail.reason;
      return { send: false, earlierUncertain: unknown, result: { line: row.line, status, sourceOrderId: detail.sourceOrderId, error, earlier: true } };
    }

    const sim = similarity(claim);
    if (!prior && !this.options.allowSimilar && keyColumn === undefined) {
      const like = this.journal.similarTo(sim);
      if (like) return { send: false, result: await this.held(row, claim, like) };
    }
    return { send: true, key, claim, sim, tag, robust };
  }

  private async held(row: SourceRow, claim: OfflineClaim, like: PriorOutcome): Promise<RowResult> {
    const earlier = await this.journal.entryAt(like.sendOffset);
    const when = earlier?.at ? ` on ${earlier.at.slice(0, 10)}` : '';
    const what = like.status === 'filed' ? 'the claim filed' : 'the claim sent (outcome uncertain)';
    return {
      line: row.line,
      status: 'held',
      error: `looks like ${what} from line ${earlier?.line ?? '?'}${when}${differences(earlier?.claim, claim)}; not sent; --allow-similar files it`,
    };
  }
}

/** " (zip 02139 → 2139, item.details a → b)": the fields that differ, as written, at most four. */
function differences(before: unknown, after: unknown): string {
  if (!before) return '';
  const a = flattenClaim(before);
  const b = flattenClaim(after);
  // Real changes first, then the ones only a spreadsheet's formatting made (same value).
  const real: string[] = [];
  const formatting: string[] = [];
  for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const x = a[name] ?? '';
    const y = b[name] ?? '';
    if (x === y) continue;
    const same = robustText(x) === robustText(y);
    (same ? formatting : real).push(`${name} ${x === '' ? '(empty)' : clip(x)} → ${y === '' ? '(empty)' : clip(y)}${same ? ' (same value)' : ''}`);
  }
  const changed = [...real, ...formatting];
  if (!changed.length) return ' (the same content: a second identical row)';
  return ` (${changed.slice(0, 4).join(', ')}${changed.length > 4 ? `, and ${changed.length - 4} more` : ''})`;
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}
