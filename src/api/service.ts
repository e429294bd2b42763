import type { HttpClient } from '../http/client.js';
import { ClaimCreated, type OfflineClaim, type Order, type ProductVariant, SessionContext, StatusOk } from '../schemas.js';

/** Paths of the spec's seven endpoints. */
export const PATHS = {
  token: '/v1/oauth/token',
  revoke: '/v1/oauth/revoke',
  sessionVerify: '/v1/oauth/session/verify',
  orders: '/v1/orders',
  order: (sourceOrderId: string) => `/v1/orders/${encodeURIComponent(sourceOrderId)}`,
  claims: '/v1/claims/offline',
  variants: (productId: string) => `/v2/products/${encodeURIComponent(productId)}/children`,
} as const;

/**
 * The API's endpoints as typed calls over the HTTP core; answers are checked with the shared
 * schemas. The token and revoke calls live in src/auth/oauth.ts (they take the profile's base URL
 * explicitly, for `--all`), and the order list's paging in src/orders/pager.ts.
 */
export function createServiceApi(http: HttpClient) {
  return {
    http,
    /** Endpoint 3. No Authorization header; needs only the base URL. */
    async verifySession(sessionToken: string, signal?: AbortSignal) {
      return (
        await http.request(
          { method: 'POST', url: PATHS.sessionVerify, json: { session_token: sessionToken }, auth: false, retry: 'never', signal },
          SessionContext,
        )
      ).body;
    },
    /** Endpoint 5. */
    async updateOrder(sourceOrderId: string, order: Order, signal?: AbortSignal) {
      return (await http.request({ method: 'PUT', url: PATHS.order(sourceOrderId), json: order, signal }, StatusOk)).body;
    },
    /** Endpoint 6. A POST: not resent when its fate is unknown. */
    async createClaim(claim: OfflineClaim, signal?: AbortSignal) {
      return (await http.request({ method: 'POST', url: PATHS.claims, json: claim, signal }, ClaimCreated)).body;
    },
    /** Endpoint 7. */
    async createVariant(productId: string, variant: ProductVariant, signal?: AbortSignal) {
      return (await http.request({ method: 'POST', url: PATHS.variants(productId), json: variant, signal }, StatusOk)).body;
    },
  };
}
export type ServiceApi = ReturnType<typeof createServiceApi>;
