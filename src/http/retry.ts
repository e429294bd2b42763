/**
 * Whether a request goes again, and when; and what a failed exchange means: a typed error that says
 * whether it may have reached the service (`sent`), whether trying again could help, and what to do
 * (docs/http.md#what-is-resent-and-what-never-is).
 */
import { NetworkError, OpcliError, TimeoutError } from '../core/errors.js';
import { safeLine } from '../text/safe.js';

// The wire's failures: the codes the HTTP core's wire (client.ts) gives an error, and what it met.

export const CONNECT_TIMEOUT = 'ECONNECT_TIMEOUT';
export const HEADERS_TIMEOUT = 'EHEADERS_TIMEOUT';
export const BODY_TIMEOUT = 'EBODY_TIMEOUT';
/** The HTTP library could not be loaded (a broken bundle chunk): nothing was sent. */
export const ENGINE_UNAVAILABLE = 'EENGINE_UNAVAILABLE';
/** An invalid header value: never sent. */
export const INVALID_REQUEST = 'UND_ERR_INVALID_ARG';
export const BODY_TOO_LARGE = 'EBODY_TOO_LARGE';
export const DEADLINE_PASSED = 'EDEADLINE';

/** Set on a failure's error: whether undici started writing the request; without it nothing was on the wire. */
export const REQUEST_WRITTEN = Symbol('requestWritten');

export interface PeerCertificate {
  issuer?: string;
  subject?: string;
  validTo?: string;
  altNames?: string;
}

/** What a failed exchange met: the proxy it went through (as client.ts's ProxyChoice names it), the certificate it was shown. */
export interface WireFailure {
  proxy?: { source: string; shown: string };
  peer?: PeerCertificate;
}

const CERT_ERROR_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
]);

/** The code of a certificate error, also when it is wrapped (undici's SecureProxyConnectionError). */
export function certificateCode(error: unknown): string | undefined {
  for (let e = error as { code?: string; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (e.code && CERT_ERROR_CODES.has(e.code)) return e.code;
  }
  return undefined;
}

/** Whether a failure came after the request was written (undefined when it did not come from the wire). */
export function requestWritten(error: unknown): boolean | undefined {
  return error !== null && typeof error === 'object' ? (error as { [REQUEST_WRITTEN]?: boolean })[REQUEST_WRITTEN] : undefined;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

/** GET, PUT and DELETE may be repeated without changing the result; POST and PATCH may not. */
export function isIdempotent(method: Method): boolean {
  return method === 'GET' || method === 'PUT' || method === 'DELETE' || method === 'HEAD';
}

const RETRY_STATUSES = new Set([429, 502, 503, 504]);

/** A POST only on 429: after a 500 or 502 it may have been processed, and the API has no idempotency key. */
export function shouldRetryStatus(method: Method, status: number): boolean {
  if (isIdempotent(method)) return RETRY_STATUSES.has(status);
  return status === 429;
}

/** Capped exponential backoff with jitter: between half and all of min(cap, base * 2^attempt). */
export function backoffDelay(attempt: number, random: () => number, baseMs = 200, capMs = 5_000): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** attempt);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Retry-After (seconds, or an HTTP date) in milliseconds, capped; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number, capMs = 60_000): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const date = Date.parse(trimmed);
    if (Number.isNaN(date)) return undefined;
    ms = date - now;
  }
  return Math.min(capMs, Math.max(0, Math.round(ms)));
}

export function formatWait(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms)}ms`;
}

/** Connection errors that prove the request never left. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', CONNECT_TIMEOUT, 'EHOSTUNREACH', 'ENETUNREACH', ENGINE_UNAVAILABLE]);
const TIMEOUT_CODES = new Set([HEADERS_TIMEOUT, BODY_TIMEOUT]);
export const CERT_NOT_TRUSTED = 'ECERT_NOT_TRUSTED';
/** A proxy refused to open a tunnel (403, 407…). */
export const PROXY_REFUSED = 'EPROXY_REFUSED';
/** Failures a retry would only meet again. */
const NEVER_REPEATED = new Set([INVALID_REQUEST, BODY_TOO_LARGE, DEADLINE_PASSED, CERT_NOT_TRUSTED, PROXY_REFUSED]);

/**
 * The one rule of "this request provably never left": a NetworkError of this core with `sent` false
 * (no socket, no DNS, no TLS handshake, a proxy's refusal, nothing written). Anything else may have arrived.
 */
export function neverLeft(error: unknown): error is NetworkError {
  return error instanceof NetworkError && !error.sent;
}

/** Never-left failures of this side's setup, which every request meets alike. */
const STOPPED_ON_THIS_SIDE = new Set([INVALID_REQUEST, ENGINE_UNAVAILABLE, CERT_NOT_TRUSTED, PROXY_REFUSED]);

export function stoppedOnThisSide(error: unknown): error is NetworkError {
  return neverLeft(error) && STOPPED_ON_THIS_SIDE.has(error.errorCode ?? '');
}

/** The failure when it proves the service was not reached; not one stopped on this side, which keeps its own words. */
export function serviceNotReached(error: unknown): NetworkError | undefined {
  return neverLeft(error) && !STOPPED_ON_THIS_SIDE.has(error.errorCode ?? '') ? error : undefined;
}

export function wouldRecur(error: unknown): boolean {
  return error instanceof NetworkError && NEVER_REPEATED.has(error.errorCode ?? '');
}

/** An idempotent request after any connection failure but an unknown host, a POST only when it provably never left. */
export function mayRepeat(method: Method, failure: Error): failure is NetworkError {
  if (!(failure instanceof NetworkError) || wouldRecur(failure)) return false;
  return isIdempotent(method) ? failure.errorCode !== 'ENOTFOUND' : neverLeft(failure);
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

interface FailedRequest {
  method: Method;
  url: URL;
  signal?: AbortSignal;
  /** Its size limit is OPCLI_HTTP_MAX_SMALL_BODY. */
  smallAnswer?: boolean;
  maxBytes: number;
  deadlineMs: number;
}

/** The caller's own abort as it is; else a NetworkError (or TimeoutError) that says whether the request may have arrived. */
export function classifyFailure(error: unknown, req: FailedRequest): Error {
  if (error instanceof OpcliError) return error;
  const err = error as { name?: string; code?: string; message?: string } | undefined;
  if (req.signal?.aborted) return error as Error;
  const { url } = req;
  const code = err?.code ?? '';
  const where = `${req.method} ${url.origin}${url.pathname}`;
  const wire = (error as { wire?: WireFailure } | undefined)?.wire;
  // undici names a proxy's refusal of CONNECT an AbortError too: read below, not passed on as an abort.
  if (err?.name === 'AbortError' && !wire?.proxy) return error as Error;
  const certCode = certificateCode(error);
  if (certCode) return certificateError(where, url, certCode, wire, error);
  const viaProxy = wire?.proxy ? proxyFailure(where, url, wire.proxy, err, error) : undefined;
  if (viaProxy) return viaProxy;
  const limit = limitFailure(where, req, code, error);
  if (limit) return limit;
  if (code === INVALID_REQUEST) {
    return new NetworkError(`${where} was not sent: ${safeLine(err?.message ?? 'invalid request')}`, {
      sent: false,
      errorCode: INVALID_REQUEST,
      cause: error,
      hint: 'A header value (usually the access token) holds a character HTTP does not allow, such as a trailing \\r from a Windows file.',
    });
  }
  if (NOT_SENT_CODES.has(code)) return new NetworkError(`${where} could not connect (${code})`, { sent: false, errorCode: code, cause: error });
  const what = code || err?.message || 'unknown error';
  // Failed before undici wrote a byte of it (a TLS handshake, a closed connection): never left, whatever the code.
  if (requestWritten(error) === false) {
    return new NetworkError(`${where} was not sent: the connection failed before the request was written (${what})`, {
      sent: false,
      errorCode: code || undefined,
      cause: error,
    });
  }
  return new NetworkError(`${where} failed: the connection was lost (${what})`, { sent: true, errorCode: code || undefined, cause: error });
}

/** A proxy's refusal to open a tunnel, or no connection to it. */
function proxyFailure(
  where: string,
  url: URL,
  proxy: NonNullable<WireFailure['proxy']>,
  err: { code?: string; message?: string } | undefined,
  cause: unknown,
): NetworkError | undefined {
  // The proxy refused the tunnel (undici: "Proxy response (407) !== 200 when HTTP Tunneling"): nothing reached the server.
  const refused = /Proxy response \((\d{3})\)|Proxy Authentication Required \((\d{3})\)/.exec(err?.message ?? '');
  if (refused) {
    const status = Number(refused[1] ?? refused[2]);
    const unavailable = status >= 500;
    return new NetworkError(
      `${where} was not sent: the proxy ${proxy.shown} (${proxy.source}) answered ${status} when asked to connect to ${url.host}${status === 407 ? ' (it wants a login)' : ''}`,
      {
        sent: false,
        errorCode: unavailable ? 'EPROXY_UNAVAILABLE' : PROXY_REFUSED,
        cause,
        hint:
          status === 407
            ? `Give the proxy's user and password in the proxy URL (http://user:password@host:port) in ${proxy.source}.`
            : unavailable
              ? `The proxy could not reach ${url.host}: check the base URL, or add the host to NO_PROXY if it is reached directly.`
              : `The proxy does not allow connections to ${url.host}: ask its administrator, or add the host to NO_PROXY (or the no-proxy setting) if it is reached directly.`,
      },
    );
  }
  const code = err?.code ?? '';
  if (!NOT_SENT_CODES.has(code)) return undefined;
  return new NetworkError(`${where} was not sent: could not connect to the proxy ${proxy.shown} (${proxy.source}) (${code})`, {
    sent: false,
    errorCode: code,
    cause,
    hint: `Check that the proxy is running and its address in ${proxy.source}; unset it, or add ${url.hostname} to NO_PROXY (or the no-proxy setting), to connect directly.`,
  });
}

/** The client's own limits: no answer in time, too slow, too large. */
function limitFailure(where: string, req: FailedRequest, code: string, cause: unknown): NetworkError | undefined {
  if (TIMEOUT_CODES.has(code)) return new TimeoutError(`${where} timed out waiting for the server`, cause);
  const fate = isIdempotent(req.method) ? '' : '; the request may have been processed';
  if (code === DEADLINE_PASSED) {
    return new TimeoutError(`${where} did not finish within ${req.deadlineMs / 1000} s, the deadline OPCLI_HTTP_DEADLINE sets${fate}`, cause, {
      errorCode: DEADLINE_PASSED,
      hint: 'The server kept the answer coming too slowly. Try again later, or raise OPCLI_HTTP_DEADLINE (milliseconds) if it is expected to take this long.',
    });
  }
  if (code === BODY_TOO_LARGE) {
    const setting = req.smallAnswer ? 'OPCLI_HTTP_MAX_SMALL_BODY' : 'OPCLI_HTTP_MAX_BODY';
    return new NetworkError(`${where} answered with more than ${formatBytes(req.maxBytes)}, the limit ${setting} sets; reading stopped there${fate}`, {
      sent: true,
      errorCode: BODY_TOO_LARGE,
      cause,
      hint: `Check the base URL: the service's answers are far smaller. Raise ${setting} (bytes) only if this answer is expected to be this large.`,
    });
  }
  return undefined;
}

/** Node's certificate error codes in words; any other is an untrusted issuer. */
const CERT_PROBLEMS: Record<string, string> = {
  CERT_HAS_EXPIRED: 'has expired',
  CERT_NOT_YET_VALID: 'is not valid yet',
  ERR_TLS_CERT_ALTNAME_INVALID: 'is for another host name',
  HOSTNAME_MISMATCH: 'is for another host name',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'is self-signed and not trusted',
};

/** A refused certificate: never sent, never retried; names the host, the issuer and how to trust a private CA. */
function certificateError(where: string, url: URL, code: string, wire: WireFailure | undefined, cause: unknown): NetworkError {
  const peer = wire?.peer;
  const issuer = peer?.issuer ? safeLine(peer.issuer) : undefined;
  const via = wire?.proxy ? ` (through the proxy ${wire.proxy.shown})` : '';
  const details = [
    issuer ? `issued by "${issuer}"` : undefined,
    code === 'ERR_TLS_CERT_ALTNAME_INVALID' && peer?.altNames ? `for ${safeLine(peer.altNames)}` : undefined,
    code === 'CERT_HAS_EXPIRED' && peer?.validTo ? `expired ${safeLine(peer.validTo)}` : undefined,
  ].filter(Boolean);
  const trustHint =
    "If this is your organisation's certificate authority, trust it: `opcli config set ca-file /path/to/ca.pem` (or OPCLI_CA_FILE, or NODE_EXTRA_CA_CERTS, both a PEM file); NODE_USE_SYSTEM_CA=1 (Node 22.19 or later) trusts the system's store too.";
  const hint =
    code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH'
      ? `Check the host in the base URL (\`opcli config get base-url\`): the server presents a certificate for other names.`
      : code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID'
        ? "Check this machine's clock; otherwise the server's certificate must be renewed."
        : trustHint;
  const problem = CERT_PROBLEMS[code] ?? 'is not trusted: it was issued by a certificate authority this machine does not trust';
  return new NetworkError(
    `${where} was not sent: the certificate of ${url.host}${via} ${problem} (${code}${details.length ? `; ${details.join(', ')}` : ''}).`,
    { sent: false, errorCode: CERT_NOT_TRUSTED, cause, hint },
  );
}
