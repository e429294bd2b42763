/** The plan of the store-credit chain: which paths a profile and a request allow, and the bodies each path sends. */
import { UsageError } from '../core/errors.js';
import { orderLabel } from '../core/identity.js';
import { GiftCardIssueRequest, GiftCardTopUpRequest, NativeGiftCardRequest, TriggerExecuteRequest, TriggerId } from '../schemas.js';
import type { CreditPath } from './ledger.js';
import { centsToNumber, formatMoney } from './money.js';
import {
  NATIVE_URL_HINT,
  nativeUrlProblem,
  type PlannedRequest,
  type ProviderClient,
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
