/** The sandbox's route table: every API, provider and storefront endpoint. */
import { createClaim } from './claims.js';
import { authorizeDecision, authorizePage } from './consent.js';
import type { Ctx, Reply } from './http.js';
import { createNativeGiftCard } from './native.js';
import { revokeEndpoint, tokenEndpoint } from './oauth.js';
import { listOrders, updateOrder } from './orders.js';
import { executeTrigger, issueGiftCard, lookupGiftCard, topUpGiftCard } from './provider.js';
import { verifySession } from './session.js';
import type { SandboxState } from './state.js';
import { createVariant } from './variants.js';

export interface Route {
  method: string;
  pattern: RegExp;
  handler: (state: SandboxState, ctx: Ctx) => Reply;
}

const SEGMENT = '([^/]+)';

/** Every route; path parameters are the pattern's capture groups. */
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

/** Finds the route of a method and path. */
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
