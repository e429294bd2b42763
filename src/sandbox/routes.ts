import { type Ctx, type Reply, json, readBody, invalidRequest } from './http.js';
import { authorizeDecision, authorizePage, revokeEndpoint, tokenEndpoint } from './oauth.js';
import { listOrders, updateOrder } from './orders.js';
import { executeTrigger, issueGiftCard, lookupGiftCard, topUpGiftCard } from './provider.js';
import { verifySession } from './session.js';
import { type SandboxState, customerByEmail, giftCardBody, newGiftCard, toCents } from './state.js';
import { OfflineClaim, NativeGiftCardRequest, ProductVariant } from '../schemas.js';
import { authorize } from './tokens.js';

export interface Route {
  method: string;
  pattern: RegExp;
  handler: (state: SandboxState, ctx: Ctx) => Reply;
}

const SEGMENT = '([^/]+)';

/** Every API, provider and storefront endpoint; path parameters are capture groups. */
export const ROUTES: Route[] = [
  { method: 'POST', pattern: /^\/v1\/oauth\/token$/, handler: tokenEndpoint },
  { method: 'POST', pattern: /^\/v1\/oauth\/revoke$/, handler: revokeEndpoint },
  { method: 'GET', pattern: /^\/v1\/oauth\/authorize$/, handler: authorizePage },
  { method: 'POST', pattern: /^\/v1\/oauth\/authorize\/decision$/, handler: authorizeDecision },
  { method: 'POST', pattern: /^\/v1\/oauth\/session\/verify$/, handler: verifySession },
  { method: 'GET', pattern: /^\/v1\/orders$/, handler: listOrders },
  { method: 'PUT', pattern: new RegExp(`^/v1/orders/${SEGMENT}$`), handler: updateOrder },
  { method: 'POST', pattern: /^\/v1\/claims\/offline$/, handler: createClaim },
  { method: 'POST', pattern: new RegExp(`^/v2/products/${SEGMENT}/children$`), handler: createVariant },
  { method: 'POST', pattern: /^\/provider\/v2\/gift-cards\/issue\/$/, handler: issueGiftCard },
  { method: 'GET', pattern: /^\/provider\/v2\/gift-cards\/$/, handler: lookupGiftCard },
  { method: 'PUT', pattern: new RegExp(`^/provider/v2/gift-cards/${SEGMENT}$`), handler: topUpGiftCard },
  { method: 'POST', pattern: new RegExp(`^/provider/v2/workflows/execute/${SEGMENT}$`), handler: executeTrigger },
  { method: 'POST', pattern: /^\/storefront\/gift-cards$/, handler: createNativeGiftCard },
];

export type Match = { kind: 'found'; route: Route; params: string[] } | { kind: 'method'; allow: string[] } | { kind: 'none' } | { kind: 'bad_path' };

export function matchRoute(method: string, path: string): Match {
  const allow: string[] = [];
  for (const route of ROUTES) {
    const m = route.pattern.exec(path);
    if (!m) continue;
    if (route.method !== method) {
      allow.push(route.method);
      continue;
    }
    try {
      return { kind: 'found', route, params: m.slice(1).map((p) => decodeURIComponent(p)) };
    } catch {
      return { kind: 'bad_path' };
    }
  }
  return allow.length > 0 ? { kind: 'method', allow } : { kind: 'none' };
}

/** Endpoint 6, POST /v1/claims/offline: kept lean, thousands per second must pass on loopback. */
export function createClaim(state: SandboxState, ctx: Ctx): Reply {
  const denied = authorize(state, ctx, 'POST /v1/claims/offline');
  if (denied) return denied;
  const body = readBody(ctx, OfflineClaim, 'offline claim');
  if (!body.ok) return body.reply;
  // The sandbox's tokens all belong to its one store: a claim for another store is refused.
  if (body.data.storeId !== state.store.storeId) {
    return json(403, {
      error: 'store_mismatch',
      message: `storeId ${body.data.storeId} is not the store of this access token (${state.store.storeId})`,
    });
  }
  const { claimFiledFrom: _from, options: _options, ...rest } = body.data;
  const sourceOrderId = `ord_off_${String(state.nextClaim++).padStart(6, '0')}`;
  const payload = { ...rest, sourceOrderId };
  state.claims.push({ sourceOrderId, payload, raw: ctx.body, receivedAt: state.now() });
  state.counters.claimsCreated++;
  return json(200, { status: 'ok', payload });
}

/** POST /storefront/gift-cards: the platform's native gift card (the sandbox's own endpoint; the spec shows none). */
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

/** Endpoint 7, POST /v2/products/{productId}/children: bundles checked against created variants. */
export function createVariant(state: SandboxState, ctx: Ctx): Reply {
  const denied = authorize(state, ctx, 'POST /v2/products/{productId}/children');
  if (denied) return denied;
  const productId = ctx.params[0] ?? '';
  const body = readBody(ctx, ProductVariant, 'product variant');
  if (!body.ok) return body.reply;
  const variant = body.data;
  if (variant.productId !== productId) {
    return invalidRequest(`productId ${variant.productId} differs from the product ${productId} in the path`, [
      { path: 'productId', message: `expected ${productId}, the product id of the path` },
    ]);
  }
  const missing = (variant.bundleProductIds ?? []).map((id, i) => ({ id, i })).filter(({ id }) => !state.variantIds.has(id));
  if (missing.length > 0) {
    return invalidRequest(
      `bundleProductIds names products not created yet: ${missing.map((m) => m.id).join(', ')}`,
      missing.map(({ id, i }) => ({ path: `bundleProductIds.${i}`, message: `no created variant or product ${id}` })),
    );
  }
  state.variants.push({ productId, variant, receivedAt: state.now() });
  // A bundle names its parts by variant id where the platform has them, else by product id.
  state.variantIds.add(variant.productId);
  if (variant.variantId !== undefined) state.variantIds.add(variant.variantId);
  state.counters.variantsCreated++;
  return json(200, { status: 'ok' });
}
