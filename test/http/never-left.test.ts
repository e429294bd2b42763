/**
 * The one rule of "this request provably never left" (src/http/retry.ts `neverLeft`), over the
 * family of transport failures the HTTP core turns into errors: every reader agrees with it. A
 * POST that never left is `not_sent` for a batch and may be repeated; one that may have arrived is
 * uncertain for a batch, "outcome uncertain" for the core, and never repeated. Those that never left
 * are either the service not reached (an outage's "refused") or stopped on this side (the batch
 * stops: every row would meet them), never both.
 */
import { describe, expect, it } from 'vitest';
import { classifyFailure as rowFate } from '../../src/claims/pipeline.js';
import { isOutcomeUncertain } from '../../src/core/errors.js';
import { classifyFailure, mayRepeat, neverLeft, serviceNotReached, stoppedOnThisSide } from '../../src/http/retry.js';
import { REQUEST_WRITTEN } from '../../src/http/retry.js';

const url = new URL('https://api.example.test/v1/claims/offline');
const req = { method: 'POST' as const, url, maxBytes: 1024, deadlineMs: 30_000 };

/** A failure as undici raises it: a code, and whether it had written the request. */
function wireError(code: string, written?: boolean, extra: Record<string, unknown> = {}): Error {
  const error = Object.assign(new Error(`failed: ${code}`), { code }, extra);
  if (written !== undefined) Object.assign(error, { [REQUEST_WRITTEN]: written });
  return error;
}

/** The service could not be reached: nothing was written to it. */
const NOT_REACHED: [string, Error][] = [
  ...['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH'].map((c): [string, Error] => [c, wireError(c)]),
  ['a TLS handshake reset before the request was written', wireError('ECONNRESET', false)],
  ['a socket closed before the request was written', wireError('UND_ERR_SOCKET', false)],
];

/** Never left, for a reason of this side that every request meets alike. */
const STOPPED_HERE: [string, Error][] = [
  ['a request HTTP does not allow', wireError('UND_ERR_INVALID_ARG')],
  ['no HTTP library', wireError('EENGINE_UNAVAILABLE')],
  ['an untrusted certificate', wireError('UNABLE_TO_VERIFY_LEAF_SIGNATURE', false)],
  ['an expired certificate, wrapped', wireError('UND_ERR_SOCKET', false, { cause: wireError('CERT_HAS_EXPIRED') })],
];

/** May have reached the application: uncertain, never resent. */
const MAY_HAVE_ARRIVED: [string, Error][] = [
  ['a connection reset after the request was written', wireError('ECONNRESET', true)],
  ['a socket closed after the request was written', wireError('UND_ERR_SOCKET', true)],
  ['a failure not known to be before writing', wireError('ECONNRESET')],
  ['no answer in time', wireError('EHEADERS_TIMEOUT', true)],
  ['an answer cut off', wireError('EBODY_TIMEOUT', true)],
];

describe('never left: one rule, read alike by every caller', () => {
  it.each(NOT_REACHED)('%s: never left, the service not reached; the row not sent, the POST may go again', (_, raw) => {
    const error = classifyFailure(raw, req);
    expect(neverLeft(error)).toBe(true);
    expect(serviceNotReached(error)).toBe(error);
    expect(stoppedOnThisSide(error)).toBe(false);
    expect(isOutcomeUncertain(error)).toBe(false);
    expect(rowFate(error)).toEqual({ status: 'not_sent', stop: false });
    expect(mayRepeat('POST', error)).toBe(true);
  });

  it.each(STOPPED_HERE)('%s: never left, stopped on this side; every row not sent, the batch stops', (_, raw) => {
    const error = classifyFailure(raw, req);
    expect(neverLeft(error)).toBe(true);
    expect(serviceNotReached(error)).toBeUndefined();
    expect(stoppedOnThisSide(error)).toBe(true);
    expect(isOutcomeUncertain(error)).toBe(false);
    expect(rowFate(error)).toEqual({ status: 'not_sent', stop: true });
  });

  it.each(MAY_HAVE_ARRIVED)('%s: may have arrived; the row uncertain, never resent', (_, raw) => {
    const error = classifyFailure(raw, req);
    expect(neverLeft(error)).toBe(false);
    expect(serviceNotReached(error)).toBeUndefined();
    expect(stoppedOnThisSide(error)).toBe(false);
    expect(isOutcomeUncertain(error)).toBe(true);
    expect(rowFate(error)).toEqual({ status: 'uncertain', stop: false });
    expect(mayRepeat('POST', error)).toBe(false);
  });
});
