/**
 * The spec's fallback order for store credit: (1) the trigger workflow, confirmed by polling the
 * customer's loyalty card; (2) the credit API, topping up the loyalty card or creating a card;
 * (3) the storefront's native gift card when neither provider path is available. After falling
 * back from a trigger that was posted, the loyalty card is watched once more so a late trigger
 * credit (a double payment) is reported, never silent.
 */
import { isOutcomeUncertain, NetworkError, OpcliError, UsageError } from '../errors.js';
import { orderLabel } from '../identity.js';
import { type GiftCard, GiftCardIssueRequest, GiftCardTopUpRequest, NativeGiftCardRequest, TriggerExecuteRequest, TriggerId } from '../schemas.js';
import type { CreditPath, OutcomeRecord } from './ledger.js';
import { centsToNumber, formatMoney, numberToCents } from './money.js';
import {
  NATIVE_URL_HINT,
  nativeUrlProblem,
  type PlannedRequest,
  type ProviderClient,
  ProviderRefusedError,
  type ProviderSettings,
  formatSeconds,
  providerNameProblem,
} from './provider.js';

/** The name of the service, which the card's e-mail names as its creator. */
export const SERVICE_NAME = 'Order Protection';

/** What to issue. */
export interface CreditRequest {
  issuance: string;
  claimId?: string;
  orderNumber: string;
  bonus: boolean;
  amountCents: number;
  email: string;
  name: string;
  customerId?: string;
  /** The currency of the amount (the profile's `currency`, default USD). */
  currency: string;
}

export interface ChainTiming {
  /** How long to poll for the trigger's credit (the spec's "about 4.5 s"). */
  triggerWaitMs: number;
  /** How long to watch for a late trigger credit after falling back. */
  lateCheckMs: number;
  pollIntervalMs: number;
}

export type FirstPath = 'trigger' | 'credit-api' | 'native';

/** Which paths this profile and request can use, and why others cannot. */
export interface ChainPlan {
  trigger: boolean;
  creditApi: boolean;
  native: boolean;
  first: FirstPath;
  notes: string[];
}

/** The paths a profile offers, whatever the request: known before any question is asked. */
export interface ProfilePaths {
  creditApi: boolean;
  native: boolean;
  /** The trigger workflow, when configured: what it lacks whatever the request (empty when nothing). */
  trigger?: { missing: string[] };
}

/**
 * The paths this profile can use, in the spec's order. Throws a UsageError when none is, or when
 * the native path would send the service's token to a host other than `serviceBaseUrl`'s. A
 * request cannot change either answer (the trigger needs the credit API, which confirms it).
 */
export function profilePaths(settings: ProviderSettings, serviceBaseUrl: string | undefined): ProfilePaths {
  const nameProblem = settings.name ? providerNameProblem(settings.name) : undefined;
  if (nameProblem) throw new UsageError(`Refusing to issue: the ${nameProblem}`, 'Set a valid name with `opcli giftcard setup --provider-name <name>`.');
  const creditApi = !!(settings.token && settings.apiUrl && settings.name && settings.shopUrl);
  let trigger: ProfilePaths['trigger'];
  if (settings.triggerId) {
    const missing: string[] = [];
    if (!TriggerId.safeParse(settings.triggerId).success) missing.push('a well-formed trigger-id (a UUID)');
    if (!settings.triggerUrl) missing.push('trigger-url');
    if (!creditApi) missing.push('the credit API settings (provider-name, provider-api-url, provider-token, shop-url), which confirm the credit');
    trigger = { missing };
  }
  const native = !creditApi && !!settings.nativeUrl;
  if (!creditApi && !native) {
    throw new UsageError(
      'No way to issue store credit is configured for this profile.',
      'Configure the provider with `opcli giftcard setup` (a trigger id and/or a credit API token), or the storefront with `opcli config set native-url <url>`.',
    );
  }
  if (native) {
    const problem = nativeUrlProblem(settings.nativeUrl, serviceBaseUrl);
    if (problem) throw new UsageError(`Refusing the native gift card: ${problem}`, NATIVE_URL_HINT);
  }
  return { creditApi, native, trigger };
}

/** The chain of one request on the profile's paths: the trigger runs only with a customer id to confirm it. */
export function requestPlan(paths: ProfilePaths, req: Pick<CreditRequest, 'customerId'>): ChainPlan {
  const notes: string[] = [];
  let trigger = false;
  if (paths.trigger) {
    const missing = [...paths.trigger.missing];
    if (!req.customerId) missing.push('--customer-id, to find the loyalty card that confirms the credit');
    trigger = missing.length === 0;
    if (!trigger) notes.push(`The trigger workflow is configured but skipped: it needs ${missing.join(' and ')}.`);
  }
  const { creditApi, native } = paths;
  return { trigger, creditApi, native, first: trigger ? 'trigger' : creditApi ? 'credit-api' : 'native', notes };
}

/** Decides the paths available to one request, in the spec's order (profilePaths, then requestPlan). */
export function planChain(settings: ProviderSettings, req: Pick<CreditRequest, 'customerId'>, serviceBaseUrl: string | undefined): ChainPlan {
  return requestPlan(profilePaths(settings, serviceBaseUrl), req);
}

/** A human description of the path taken. */
export function describePath(path: CreditPath | FirstPath): string {
  switch (path) {
    case 'trigger':
      return 'the trigger workflow';
    case 'credit-api':
      return "the credit API (top up the customer's loyalty card, or create a card)";
    case 'credit-api-top-up':
      return "the credit API, added to the customer's loyalty card";
    case 'credit-api-issue':
      return 'the credit API, as a new gift card';
    case 'native':
      return "the storefront's native gift card";
  }
}

/** Subject, note, title and body of the card's e-mail. */
export function cardContent(req: CreditRequest) {
  const amount = formatMoney(req.amountCents, req.currency);
  // "#1003" whether the order number was typed 1003 or #1003 (as the orders list shows it).
  const order = orderLabel(req.orderNumber);
  const subject = req.bonus ? `Bonus Store Credit for Order ${order}` : `Gift Card for Claim #${req.claimId}`;
  const note = req.bonus
    ? `Bonus store credit; order ${order}; opcli issuance ${req.issuance}`
    : `Claim #${req.claimId}; order ${order}; opcli issuance ${req.issuance}`;
  // CHOICE (docs/spec-choices.md#gift-card-title): the card's title names the service as its creator.
  const title = `Gift card created by ${SERVICE_NAME}`;
  const body = req.bonus
    ? `Hello ${req.name}, ${SERVICE_NAME} has added a bonus store credit of ${amount} for your order ${order}.`
    : `Hello ${req.name}, your claim #${req.claimId} for order ${order} was resolved with store credit: ${SERVICE_NAME} has issued you a gift card of ${amount}.`;
  return { subject, note, title, body };
}

/** The request bodies of every path, validated with the shared schemas before anything is sent. */
export function requestBodies(req: CreditRequest, settings: ProviderSettings) {
  const content = cardContent(req);
  const amount = centsToNumber(req.amountCents);
  return {
    trigger: TriggerExecuteRequest.parse({ email: req.email, amount }),
    issue: GiftCardIssueRequest.parse({
      shop_url: settings.shopUrl ?? '',
      gift_card: { balance: amount, note: content.note },
      email_details: { recipient: req.name, recipient_email: req.email, title: content.title, subject: content.subject, body: content.body },
    }),
    topUp: GiftCardTopUpRequest.parse({ shop_url: settings.shopUrl ?? '', amount, type: 'refund', order_id: req.orderNumber }),
    native: NativeGiftCardRequest.parse({ amount, email: req.email, name: req.name, note: content.note, subject: content.subject }),
  };
}

/** One planned request for --dry-run, with when it is sent. */
export interface DryRunStep {
  when: string;
  request: PlannedRequest;
}

/** The requests the chain would send, in order, the token masked. */
export function dryRunSteps(plan: ChainPlan, req: CreditRequest, client: ProviderClient, settings: ProviderSettings, timing: ChainTiming): DryRunStep[] {
  const bodies = requestBodies(req, settings);
  const steps: DryRunStep[] = [];
  if (plan.trigger && req.customerId) {
    const lookup = client.plan('GET', client.lookupUrl(req.customerId));
    steps.push({ when: "read the loyalty card's balance before", request: lookup });
    steps.push({ when: 'run the trigger workflow', request: client.plan('POST', client.triggerUrl(), bodies.trigger, 'trigger') });
    steps.push({
      when: `poll every ${formatSeconds(timing.pollIntervalMs)} for up to ${formatSeconds(timing.triggerWaitMs)} until the balance grew by ${formatMoney(req.amountCents, req.currency)}`,
      request: lookup,
    });
  }
  if (plan.creditApi) {
    const prefix = plan.trigger ? 'if the trigger did not post in time: ' : '';
    if (req.customerId) {
      steps.push({ when: `${prefix}look for the customer's loyalty card`, request: client.plan('GET', client.lookupUrl(req.customerId)) });
      steps.push({
        when: `${prefix}if the customer has a loyalty card, add to it`,
        request: client.plan('PUT', client.topUpUrl('{gift_card_id}', true), bodies.topUp),
      });
      steps.push({ when: `${prefix}otherwise create a gift card`, request: client.plan('POST', client.issueUrl(), bodies.issue) });
    } else {
      steps.push({ when: `${prefix}create a gift card`, request: client.plan('POST', client.issueUrl(), bodies.issue) });
    }
    if (plan.trigger && req.customerId) {
      steps.push({
        when: `after a fallback: watch the loyalty card for up to ${formatSeconds(timing.lateCheckMs)} for a late trigger credit`,
        request: client.plan('GET', client.lookupUrl(req.customerId)),
      });
    }
  }
  if (plan.native) steps.push({ when: "create the storefront's native gift card", request: client.plan('POST', client.nativeUrl(), bodies.native, 'bearer') });
  return steps;
}

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

/** Runs the chain. Throws (after updating `progress`) when no path issued the credit. */
export async function runChain(req: CreditRequest, plan: ChainPlan, env: ChainEnv, progress: ChainProgress): Promise<ChainResult> {
  const { client, settings, timing } = env;
  const bodies = requestBodies(req, settings);
  const notes = progress.notes;
  let fellBack = false;
  let before: GiftCard | null = null;

  if (plan.trigger && req.customerId) {
    const customerId = req.customerId;
    before = await client.lookup(customerId);
    env.say(`Running the trigger workflow (${formatMoney(req.amountCents, req.currency)} to ${req.email})…`);
    let posted = false;
    try {
      await client.executeTrigger(bodies.trigger);
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
    if (posted) {
      progress.triggerPosted = true;
      progress.moneyMayHaveMoved = true;
      const deadline = env.now() + timing.triggerWaitMs;
      const card = await pollUntil(env, customerId, deadline, notes, (c) => grewBy(before, c, req.amountCents));
      if (card) {
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
      notes.push(`Waited ${formatSeconds(timing.triggerWaitMs)} for the trigger workflow to post the credit; it did not.`);
      env.say(`Waited ${formatSeconds(timing.triggerWaitMs)} for the trigger workflow to post the credit; it did not, so falling back to the credit API.`);
    }
    fellBack = true;
  }

  if (plan.creditApi) {
    let existing: GiftCard | null = null;
    if (req.customerId) {
      existing = await client.lookup(req.customerId);
      // The trigger may have posted between the last poll and now: then nothing more is sent.
      if (progress.triggerPosted && existing && grewBy(before, existing, req.amountCents)) {
        notes.push('The trigger credit arrived just after the polling window, before any fallback was sent.');
        return {
          path: 'trigger',
          card: existing,
          balanceCents: numberToCents(existing.amount),
          triggerPosted: true,
          fellBack: false,
          possibleDoubleCredit: false,
          notes,
          warnings: [],
        };
      }
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

  progress.moneyMayHaveMoved = true;
  env.say(`Creating a native gift card of ${formatMoney(req.amountCents, req.currency)} on the storefront…`);
  const card = await client.native(bodies.native);
  return { path: 'native', card, balanceCents: numberToCents(card.amount), triggerPosted: false, fellBack, possibleDoubleCredit: false, notes, warnings: [] };
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
