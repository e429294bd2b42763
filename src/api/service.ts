import { UsageError } from '../core/errors.js';
import type { HttpClient } from '../http/client.js';
import type { Order, ProductVariant } from '../schemas.js';

/** Start-up fast path (ARCHITECTURE.md): zod loads with the first answer read, so PATHS alone loads none. */
const schemas = () => import('../schemas.js');

/**
 * One identifier as one path segment: percent-encoded, so `/`, `?`, `#` and `%` stay inside it.
 * `.` and `..` (and empty) are refused: URL resolution would turn them into another path
 * (`orders update ..` sent PUT /v1/).
 */
export function pathSegment(id: string, what: string): string {
  if (id === '' || id === '.' || id === '..') {
    throw new UsageError(
      `The ${what} "${id}" cannot be used in a URL path${id ? ': "." and ".." would address another resource' : ': it is empty'}.`,
      `Pass the real ${what}.`,
    );
  }
  return encodeURIComponent(id);
}

/** Paths of the spec's seven endpoints. */
export const PATHS = {
  token: '/v1/oauth/token',
  revoke: '/v1/oauth/revoke',
  sessionVerify: '/v1/oauth/session/verify',
  orders: '/v1/orders',
  order: (sourceOrderId: string) => `/v1/orders/${pathSegment(sourceOrderId, 'source order id')}`,
  claims: '/v1/claims/offline',
  variants: (productId: string) => `/v2/products/${pathSegment(productId, 'product id')}/children`,
} as const;

/** Endpoints 3, 5 and 7 as typed calls, answers checked by the shared schemas (the others: oauth/endpoints.ts, orders/pages.ts, claims/pipeline.ts). */
export function createServiceApi(http: HttpClient) {
  return {
    /** Endpoint 3. No Authorization header; needs only the base URL. */
    async verifySession(sessionToken: string, signal?: AbortSignal) {
      return (
        await http.request(
          { method: 'POST', url: PATHS.sessionVerify, json: { session_token: sessionToken }, auth: false, retry: 'never', smallAnswer: true, signal },
          (
            await schemas()
          ).SessionContext,
        )
      ).body;
    },
    /** Endpoint 5. */
    async updateOrder(sourceOrderId: string, order: Order, signal?: AbortSignal) {
      return (await http.request({ method: 'PUT', url: PATHS.order(sourceOrderId), json: order, signal }, (await schemas()).StatusOk)).body;
    },
    /** Endpoint 7. */
    async createVariant(productId: string, variant: ProductVariant, signal?: AbortSignal) {
      return (await http.request({ method: 'POST', url: PATHS.variants(productId), json: variant, signal }, (await schemas()).StatusOk)).body;
    },
  };
}
export type ServiceApi = ReturnType<typeof createServiceApi>;
