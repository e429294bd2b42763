/** The storefront platform's native gift card (the sandbox's own endpoint; the spec shows none). */
import { NativeGiftCardRequest } from '../schemas.js';
import { authorize } from './auth.js';
import type { Ctx, Reply } from './http.js';
import { json, readBody } from './http.js';
import type { SandboxState } from './state.js';
import { customerByEmail, giftCardBody, newGiftCard, toCents } from './state.js';

/** POST /storefront/gift-cards. */
export function createNativeGiftCard(state: SandboxState, ctx: Ctx): Reply {
  const denied = authorize(state, ctx, 'POST /storefront/gift-cards');
  if (denied) return denied;
  const body = readBody(ctx, NativeGiftCardRequest, 'native gift card request');
  if (!body.ok) return body.reply;
  const { amount, email, name, note, subject } = body.data;
  const card = newGiftCard(state, {
    source: 'native',
    customerId: customerByEmail(state, email)?.customerId ?? null,
    recipient: name,
    recipientEmail: email,
    note,
    subject,
  });
  const cents = toCents(amount);
  card.balanceCents = cents;
  card.credits.push({ amountCents: cents, kind: 'native', reference: note });
  state.counters.creditsPosted.native++;
  return json(200, giftCardBody(card));
}
