import type { HttpClient } from '../http/client.js';
import {
  ClaimCreated,
  type OfflineClaim,
  type Order,
  type OrdersQuery,
  OrdersPage,
  type ProductVariant,
  type RevokeRequest,
  SessionContext,
  StatusOk,
  type TokenRequest,
  TokenResponse,
} from '../schemas.js';

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

/** The spec's endpoints as typed calls over the HTTP core; answers are checked with the shared schemas. */
export function createServiceApi(http: HttpClient) {
  return {
    http,
    /** Endpoint 1. No Authorization header (spec, Authentication rule 6). */
    async token(body: TokenRequest, signal?: AbortSignal): Promise<TokenResponse> {
      return (await http.request({ method: 'POST', url: PATHS.token, json: body, auth: false, signal }, TokenResponse)).body;
    },
    /** Endpoint 2. The answer is "not shown"; any 2xx is success. */
    async revoke(body: RevokeRequest, signal?: AbortSignal): Promise<void> {
      await http.request({ method: 'POST', url: PATHS.revoke, json: body, auth: false, signal });
    },
    /** Endpoint 3. No Authorization header; needs only the base URL. */
    async verifySession(sessionToken: string, signal?: AbortSignal) {
      return (
        await http.request(
          { method: 'POST', url: PATHS.sessionVerify, json: { session_token: sessionToken }, auth: false, retry: 'never', signal },
          SessionContext,
        )
      ).body;
    },
    /** Endpoint 4: one page of orders. */
    async listOrders(query: OrdersQuery, signal?: AbortSignal) {
      return (await http.request({ method: 'GET', url: PATHS.orders, query, signal }, OrdersPage)).body;
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
