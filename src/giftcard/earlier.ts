/** The ledger's earlier records against a new store credit: the same claim or order, a torn line naming it, a similar credit. */
import { ExitCode, OpcliError } from '../core/errors.js';
import { orderLabel } from '../core/identity.js';
import type { CreditRequest } from './chain-plan.js';
import { emailIdentity } from '../core/identity.js';
import { type AttemptRecord, type CreditLedger, type Issuance, issuanceKey, keyParts, sameKey, sameScope, type UncertainLine } from './ledger.js';
import { formatMoney, groupAmount } from './money.js';
import { shellQuote } from '../text/safe.js';

/** The credit the ledger is searched for: its request, ledger key, words ("claim C-1") and currency. */
export interface HeldCredit {
  req: CreditRequest;
  key: string;
  what: string;
  currency: string;
}

/** The command that lists a credit's claim (or a bonus's order), quoted to run as pasted: `--order #1007` would be a comment in a shell. */
export function historyCommand(req: Pick<CreditRequest, 'claimId' | 'orderNumber' | 'bonus'>): string {
  return `opcli giftcard history ${req.bonus ? `--order ${shellQuote(req.orderNumber)}` : `--claim ${shellQuote(req.claimId ?? '')}`}`;
}

/** A credit in words: "claim C-1", or "bonus credit for order #1001". */
export function creditWhat(req: Pick<CreditRequest, 'claimId' | 'orderNumber' | 'bonus'>): string {
  return req.bonus ? `bonus credit for order ${orderLabel(req.orderNumber)}` : `claim ${req.claimId}`;
}

/** An earlier issuance for the same claim or order, or a similar credit, holds this one (exit 3, nothing sent). */
export class DuplicateIssuanceError extends OpcliError {}

/** The earlier records that hold a new credit back, by why. */
export interface EarlierRecords {
  same: Issuance[];
  torn: UncertainLine[];
  similar: Issuance[];
}

/** What the ledger holds against a new credit: the same claim or order, torn lines naming it, and similar credits. */
export async function earlierRecords(ledger: CreditLedger, prepared: Omit<HeldCredit, 'what'>, now: number): Promise<EarlierRecords> {
  const { req, key, currency } = prepared;
  const hold = { amountCents: req.amountCents, currency, since: now - SIMILAR_WINDOW_MS };
  const { records, uncertain } = await ledger.heldAgainst(key, req.email || undefined, hold);
  const issuances = ledger.issuances(records);
  return {
    same: blockingIssuances(issuances, key),
    torn: uncertainLines(uncertain, key),
    similar: similarIssuances(issuances, { key, email: req.email, amountCents: req.amountCents, currency }, now, currency),
  };
}

/** An earlier issuance as a person reads it: when, who, profile, amount, e-mail, card. */
export function recordText(i: Issuance): string {
  const a: AttemptRecord = i.attempt;
  const o = i.outcome;
  const money = a.currency ? formatMoney(a.amountCents, a.currency) : groupAmount(a.amount);
  const label = a.bonus ? `bonus credit for order ${orderLabel(a.orderNumber)}` : `claim ${a.claimId}, order ${orderLabel(a.orderNumber)}`;
  const status = o ? o.status : 'no outcome recorded';
  return `${a.at} by ${a.user} with profile "${a.profile}": ${money} to ${a.email} for ${label}, ${status}${o?.path ? ` via ${o.path}` : ''}${o?.cardId ? ` (card ${o.cardId})` : ''}, issuance ${a.issuance}`;
}

/**
 * Refuses (exit 3) when the ledger holds an issuance for the same claim or order by identity (not
 * failed), a torn line naming it, or a similar credit (same customer and amount within 30 days
 * under another id), unless forced.
 */
export function refuseEarlier(held: EarlierRecords, prepared: HeldCredit, ledgerPath: string, force: boolean): void {
  const { same, torn, similar } = held;
  if (force) return;
  const { req, what } = prepared;
  const check = `Check the customer's card at the provider and \`${historyCommand(req)}\`; pass --force only when you are sure nothing was paid.`;
  const last = same[same.length - 1];
  if (last) {
    const o = last.outcome;
    const earlierId = last.attempt.bonus ? last.attempt.orderNumber : last.attempt.claimId;
    const variant = earlierId !== (req.bonus ? req.orderNumber : req.claimId) ? ` (recorded as "${earlierId}": the same id written differently)` : '';
    if (!o) {
      throw new DuplicateIssuanceError(`An earlier attempt to issue store credit for ${what}${variant} has no recorded outcome (${recordText(last)}).`, {
        exitCode: ExitCode.partial,
        hint: `It is still running, or it stopped before finishing and may have paid. ${check}`,
      });
    }
    if (o.status === 'uncertain') {
      throw new DuplicateIssuanceError(`An earlier attempt to issue store credit for ${what}${variant} ended with an unknown outcome (${recordText(last)}).`, {
        exitCode: ExitCode.partial,
        hint: `It may have paid. ${check}`,
      });
    }
    throw new DuplicateIssuanceError(`Store credit for ${what} was already issued${variant} (${recordText(last)}). Nothing was sent.`, {
      exitCode: ExitCode.partial,
      hint: `See \`${historyCommand(req)}\`. To issue again anyway, pass --force.`,
    });
  }
  const cut = torn[0];
  if (cut) {
    throw new DuplicateIssuanceError(
      `Line ${cut.line} of the gift card ledger ${ledgerPath} ${cut.reason}; it names ${what}: that attempt may have paid, so it counts as uncertain. Nothing was sent.`,
      { exitCode: ExitCode.partial, hint: check },
    );
  }
  const like = similar[similar.length - 1];
  if (like) {
    throw new DuplicateIssuanceError(
      `Held: a credit of the same amount to the same customer was issued within 30 days under another id.\n  Earlier: ${recordText(like)}\n  Now:     ${formatMoney(req.amountCents, prepared.currency)} to ${req.email} for ${req.bonus ? what : `${what}, order ${orderLabel(req.orderNumber)}`}\nNothing was sent.`,
      {
        exitCode: ExitCode.partial,
        hint: `If these are two different claims, run the same command again with --force. \`opcli giftcard history\` shows the earlier credit.`,
      },
    );
  }
}

/**
 * Refuses (exit 3, as refuseEarlier) as soon as the claim, or a bonus's order, is known and the
 * ledger holds it already or a torn line names it: a person is not asked the remaining questions in
 * vain. A similar credit needs the amount and e-mail, so it is checked once they are known.
 */
export async function refuseKnownId(
  ledger: CreditLedger,
  ids: Pick<CreditRequest, 'claimId' | 'orderNumber' | 'bonus'>,
  scope: { shopUrl?: string; storeId?: string },
  currency: string,
): Promise<void> {
  const trimmed = { claimId: ids.bonus ? undefined : ids.claimId?.trim(), orderNumber: ids.orderNumber.trim(), bonus: ids.bonus };
  const key = issuanceKey(trimmed, scope);
  // Amount, e-mail and name are not asked yet: the refusal of the same id reads none of them.
  const req: CreditRequest = { ...trimmed, issuance: '', amountCents: 0, email: '', name: '', currency };
  const held = { ...(await earlierRecords(ledger, { req, key, currency }, 0)), similar: [] };
  refuseEarlier(held, { req, key, what: creditWhat(trimmed), currency }, ledger.path, false);
}

/**
 * Earlier issuances that block a new one for the same key: issued, uncertain, or an attempt with no
 * outcome (still running, or the process died mid-way). A `failed` outcome proves nothing was paid.
 */
export function blockingIssuances(issuances: Issuance[], key: string): Issuance[] {
  return issuances.filter((i) => sameKey(i.attempt.key, key) && i.outcome?.status !== 'failed');
}

/** CHOICE (docs/spec-choices.md#similar-credits): how far back a credit of the same amount to the same customer holds a new one. */
export const SIMILAR_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Earlier issuances that look like this one under another claim or order: the same customer (by
 * e-mail identity), the same amount and currency, in the same shop and store, within
 * SIMILAR_WINDOW_MS before `now`, and not failed.
 */
export function similarIssuances(
  issuances: Issuance[],
  credit: { key: string; email: string; amountCents: number; currency: string },
  now: number,
  defaultCurrency: string,
): Issuance[] {
  const key = keyParts(credit.key);
  const email = emailIdentity(credit.email);
  return issuances.filter((i) => {
    const a = i.attempt;
    const at = Date.parse(a.at);
    const k = keyParts(a.key);
    return (
      i.outcome?.status !== 'failed' &&
      k.what !== key.what &&
      sameScope(k, key) &&
      a.amountCents === credit.amountCents &&
      (a.currency ?? defaultCurrency) === credit.currency &&
      emailIdentity(a.email) === email &&
      Number.isFinite(at) &&
      now - at <= SIMILAR_WINDOW_MS
    );
  });
}

/** Torn or set-aside ledger lines (uncertain actions) whose key is the same claim or order as `key`. */
export function uncertainLines(uncertain: UncertainLine[], key: string): UncertainLine[] {
  return uncertain.filter((d) => d.key !== undefined && sameKey(d.key, key));
}
