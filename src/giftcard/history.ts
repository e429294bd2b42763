/**
 * The ledger as people read it, and `--verify`: re-reading the loyalty cards of issuances that fell
 * back from the trigger, to find a late trigger credit (a double payment). No prompt, no print.
 */
import { OpcliError } from '../core/errors.js';
import { claimIdentity, orderIdentity } from '../core/identity.js';
import { blockingDamage, type DamagedLine, describeDamage } from '../record/damage.js';
import { doubleCreditWarning, lateCreditSeen, twoPathsWarning } from './issuance.js';
import { DEFAULT_CURRENCY, formatCents, numberToCents } from './money.js';
import { type AttemptRecord, type CreditLedger, type Issuance, keyParts, type OutcomeRecord } from './ledger.js';
import type { ProviderClient } from './provider.js';

export interface HistoryRow {
  at: string;
  issuance: string;
  claimId: string | null;
  orderNumber: string;
  bonus: boolean;
  amount: string;
  currency: string;
  email: string;
  name: string;
  customerId: string | null;
  status: string;
  path: string | null;
  cardId: string | null;
  balance: string | null;
  possibleDoubleCredit: boolean;
  /** The first issuance of the same claim or order (by identity) when this one paid it again. */
  duplicateOf: string | null;
  user: string;
  profile: string;
  shopUrl: string | null;
  forced: boolean;
  error: string | null;
  warnings: string[];
}

export interface VerifyResult {
  issuance: string;
  key: string;
  cardId: string | null;
  result: 'ok' | 'possible-double-credit' | 'error';
  message: string;
}

/** What `--verify` asks the provider with, and how it stamps and says a warning. */
type VerifyEnv = { client: ProviderClient; now(): number; user: string; currency: string; warn(message: string): void };

export interface HistoryFilter {
  claim?: string;
  order?: string;
}

/** Whether an issuance is for the filter's claim or order, by identity: `--claim c-2001` finds `C‐2001`. */
function matches(i: Issuance, filter: HistoryFilter): boolean {
  return (
    (!filter.claim || (i.attempt.claimId !== undefined && claimIdentity(i.attempt.claimId) === claimIdentity(filter.claim))) &&
    (!filter.order || orderIdentity(i.attempt.orderNumber) === orderIdentity(filter.order))
  );
}

/**
 * Issuances that paid a claim or order (by identity, in one shop and store) that an earlier one had
 * already paid or may have paid: issuance id → the first one's id. Failed attempts paid nothing.
 */
export function repeatedPayments(issuances: Issuance[]): Map<string, string> {
  const first = new Map<string, Issuance[]>();
  const repeats = new Map<string, string>();
  for (const i of issuances) {
    if (i.outcome?.status === 'failed') continue;
    const { scope, what } = keyParts(i.attempt.key);
    const earlier = (first.get(what) ?? []).find((e) => {
      const s = keyParts(e.attempt.key).scope;
      return s === undefined || scope === undefined || s === scope;
    });
    if (earlier) repeats.set(i.attempt.issuance, earlier.attempt.issuance);
    else first.set(what, [...(first.get(what) ?? []), i]);
  }
  return repeats;
}

/** The issuances that match the filter, as rows (streamHistory's whole-ledger twin, its tests' oracle). */
export function historyRows(issuances: Issuance[], filter: HistoryFilter, currency = DEFAULT_CURRENCY): HistoryRow[] {
  const repeats = repeatedPayments(issuances);
  return issuances.filter((i) => matches(i, filter)).map((i) => historyRow(i, repeats, currency));
}

function historyRow(i: Issuance, repeats: Map<string, string>, currency: string): HistoryRow {
  return {
    at: i.attempt.at,
    issuance: i.attempt.issuance,
    claimId: i.attempt.claimId ?? null,
    orderNumber: i.attempt.orderNumber,
    bonus: i.attempt.bonus,
    amount: i.attempt.amount,
    currency: i.attempt.currency ?? currency,
    email: i.attempt.email,
    name: i.attempt.name,
    customerId: i.attempt.customerId ?? null,
    status: i.outcome?.status ?? 'attempt',
    path: i.outcome?.path ?? null,
    cardId: i.outcome?.cardId ?? null,
    balance: i.outcome?.balanceCents !== undefined ? formatCents(i.outcome.balanceCents) : null,
    possibleDoubleCredit: !!i.outcome?.possibleDoubleCredit || i.warnings.length > 0 || repeats.has(i.attempt.issuance),
    duplicateOf: repeats.get(i.attempt.issuance) ?? null,
    user: i.attempt.user,
    profile: i.attempt.profile,
    shopUrl: i.attempt.shopUrl ?? null,
    forced: i.attempt.forced,
    error: i.outcome?.error ?? null,
    warnings: i.warnings.map((w) => w.message),
  };
}

/** The issuances that match the filter, as rows handed to `take` as the ledger is read (memory a claim's); damage said at the end. */
export async function streamHistory(
  ledger: CreditLedger,
  filter: HistoryFilter,
  env: { notice(message: string): void; currency?: string },
  take: (row: HistoryRow) => void,
): Promise<void> {
  const currency = env.currency ?? DEFAULT_CURRENCY;
  const { damaged } = await ledger.eachIssuance(
    (i, same) => take(historyRow(i, repeatedPayments(same), currency)),
    (a) => matches({ attempt: a, warnings: [] }, filter),
  );
  noticeDamage(ledger, damaged, env.notice);
}

/** Damaged ledger lines in words: skipped here, not removed, and what `giftcard issue` does about them. */
function noticeDamage(ledger: CreditLedger, damaged: DamagedLine[], notice: (message: string) => void): void {
  if (!damaged.length) return;
  const said = damaged.slice(0, 5).map(describeDamage).join('; ');
  const stops = blockingDamage(damaged).length > 0;
  notice(
    `${ledger.path}: ${said}${damaged.length > 5 ? `; and ${damaged.length - 5} more` : ''}. Skipped here, not removed; ${
      stops
        ? '`giftcard issue` pays nothing until `opcli giftcard repair` sets them aside.'
        : 'the claim or order of a line cut short counts as uncertain: `giftcard issue` holds it.'
    }`,
  );
}

/**
 * Re-reads the card of one issuance that fell back from the trigger (`laterCents`: what this ledger put
 * on it since, no late credit) and appends a warning for a late trigger credit or a two-path payment.
 */
async function verifyOne(ledger: CreditLedger, entry: Issuance, laterCents: number, env: VerifyEnv): Promise<VerifyResult> {
  const o = entry.outcome as OutcomeRecord;
  const watch = o.watch as NonNullable<OutcomeRecord['watch']>;
  const base = { issuance: entry.attempt.issuance, key: entry.attempt.key, cardId: watch.cardId };
  if (o.possibleDoubleCredit || entry.warnings.length) return { ...base, result: 'possible-double-credit', message: 'flagged earlier' };
  try {
    const card = await env.client.lookup(watch.customerId);
    const late = card && lateCreditSeen(watch, card, entry.attempt.amountCents, laterCents);
    const currency = entry.attempt.currency ?? env.currency;
    const message = late
      ? doubleCreditWarning({ amountCents: entry.attempt.amountCents, customerId: watch.customerId, currency }, card.gift_card_id)
      : twoPathsWarning(entry.attempt, o, card);
    if (!message) return { ...base, result: 'ok', message: `balance ${card ? formatCents(numberToCents(card.amount)) : 'none'}: no late trigger credit` };
    const record = {
      v: 1 as const,
      issuance: entry.attempt.issuance,
      key: entry.attempt.key,
      at: new Date(env.now()).toISOString(),
      user: env.user,
      type: 'warning' as const,
      kind: 'possible-double-credit' as const,
      message,
      ...(card ? { cardId: card.gift_card_id, balanceCents: numberToCents(card.amount) } : {}),
    };
    await ledger.appendLocked(record);
    entry.warnings.push(record);
    env.warn(message);
    return { ...base, cardId: card?.gift_card_id ?? base.cardId, result: 'possible-double-credit', message };
  } catch (error) {
    if (!(error instanceof OpcliError)) throw error;
    return { ...base, result: 'error', message: error.message };
  }
}

interface Watched {
  entry: Issuance;
  /** The credits issued onto the watched card, counted up to and with this issuance (those after it are the total less this). */
  before: number;
}

/**
 * One pass of the ledger: each repeated payment, each credit to re-read with what was on its card
 * before it, and the card totals (so later credits on a watched card are known). Memory: never the ledger.
 */
async function gatherVerify(
  ledger: CreditLedger,
  filter: HistoryFilter,
): Promise<{ repeats: VerifyResult[]; watched: Watched[]; onCard: Map<string, number> }> {
  const repeats: VerifyResult[] = [];
  const watched: Watched[] = [];
  const onCard = new Map<string, number>();
  await ledger.eachIssuance((entry, same) => {
    const o = entry.outcome;
    if (o?.status === 'issued' && o.cardId && onCard.has(o.cardId)) onCard.set(o.cardId, (onCard.get(o.cardId) ?? 0) + entry.attempt.amountCents);
    if (!matches(entry, filter)) return;
    const firstId = repeatedPayments(same).get(entry.attempt.issuance);
    if (firstId) {
      repeats.push(repeatResult(entry, same.find((i) => i.attempt.issuance === firstId)?.attempt, firstId));
      return;
    }
    if (!o?.watch || o.status !== 'issued') return;
    const card = o.watch.cardId;
    if (card && !onCard.has(card)) onCard.set(card, 0);
    watched.push({ entry, before: card ? (onCard.get(card) ?? 0) : 0 });
  });
  return { repeats, watched, onCard };
}

function repeatResult(entry: Issuance, first: AttemptRecord | undefined, firstId: string): VerifyResult {
  const a = entry.attempt;
  const named = (r: AttemptRecord) => (r.bonus ? `order ${r.orderNumber}` : `claim ${r.claimId}`);
  return {
    issuance: a.issuance,
    key: a.key,
    cardId: entry.outcome?.cardId ?? null,
    result: 'possible-double-credit',
    message: `${named(a)} was paid again${a.forced ? ' with --force' : ''} (${a.at}, ${a.email}): ${first ? named(first) : 'the same id'} was paid on ${first?.at ?? 'an earlier date'}, issuance ${firstId}`,
  };
}

/** `history --verify`: the repeated payments, then each credit that fell back re-read, in the ledger's order. */
export async function verifyStreamed(ledger: CreditLedger, filter: HistoryFilter, env: VerifyEnv): Promise<VerifyResult[]> {
  const { repeats, watched, onCard } = await gatherVerify(ledger, filter);
  const verified = [...repeats];
  for (const { entry, before } of watched) {
    const watch = entry.outcome?.watch as NonNullable<OutcomeRecord['watch']>;
    const later = watch.cardId ? (onCard.get(watch.cardId) ?? 0) - before : 0;
    verified.push(await verifyOne(ledger, entry, later, env));
  }
  return verified;
}
