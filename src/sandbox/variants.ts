/** Endpoint 7: product variants (children of a product), bundles checked against created variants. */
import { ProductVariant } from '../schemas.js';
import { authorize } from './auth.js';
import type { Ctx, Reply } from './http.js';
import { invalidRequest, json, readBody } from './http.js';
import type { SandboxState } from './state.js';

/** POST /v2/products/{productId}/children. */
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
