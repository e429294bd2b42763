/** The gift card provider at /provider: the credit API (issue, look up, top up) and trigger workflows. */
import type { z } from 'zod';
import { GiftCardIssueRequest, GiftCardLookupQuery, GiftCardTopUpRequest, PROVIDER_ERRORS, TriggerExecuteRequest, fieldIssues } from '../schemas.js';
import type { Ctx, Reply } from './http.js';
import { isJsonContentType, json } from './http.js';
import type { CustomerRecord, GiftCardRecord, SandboxState } from './state.js';
import { customerByEmail, giftCardBody, isExpired, later, newGiftCard, toCents } from './state.js';
import type { ProviderErrorShape } from './types.js';

/** The one 404 opcli reads as "no card". */
const NO_CARD_MESSAGE = 'gift card not found';

/** The spec shows the provider's messages but not its bodies; real providers use each of these shapes. */
function providerError(shape: ProviderErrorShape, status: number, message: string, extra: Record<string, unknown> = {}): Reply {
  switch (shape) {
    case 'error':
      return json(status, { error: message, ...extra });
    case 'message':
      return json(status, { message, reason: `provider condition (${status})`, ...extra });
    case 'errors':
      return json(status, { errors: [{ message }], ...extra });
    case 'error-object':
      return json(status, { error: { code: status, message }, ...extra });
    case 'reason':
      return json(status, { status: 'error', reason: message, ...extra });
    case 'text':
      return { status, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: `${message}\n` };
    case 'html':
      return {
        status,
        headers: { 'content-type': 'text/html; charset=utf-8' },
        body: `<!doctype html><html><head><title>Error ${status}</title></head><body><h1>Error ${status}</h1><p>${message}</p></body></html>`,
      };
  }
}

function fail(state: SandboxState, status: number, message: string, extra?: Record<string, unknown>): Reply {
  return providerError(state.settings.providerErrorShape, status, message, extra);
}

function apiKeyError(state: SandboxState, ctx: Ctx, trigger = false): Reply | null {
  settleTriggers(state);
  const given = ctx.headers[`x-${state.providerName}-access-token`];
  // The trigger's execute URL is a workflow hook: the credit API token does not belong on it, but a wrong one is refused.
  if (trigger) return given === undefined || given === state.store.providerToken ? null : fail(state, 401, PROVIDER_ERRORS.apiKeyNotFound);
  return given === state.store.providerToken ? null : fail(state, 401, PROVIDER_ERRORS.apiKeyNotFound);
}

function shopError(state: SandboxState, shopUrl: unknown): Reply | null {
  return shopUrl === state.store.shopUrl ? null : fail(state, 404, PROVIDER_ERRORS.storeDomainNotFound);
}

function jsonBody(ctx: Ctx): { ok: true; value: unknown } | { ok: false; reply: Reply } {
  if (!isJsonContentType(ctx.headers)) return { ok: false, reply: json(400, { error: 'expected a JSON body (content-type application/json)' }) };
  try {
    return { ok: true, value: JSON.parse(ctx.body) };
  } catch {
    return { ok: false, reply: json(400, { error: 'the request body is not valid JSON' }) };
  }
}

/** A credit API write's body, after the provider's checks in its order: the token, a JSON body, the shop. */
function creditApiBody(state: SandboxState, ctx: Ctx): { ok: true; value: unknown } | { ok: false; reply: Reply } {
  const denied = apiKeyError(state, ctx);
  if (denied) return { ok: false, reply: denied };
  const parsed = jsonBody(ctx);
  if (!parsed.ok) return parsed;
  const wrongShop = shopError(state, (parsed.value as { shop_url?: unknown } | null)?.shop_url);
  return wrongShop ? { ok: false, reply: wrongShop } : parsed;
}

function unprocessable(state: SandboxState, error: z.ZodError, messages: Record<string, string>): Reply {
  const errors = fieldIssues(error);
  for (const issue of errors) {
    const message = messages[issue.path];
    if (message) return fail(state, 422, message, state.settings.providerErrorShape === 'errors' ? {} : { errors });
  }
  const first = errors[0];
  return fail(state, 422, first ? `${first.path}: ${first.message}` : 'invalid request', state.settings.providerErrorShape === 'errors' ? {} : { errors });
}

function credit(card: GiftCardRecord, cents: number, kind: string, reference: string): void {
  card.balanceCents += cents;
  card.credits.push({ amountCents: cents, kind, reference });
}

/** The customer's loyalty card if it can still take credit. */
function usableLoyaltyCard(state: SandboxState, customer: CustomerRecord): GiftCardRecord | undefined {
  const card = customer.loyaltyCardId ? state.giftCards.get(customer.loyaltyCardId) : undefined;
  return card && !isExpired(card, state.now()) ? card : undefined;
}

/** POST /provider/v2/gift-cards/issue/. */
export function issueGiftCard(state: SandboxState, ctx: Ctx): Reply {
  const parsed = creditApiBody(state, ctx);
  if (!parsed.ok) return parsed.reply;
  const result = GiftCardIssueRequest.safeParse(parsed.value);
  if (!result.success) {
    return unprocessable(state, result.error, {
      'email_details.recipient_email': 'a valid customer e-mail is required to create a gift card',
      'gift_card.balance': 'the gift card amount must be above zero (at most two decimals)',
    });
  }
  const body = result.data;
  const customer = customerByEmail(state, body.email_details.recipient_email);
  const card = newGiftCard(state, {
    source: 'issue',
    customerId: customer?.customerId ?? null,
    recipient: body.email_details.recipient,
    recipientEmail: body.email_details.recipient_email,
    note: body.gift_card.note,
    subject: body.email_details.subject,
    title: body.email_details.title,
    body: body.email_details.body,
  });
  credit(card, toCents(body.gift_card.balance), 'issue', body.gift_card.note);
  // A customer without a usable loyalty card gets this one as theirs, so a later lookup finds it.
  if (customer && !usableLoyaltyCard(state, customer)) customer.loyaltyCardId = card.giftCardId;
  state.counters.creditsPosted.creditApiIssue++;
  return json(200, giftCardBody(card));
}

/** GET /provider/v2/gift-cards/?shop_url=&customer_id=. */
export function lookupGiftCard(state: SandboxState, ctx: Ctx): Reply {
  const denied = apiKeyError(state, ctx);
  if (denied) return denied;
  const wrongShop = shopError(state, ctx.query.shop_url);
  if (wrongShop) return wrongShop;
  const result = GiftCardLookupQuery.safeParse(ctx.query);
  if (!result.success) return unprocessable(state, result.error, {});
  const customer = state.customers.get(result.data.customer_id);
  // A customer id the provider does not know is not linked to any card: the spec's "balance update failure".
  if (!customer && state.settings.unknownCustomer === 'balance-update-failure') return fail(state, 404, PROVIDER_ERRORS.balanceUpdateFailure);
  const card = customer?.loyaltyCardId ? state.giftCards.get(customer.loyaltyCardId) : undefined;
  if (!card || !customer) return fail(state, 404, NO_CARD_MESSAGE);
  // CHOICE (docs/spec-choices.md#loyalty-card-holder): the answer names the card's holder, as a card carries the customer's e-mail.
  return json(200, { ...giftCardBody(card), customer_email: customer.email });
}

/** PUT /provider/v2/gift-cards/{giftCardId}: adds credit to a card. */
export function topUpGiftCard(state: SandboxState, ctx: Ctx): Reply {
  const parsed = creditApiBody(state, ctx);
  if (!parsed.ok) return parsed.reply;
  const failure = fail(state, 422, PROVIDER_ERRORS.balanceUpdateFailure);
  const result = GiftCardTopUpRequest.safeParse(parsed.value);
  if (!result.success) {
    return unprocessable(state, result.error, { amount: PROVIDER_ERRORS.balanceUpdateFailure });
  }
  const card = state.giftCards.get(ctx.params[0] ?? '');
  if (!card || isExpired(card, state.now()) || card.customerId === null) return failure;
  credit(card, toCents(result.data.amount), result.data.type, result.data.order_id);
  state.counters.creditsPosted.creditApiTopUp++;
  return json(200, giftCardBody(card));
}

/** Credits the loyalty card of the customer with an e-mail, creating the customer or the card when missing. */
function postTriggerCredit(state: SandboxState, email: string, cents: number, triggerId: string): void {
  let customer = customerByEmail(state, email);
  if (!customer) {
    customer = {
      customerId: `cust_${state.nextCustomer++}`,
      email,
      name: email.split('@')[0] ?? email,
      loyaltyCardId: null,
    };
    state.customers.set(customer.customerId, customer);
  }
  let card = usableLoyaltyCard(state, customer);
  if (!card) {
    card = newGiftCard(state, {
      source: 'trigger',
      customerId: customer.customerId,
      recipient: customer.name,
      recipientEmail: customer.email,
      note: `loyalty card (workflow ${triggerId})`,
    });
    customer.loyaltyCardId = card.giftCardId;
  }
  credit(card, cents, 'trigger', triggerId);
  state.counters.creditsPosted.trigger++;
}

/** Posts every trigger credit due by the sandbox's clock; called before each provider answer and state read too. */
export function settleTriggers(state: SandboxState): void {
  const now = state.now();
  const due = state.pendingTriggers.filter((p) => p.dueAt <= now);
  if (due.length === 0) return;
  state.pendingTriggers = state.pendingTriggers.filter((p) => p.dueAt > now);
  for (const p of due) postTriggerCredit(state, p.email, p.cents, p.triggerId);
}

/** POST /provider/v2/workflows/execute/{triggerId}: accepted now, credited after triggerDelayMs. */
export function executeTrigger(state: SandboxState, ctx: Ctx): Reply {
  const denied = apiKeyError(state, ctx, true);
  if (denied) return denied;
  const triggerId = ctx.params[0] ?? '';
  if (triggerId !== state.store.triggerId) return fail(state, 404, 'trigger not found');
  const parsed = jsonBody(ctx);
  if (!parsed.ok) return parsed.reply;
  const result = TriggerExecuteRequest.safeParse(parsed.value);
  if (!result.success) return unprocessable(state, result.error, {});
  const { email, amount } = result.data;
  const delay = state.settings.triggerDelayMs;
  if (delay !== null) {
    state.pendingTriggers.push({ dueAt: state.now() + delay, email, cents: toCents(amount), triggerId });
    // Posted on time even when nobody asks.
    later(state, delay, () => settleTriggers(state));
  }
  return json(202, { status: 'accepted' });
}
