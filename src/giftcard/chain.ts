/**
 * The spec's fallback order for store credit: (1) the trigger workflow, confirmed by polling the
 * customer's loyalty card; (2) the credit API, topping up the loyalty card or creating a card;
 * (3) the storefront's native gift card when neither provider path is available. After falling
 * back from a trigger that was posted, the loyalty card is watched once more so a late trigger
 * credit (a double payment) is reported, never silent.
 */
import { isOutcomeUncertain, NetworkError, OpcliError } from '../core/errors.js';
import type { GiftCard } from '../schemas.js';
import { type ChainPlan, type ChainTiming, type CreditRequest, requestBodies } from './chain-plan.js';
import type { CreditPath, OutcomeRecord } from './ledger.js';
import { refuseOtherHolder, refuseUnknownHolderTopUp } from './holder.js';
import { formatMoney, numberToCents } from './money.js';
import { type ProviderClient, ProviderRefusedError, type ProviderSettings, formatSeconds } from './provider.js';

export * from './chain-plan.js';

/** What the chain did, for the ledger and the output. */
export interface ChainResult {
  path: CreditPath;
  card: GiftCard;
  balanceCents: number;
  triggerPosted: boolean;
  fellBack: boolean;
  possibleDoubleCredit: boolean;
  watch?: OutcomeRecord['watch'];
  notes: string[];
  /** Plain-words warnings (possible double credit), also printed on stderr. */
  warnings: string[];
}

/** Progress the caller reads when the chain throws, to record `failed` or `uncertain`. */
export interface ChainProgress {
  /** A request that moves money may have taken effect. */
  moneyMayHaveMoved: boolean;
  triggerPosted: boolean;
  notes: string[];
}

export interface ChainEnv {
  client: ProviderClient;
  settings: ProviderSettings;
  timing: ChainTiming;
  now(): number;
  sleep(ms: number): Promise<void>;
  /** A progress line on stderr. */
  say(text: string): void;
}

/**
 * Looks at the customer's loyalty card every poll interval until `done` accepts it or the deadline
 * passes; answers the accepted card, or null. Each lookup is sent once (no retries, no Retry-After
 * pause) and may take only the time left, so the poll ends by the deadline. A failed lookup is
 * noted and the poll goes on; Ctrl-C ends it.
 */
async function pollUntil(
  env: ChainEnv,
  customerId: string,
  deadline: number,
  notes: string[],
  done: (card: GiftCard | null) => boolean,
): Promise<GiftCard | null> {
  for (;;) {
    const left = deadline - env.now();
    if (left <= 0) return null;
    let card: GiftCard | null = null;
    try {
      card = await env.client.lookup(customerId, { retry: 'never', timeoutMs: left });
    } catch (error) {
      // Not an OpcliError: an abort (Ctrl-C) or a bug, which must not be swallowed.
      if (!(error instanceof OpcliError)) throw error;
      notes.push(`A loyalty card lookup failed while polling: ${error.message}`);
    }
    if (card && done(card)) return card;
    const rest = deadline - env.now();
    if (rest <= 0) return null;
    await env.sleep(Math.min(env.timing.pollIntervalMs, rest));
  }
}

function grewBy(before: GiftCard | null, after: GiftCard | null, cents: number): boolean {
  if (!after) return false;
  if (before && before.gift_card_id === after.gift_card_id) return numberToCents(after.amount) - numberToCents(before.amount) >= cents;
  // A card that did not exist before (the workflow created one) holds at least the amount.
  return numberToCents(after.amount) >= cents;
}

/** Whether the watched loyalty card shows a credit beyond what this issuance put there. */
export function lateCreditSeen(watch: NonNullable<OutcomeRecord['watch']>, card: GiftCard | null, cents: number, laterCents = 0): boolean {
  if (!card) return false;
  const balance = numberToCents(card.amount);
  if (watch.cardId && card.gift_card_id === watch.cardId && watch.expectedCents !== null) return balance - watch.expectedCents - laterCents >= cents;
  if (card.gift_card_id === watch.ourCardId) return false;
  return !watch.cardId && balance - laterCents >= cents;
}

/** What the trigger path posted and found: the loyalty card before, and the card once the credit showed (or null). */
interface TriggerOutcome {
  before: GiftCard | null;
  card: GiftCard | null;
}

/** A result of the trigger path: its credit arrived. */
function triggerResult(card: GiftCard, notes: string[]): ChainResult {
  return {
    path: 'trigger',
    card,
    balanceCents: numberToCents(card.amount),
    triggerPosted: true,
    fellBack: false,
    possibleDoubleCredit: false,
    notes,
    warnings: [],
  };
}

/** Posts the trigger workflow and polls the loyalty card for its credit; a refusal or a request that never left falls back. */
async function tryTrigger(
  req: CreditRequest,
  env: ChainEnv,
  progress: ChainProgress,
  body: ReturnType<typeof requestBodies>['trigger'],
  customerId: string,
): Promise<TriggerOutcome> {
  const { client, timing } = env;
  const notes = progress.notes;
  const before = await client.lookup(customerId);
  // The trigger pays the e-mail's customer; its credit is confirmed on this card: they must be one person.
  refuseOtherHolder(before, req);
  env.say(`Running the trigger workflow (${formatMoney(req.amountCents, req.currency)} to ${req.email})…`);
  let posted = false;
  try {
    await client.executeTrigger(body);
    posted = true;
  } catch (error) {
    if (!isOutcomeUncertain(error) && error instanceof ProviderRefusedError) {
      notes.push(`The trigger workflow was refused: ${error.message}`);
      env.say(`The trigger workflow was refused (${error.providerMessage}); falling back to the credit API.`);
    } else if (error instanceof NetworkError && !error.sent) {
      // Like a refusal: the connection failed before the request left, so the trigger cannot post.
      notes.push(`The trigger workflow could not be reached, so it did not run: ${error.message}`);
      env.say(`The trigger workflow could not be reached (${error.errorCode ?? 'no connection'}); nothing was sent to it; falling back to the credit API.`);
    } else if (isOutcomeUncertain(error)) {
      posted = true;
      notes.push(`The trigger request's outcome is unknown (${(error as Error).message}); watching the loyalty card anyway.`);
    } else throw error;
  }
  if (!posted) return { before, card: null };
  progress.triggerPosted = true;
  progress.moneyMayHaveMoved = true;
  const deadline = env.now() + timing.triggerWaitMs;
  const card = await pollUntil(env, customerId, deadline, notes, (c) => grewBy(before, c, req.amountCents));
  if (card) return { before, card };
  notes.push(`Waited ${formatSeconds(timing.triggerWaitMs)} for the trigger workflow to post the credit; it did not.`);
  env.say(`Waited ${formatSeconds(timing.triggerWaitMs)} for the trigger workflow to post the credit; it did not, so falling back to the credit API.`);
  return { before, card: null };
}

/** Tops up the loyalty card (or creates a card) through the credit API, unless a late trigger credit already arrived. */
async function creditThroughApi(
  req: CreditRequest,
  env: ChainEnv,
  progress: ChainProgress,
  bodies: ReturnType<typeof requestBodies>,
  before: GiftCard | null,
  fellBack: boolean,
): Promise<ChainResult> {
  const { client } = env;
  const notes = progress.notes;
  let existing: GiftCard | null = null;
  if (req.customerId) {
    existing = await client.lookup(req.customerId);
    // The trigger may have posted between the last poll and now: then nothing more is sent.
    if (progress.triggerPosted && existing && grewBy(before, existing, req.amountCents)) {
      notes.push('The trigger credit arrived just after the polling window, before any fallback was sent.');
      return triggerResult(existing, notes);
    }
    refuseOtherHolder(existing, req);
    // A posted trigger pays the e-mail's card: never top up a card not known to be that one.
    if (progress.triggerPosted && existing) refuseUnknownHolderTopUp(existing, req);
  }
  let path: CreditPath;
  let card: GiftCard;
  progress.moneyMayHaveMoved = true;
  if (existing) {
    env.say(`Adding ${formatMoney(req.amountCents, req.currency)} to loyalty card ${existing.gift_card_id} through the credit API…`);
    path = 'credit-api-top-up';
    card = await client.topUp(existing.gift_card_id, bodies.topUp);
  } else {
    env.say(`Creating a gift card of ${formatMoney(req.amountCents, req.currency)} through the credit API…`);
    path = 'credit-api-issue';
    card = await client.issue(bodies.issue);
  }
  const result: ChainResult = {
    path,
    card,
    balanceCents: numberToCents(card.amount),
    triggerPosted: progress.triggerPosted,
    fellBack,
    possibleDoubleCredit: false,
    notes,
    warnings: [],
  };
  if (progress.triggerPosted && req.customerId) await watchForLateCredit(req, env, result, existing);
  return result;
}

/** Runs the chain. Throws (after updating `progress`) when no path issued the credit. */
export async function runChain(req: CreditRequest, plan: ChainPlan, env: ChainEnv, progress: ChainProgress): Promise<ChainResult> {
  const bodies = requestBodies(req, env.settings);
  let fellBack = false;
  let before: GiftCard | null = null;
  if (plan.trigger && req.customerId) {
    const trigger = await tryTrigger(req, env, progress, bodies.trigger, req.customerId);
    if (trigger.card) return triggerResult(trigger.card, progress.notes);
    before = trigger.before;
    fellBack = true;
  }
  if (plan.creditApi) return creditThroughApi(req, env, progress, bodies, before, fellBack);
  progress.moneyMayHaveMoved = true;
  env.say(`Creating a native gift card of ${formatMoney(req.amountCents, req.currency)} on the storefront…`);
  const card = await env.client.native(bodies.native);
  return {
    path: 'native',
    card,
    balanceCents: numberToCents(card.amount),
    triggerPosted: false,
    fellBack,
    possibleDoubleCredit: false,
    notes: progress.notes,
    warnings: [],
  };
}

/** The warning printed and recorded when a late trigger credit is seen. */
export function doubleCreditWarning(req: Pick<CreditRequest, 'amountCents' | 'customerId' | 'currency'>, cardId: string): string {
  return (
    `The customer may have been paid twice. The trigger workflow was slow, so opcli paid through the credit API, and then the trigger also added ` +
    `${formatMoney(req.amountCents, req.currency)} to loyalty card ${cardId} (customer ${req.customerId}). Check that card at the provider and take one of the two credits back.`
  );
}

/**
 * After a fallback, watches the loyalty card for the trigger's late credit. The card is expected to
 * hold what it held just before this issuance plus the amount (or only the amount, for a new
 * card), never the balance of the provider's answer: a trigger that posted while the top-up or the
 * new card was in flight is already in that answer, and is then reported at once.
 */
async function watchForLateCredit(req: CreditRequest, env: ChainEnv, result: ChainResult, existing: GiftCard | null): Promise<void> {
  const customerId = req.customerId as string;
  const ours = result.card.gift_card_id;
  const watch: NonNullable<OutcomeRecord['watch']> = existing
    ? { customerId, cardId: existing.gift_card_id, expectedCents: numberToCents(existing.amount) + req.amountCents, ourCardId: ours }
    : { customerId, cardId: null, expectedCents: null, ourCardId: ours };
  result.watch = watch;
  const answered: NonNullable<OutcomeRecord['watch']> = existing ? watch : { ...watch, cardId: ours, expectedCents: req.amountCents };
  if (lateCreditSeen(answered, result.card, req.amountCents)) {
    // The trigger credited this very card, so it is the one to keep an eye on.
    result.watch = answered;
    flagDouble(req, result, result.card);
    return;
  }
  const deadline = env.now() + env.timing.lateCheckMs;
  env.say(`Watching the loyalty card for up to ${formatSeconds(env.timing.lateCheckMs)} in case the trigger credit still arrives…`);
  let first = !existing;
  const seen = await pollUntil(env, customerId, deadline, result.notes, (card) => {
    if (first && card) {
      first = false;
      // The customer had no loyalty card: the first one seen tells which card to watch. The new
      // card itself should hold the amount; another card that holds at least the amount is the
      // trigger's; any other card is watched from its current balance.
      if (card.gift_card_id === ours) {
        watch.cardId = ours;
        watch.expectedCents = req.amountCents;
      } else if (!lateCreditSeen(watch, card, req.amountCents)) {
        watch.cardId = card.gift_card_id;
        watch.expectedCents = numberToCents(card.amount);
        return false;
      }
    }
    return lateCreditSeen(watch, card, req.amountCents);
  });
  if (seen) {
    flagDouble(req, result, seen);
    return;
  }
  result.notes.push(
    `Watched the loyalty card for ${formatSeconds(env.timing.lateCheckMs)} after the fallback and saw no late trigger credit; the trigger may still post later: run \`opcli giftcard history --verify\` to check.`,
  );
}

function flagDouble(req: CreditRequest, result: ChainResult, card: GiftCard): void {
  result.possibleDoubleCredit = true;
  if (card.gift_card_id === result.card.gift_card_id) result.balanceCents = numberToCents(card.amount);
  result.warnings.push(doubleCreditWarning(req, card.gift_card_id));
}
