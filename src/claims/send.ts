/**
 * The send stage of a batch: one claim request, and what its failure means for the row (rejected,
 * uncertain or not sent) and for the batch (go on, or stop).
 */
import type { ServiceApi } from '../api/service.js';
import { ApiError, AuthError, NetworkError, RedirectError, UsageError } from '../core/errors.js';
import type { Permit, RequestLimiter } from '../http/adaptive.js';
import { CERT_NOT_TRUSTED, PROXY_REFUSED } from '../http/client.js';
import { isStoreMismatch, storeMismatch, type ToSend } from './plan.js';
import type { SourceRow } from './reader.js';
import type { RowResult } from './results.js';
import { ClaimCreated } from '../schemas.js';
import { compiled } from './compiled.js';

/** Never-sent failures that every row would meet alike: the batch stops at the first. */
const STOPS_EVERY_ROW = new Set(['UND_ERR_INVALID_ARG', 'EENGINE_UNAVAILABLE', CERT_NOT_TRUSTED, PROXY_REFUSED]);

/**
 * The failure when it proves the service was not reached: nothing was written to it (a refused
 * connection, an unknown host, a connection or TLS handshake that failed before the request was
 * written). Not a failure every row meets for a reason of its own (an untrusted certificate, a
 * proxy's refusal, a request that cannot be built): those keep their own words and hints.
 */
export function unreachableFailure(error: unknown): NetworkError | undefined {
  if (!(error instanceof NetworkError) || error.sent || STOPS_EVERY_ROW.has(error.errorCode ?? '')) return undefined;
  return error;
}

/** How a failed request ends: the row's status, and whether the whole batch must stop. */
export function classifyFailure(error: unknown): { status: 'rejected' | 'uncertain' | 'not_sent'; stop: boolean } {
  // A redirect meets every row alike (a gateway, a wrong base URL): the batch stops. After a 307 or
  // 308 the claim was not processed; after another 3xx it may have been.
  if (error instanceof RedirectError) return { status: error.uncertain ? 'uncertain' : 'not_sent', stop: true };
  if (error instanceof ApiError) {
    // This row's storeId is not the token's store: this row is refused, the others may be fine.
    if (isStoreMismatch(error)) return { status: 'rejected', stop: false };
    // Refused before anything happened: the token or scope is wrong for every row alike.
    if (error.status === 401 || error.status === 403) return { status: 'not_sent', stop: true };
    // 429 (or 421, or a status the profile's not-processed-statuses names) after the core's
    // retries: refused, nothing created; the next run sends it.
    if (error.status === 429 || error.notProcessed) return { status: 'not_sent', stop: false };
    if (error.status >= 500) return { status: 'uncertain', stop: false };
    return { status: 'rejected', stop: false };
  }
  // Raised before a request went out (not logged in, no base URL).
  if (error instanceof AuthError || error instanceof UsageError) return { status: 'not_sent', stop: true };
  // Never written (a refused connection, after the core's retries): nothing was created. Whether
  // the service is down is the outage watch's to judge (src/claims/outage.ts); a request that
  // cannot be built, an HTTP library that cannot load, an untrusted certificate or a proxy that
  // refuses the tunnel meets every row alike.
  if (error instanceof NetworkError && !error.sent) return { status: 'not_sent', stop: STOPS_EVERY_ROW.has(error.errorCode ?? '') };
  // A timeout, a lost connection, an unreadable 2xx: the claim may exist.
  return { status: 'uncertain', stop: false };
}

/** What sending one row came to. */
export interface SendOutcome {
  result: RowResult;
  /** The whole batch must stop (every row would fail alike). */
  stop: boolean;
  error?: unknown;
}

/** The batch stopped while this row waited for its turn: no attempt of it reached the server. */
class StoppedBeforeSending extends Error {}

/**
 * The batch's limiter as one row sees it: waiting for a permit ends when the batch stops (Ctrl-C),
 * and that is known to have sent nothing: every earlier attempt of this row was refused with 429 or
 * never left (the HTTP core repeats a POST only then). A request that left is never cut short.
 */
function rowGate(limiter: RequestLimiter, stop: AbortSignal, onLeave?: () => void): RequestLimiter {
  return {
    async acquire(_signal, retryOf): Promise<Permit> {
      try {
        const permit = await limiter.acquire(stop, retryOf);
        onLeave?.();
        return permit;
      } catch (error) {
        if (stop.aborted) throw new StoppedBeforeSending();
        throw error;
      }
    },
    snapshot: () => limiter.snapshot(),
  };
}

/** How one row is sent: the batch's limiter and stop signal, and the token's store for the words of a mismatch. */
export interface SendOptions {
  tokenStore?: string;
  limiter?: RequestLimiter;
  /** Called when the limiter lets the request go (on each attempt: a 429 is asked again). */
  onLeave?: () => void;
  /** Stops a row still waiting for the limiter (Ctrl-C, the journal's lock lost). */
  stop: AbortSignal;
}

/** Sends one planned row, paced by the batch's limiter. Never throws: a failure is the row's outcome. */
export async function sendClaim(plan: ToSend, row: SourceRow, api: () => Promise<ServiceApi>, options: SendOptions): Promise<SendOutcome> {
  try {
    // No signal on the request: Ctrl-C stops new rows, but a request in flight is let finish so its outcome is known.
    const service = await api();
    const limit = options.limiter ? rowGate(options.limiter, options.stop, options.onLeave) : undefined;
    // Retries are not announced row by row: the outage watch and the summary speak for the batch.
    const created = await service.createClaim(plan.claim, { limiter: limit, answer: compiled(ClaimCreated), quiet: true });
    return { result: { line: row.line, status: 'filed', sourceOrderId: created.payload.sourceOrderId }, stop: false };
  } catch (error) {
    if (error instanceof StoppedBeforeSending) {
      return { result: { line: row.line, status: 'not_sent', error: 'the batch stopped before this row was sent' }, stop: false };
    }
    const { status, stop } = classifyFailure(error);
    let message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    if (isStoreMismatch(error)) message = `${storeMismatch(plan.claim.storeId, options.tokenStore)} (403)`;
    const errors = error instanceof ApiError && error.fieldErrors.length ? error.fieldErrors : undefined;
    return { result: { line: row.line, status, error: message, errors }, stop, error };
  }
}
