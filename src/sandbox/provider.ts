/** The external gift card provider, mounted at /provider: credit API (issue, look up, top up) and trigger workflows. */
import type { z } from 'zod';
import {
  GiftCardIssueRequest,
  GiftCardLookupQuery,
  GiftCardTopUpRequest,
  PROVIDER_ERRORS,
  TriggerExecuteRequest,
  fieldIssues,
} from '../schemas.js';
import type { Ctx, Reply } from './http.js';
import { isJsonContentType, json } from './http.js';
import type { CustomerRecord, GiftCardRecord, SandboxState } from './state.js';
import { customerByEmail, giftCardBody, isExpired, newGiftCard, toCents } from './state.js';

/** The header that carries the merchant's credit API token. */
export function providerTokenHeader(state: SandboxState): string {
  return `x-${state.providerName}-access-token`;
}

function apiKeyError(state: SandboxState, ctx: Ctx): Reply | null {
  const given = ctx.headers[providerTokenHeader(state)];
  return given === state.store.providerToken ? null : json(401, { error: PROVIDER_ERRORS.apiKeyNotFound });
}

function shopError(state: SandboxState, shopUrl: unknown): Reply | null {
  return shopUrl === state.store.shopUrl ? null : json(404, { error: PROVIDER_ERRORS.storeDomainNotFound });
}

function jsonBody(ctx: Ctx): { ok: true; value: unknown } | { ok: false; reply: Reply } {
  if (!isJsonContentType(ctx.headers)) return { ok: false, reply: json(400, { error: 'expected a JSON body (content-type application/json)' }) };
  try {
    return { ok: true, value: JSON.parse(ctx.body) };
  } catch {
    return { ok: false, reply: json(400, { error: 'the request body is not valid JSON' }) };
  }
}

function shopUrlOf(value: unknown): unknown {
  return value !== null && typeof value === 'object' ? (value as { shop_url?: unknown }).shop_url : undefined;
}

function unprocessable(error: z.ZodError, messages: Record<string, string>): Reply {
  const errors = fieldIssues(error);
  for (const issue of errors) {
    const message = messages[issue.path];
    if (message) return json(422, { error: message, errors });
  }
  const first = errors[0];
  return json(422, { error: first ? `${first.path}: ${first.message}` : 'invalid request', errors });
}

function credit(card: GiftCardRecord, cents: number, kind: string, reference: string): void {
  card.balanceCents += cents;
  card.credits.push({ amountCents: cents, kind, reference });
}

/** The customer's loyalty card if it can still take credit. */
function usableLoyaltyCard(state: SandboxState, customer: CustomerRecord): GiftCardRecord | undefined {
  const card = customer.loyaltyCardId ? state.giftCards.get(customer.loyaltyCardId) : undefined;
  return card && !isExpired(card) ? card : undefined;
}

/** POST /provider/v2/gift-cards/issue/. */
export function issueGiftCard(state: SandboxState, ctx: Ctx): Reply {
  const denied = apiKeyError(state, ctx);
  if (denied) return denied;
  const parsed = jsonBody(ctx);
  if (!parsed.ok) return parsed.reply;
  const wrongShop = shopError(state, shopUrlOf(parsed.value));
  if (wrongShop) return wrongShop;
  const result = GiftCardIssueRequest.safeParse(parsed.value);
  if (!result.success) {
    return unprocessable(result.error, {
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
  if (!result.success) return unprocessable(result.error, {});
  const customer = state.customers.get(result.data.customer_id);
  const card = customer?.loyaltyCardId ? state.giftCards.get(customer.loyaltyCardId) : undefined;
  if (!card) return json(404, { error: 'gift card not found' });
  return json(200, giftCardBody(card));
}

/** PUT /provider/v2/gift-cards/{giftCardId}: adds credit to a card. */
export function topUpGiftCard(state: SandboxState, ctx: Ctx): Reply {
  const denied = apiKeyError(state, ctx);
  if (denied) return denied;
  const parsed = jsonBody(ctx);
  if (!parsed.ok) return parsed.reply;
  const wrongShop = shopError(state, shopUrlOf(parsed.value));
  if (wrongShop) return wrongShop;
  const failure = json(422, { error: PROVIDER_ERRORS.balanceUpdateFailure });
  const result = GiftCardTopUpRequest.safeParse(parsed.value);
  if (!result.success) {
    return unprocessable(result.error, { amount: PROVIDER_ERRORS.balanceUpdateFailure });
  }
  const card = state.giftCards.get(ctx.params[0] ?? '');
  if (!card || isExpired(card) || card.customerId === null) return failure;
  credit(card, toCents(result.data.amount), result.data.type, result.data.order_id);
  state.counters.creditsPosted.creditApiTopUp++;
  return json(200, giftCardBody(card));
}

/** Credits the loyalty card of the customer with an e-mail, creating the customer or the card when missing. */
export function postTriggerCredit(state: SandboxState, email: string, cents: number, triggerId: string): void {
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

/** POST /provider/v2/workflows/execute/{triggerId}: accepted now, credited after triggerDelayMs. */
export function executeTrigger(state: SandboxState, ctx: Ctx): Reply {
  const denied = apiKeyError(state, ctx);
  if (denied) return denied;
  const triggerId = ctx.params[0] ?? '';
  if (triggerId !== state.store.triggerId) return json(404, { error: 'trigger not found' });
  const parsed = jsonBody(ctx);
  if (!parsed.ok) return parsed.reply;
  const result = TriggerExecuteRequest.safeParse(parsed.value);
  if (!result.success) return unprocessable(result.error, {});
  const { email, amount } = result.data;
  const delay = state.settings.triggerDelayMs;
  if (delay !== null) {
    const timer = setTimeout(() => {
      state.timers.delete(timer);
      postTriggerCredit(state, email, toCents(amount), triggerId);
    }, delay);
    timer.unref();
    state.timers.add(timer);
  }
  return json(202, { status: 'accepted' });
}
