/** Endpoint 6: offline claims. Kept lean: thousands per second must pass on loopback. */
import { OfflineClaim } from '../schemas.js';
import { authorize } from './auth.js';
import type { Ctx, Reply } from './http.js';
import { json, readBody } from './http.js';
import type { SandboxState } from './state.js';

/** POST /v1/claims/offline. */
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
