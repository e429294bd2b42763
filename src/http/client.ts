import type { z } from 'zod';
import { ApiError, AuthError, ExitCode, NetworkError, OpcliError, RedirectError, TimeoutError, UsageError } from '../errors.js';
import { type Redactor, redactJson } from '../redact.js';
import { safeLine, safeText } from '../text/safe.js';
import { readErrorBody } from './error-body.js';
import { backoffDelay, formatWait, isIdempotent, type Method, parseRetryAfter, shouldRetryStatus } from './retry.js';
import type { RequestLimiter } from './adaptive.js';
import { readBody } from './body.js';
import {
  BODY_TIMEOUT,
  BODY_TOO_LARGE,
  CONNECT_TIMEOUT,
  DEADLINE_PASSED,
  ENGINE_UNAVAILABLE,
  HEADERS_TIMEOUT,
  INVALID_REQUEST,
  certificateCode,
  requestWritten,
  Transport,
  type WireFailure,
  type WireTimers,
} from './transport.js';
import type { Route } from './proxy.js';

/** Where the bearer token comes from; the auth layer implements refresh behind it. */
export interface TokenSource {
  /** A valid access token for a request to `target` (refreshing first when it is about to expire); refused when the token does not belong there. */
  get(target?: URL): Promise<string>;
  /** Called once after a 401 `invalid_token` answered to `sent`; a fresh token, or undefined to give up. */
  refreshAfterUnauthorized?(sent: string): Promise<string | undefined>;
}

export interface HttpRequest {
  method: Method;
  /** An absolute URL, or a path joined to the base URL. */
  url: string;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** A JSON body. */
  json?: unknown;
  /** Attach `Authorization: Bearer` (default true). When false no Authorization header is ever sent. */
  auth?: boolean;
  /** 'never' turns retries off for this request. */
  retry?: 'auto' | 'never';
  signal?: AbortSignal;
  /** Overall timeout for headers and body, in milliseconds. */
  timeoutMs?: number;
  /**
   * Paces this request with an adaptive limiter (a batch shares one across its requests): every
   * attempt waits for a permit and reports its answer; the limiter's pause replaces the client's
   * own wait after a 429, and no notice is printed per 429 (the caller shows the limiter's state).
   */
  limiter?: RequestLimiter;
  /**
   * The body of a 2xx answer is returned as its text, not parsed (an error's body still is): a long
   * listing fetches pages ahead and parses each when its turn comes (`readBody`), so a page waiting
   * holds one string rather than thousands of objects that V8 would move to the old generation.
   */
  rawBody?: boolean;
  /**
   * The answer is small by nature (a token, a session check, a gift card): it may be at most
   * `maxSmallBodyBytes` long, not the `maxBodyBytes` a page of orders may take.
   */
  smallAnswer?: boolean;
}

export interface HttpResponse<T = unknown> {
  status: number;
  headers: Record<string, string>;
  body: T;
  attempts: number;
}

export interface HttpClientOptions {
  baseUrl?: string;
  userAgent: string;
  tokens?: TokenSource;
  redactor: Redactor;
  /** Receives --verbose trace lines (already redacted); absent when not verbose. */
  trace?: (line: string) => void;
  /** Receives notices such as "rate limited, waiting 2s" (stderr). */
  notice?: (line: string) => void;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  now: () => number;
  random?: () => number;
  timeoutMs?: number;
  connectTimeoutMs?: number;
  /** Retries after the first attempt (default 4). */
  maxRetries?: number;
  /** Longest Retry-After honoured, in milliseconds (default 60 s). */
  maxRetryAfterMs?: number;
  /** Keep-alive connections per origin (default 64, the highest --concurrency: a batch never waits for the pool). */
  connections?: number;
  /** The longest body read from an answer (default 64 MiB, OPCLI_HTTP_MAX_BODY). */
  maxBodyBytes?: number;
  /** The longest body of a `smallAnswer` request (default 1 MiB, OPCLI_HTTP_MAX_SMALL_BODY). */
  maxSmallBodyBytes?: number;
  /** The most one exchange may take, start to last byte, whatever comes in between (default 120 s, OPCLI_HTTP_DEADLINE). */
  deadlineMs?: number;
  /** The timers the deadline runs on (the run's clock; default the wall clock's). */
  timers?: WireTimers;
  /** How a request goes out: through which proxy, or directly, and why (src/http/proxy.ts); absent: directly. */
  route?: (url: URL) => Route;
  /** The CA certificates to trust when a ca-file is set (src/http/trust.ts); absent: Node's own. */
  ca?: string[];
  /** Statuses the server guarantees it did not process a POST with (the profile's `not-processed-statuses`; default 429). 421 always is. */
  notProcessedStatuses?: readonly number[];
}

/** The statuses that mean "not processed" for a POST when the profile names none. */
// CHOICE (docs/spec-choices.md#not-processed-statuses): the spec names no status that guarantees a POST was not processed.
export const DEFAULT_NOT_PROCESSED = [429] as const;

/** A message to be continued with "; …": without its closing full stop. */
export function clause(message: string): string {
  return message.replace(/\.+$/, '');
}

/** Defaults of the limits on an answer ([HTTP behaviour](docs/http.md#limits)). */
// CHOICE (docs/spec-choices.md#answer-sizes-and-deadlines): the spec gives no size or time for an answer.
export const HTTP_LIMITS = { maxBodyBytes: 64 * 1024 * 1024, maxSmallBodyBytes: 1024 * 1024, deadlineMs: 120_000 } as const;

const WALL_TIMERS: WireTimers = { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) };

const LOOPBACK = /^(127(?:\.\d{1,3}){3}|localhost|\[::1\])$/i;

/** Whether a URL may carry credentials: https anywhere, http only to loopback. */
export function isSafeForCredentials(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.test(url.hostname));
}

/** Connection errors that prove the request never reached the server. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', CONNECT_TIMEOUT, 'EHOSTUNREACH', 'ENETUNREACH', ENGINE_UNAVAILABLE]);
const TIMEOUT_CODES = new Set([HEADERS_TIMEOUT, BODY_TIMEOUT]);
/** A certificate the client does not trust: nothing was sent, and it would be refused again. */
export const CERT_NOT_TRUSTED = 'ECERT_NOT_TRUSTED';
/** A proxy refused to open a tunnel (403, 407…): nothing reached the server, and it would refuse again. */
export const PROXY_REFUSED = 'EPROXY_REFUSED';
/** Failures a retry would only meet again: a request HTTP does not allow, an answer too large or too slow, an untrusted certificate, a proxy's refusal. */
const NEVER_REPEATED = new Set([INVALID_REQUEST, BODY_TOO_LARGE, DEADLINE_PASSED, CERT_NOT_TRUSTED, PROXY_REFUSED]);

/** Whether a failure would only recur if the request were sent again (too large, too slow, not sendable). */
export function wouldRecur(error: unknown): boolean {
  return error instanceof NetworkError && NEVER_REPEATED.has(error.errorCode ?? '');
}

/** A byte count as the limits' errors name it: `64 MiB`, `1 MiB`, `1500 bytes`. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * The HTTP core: one keep-alive connection pool (undici's Agent; see transport.ts), JSON bodies, bearer tokens, the retry policy of the
 * method, a shared pause after a 429 (so a batch slows down as a whole), and redacted traces.
 */
export class HttpClient {
  private readonly options: HttpClientOptions;
  private transport?: Transport;
  /** The statuses that mean "not processed" for a POST to the base URL's origin (the profile's gateway); elsewhere only 421 and 429. */
  private readonly notProcessed: ReadonlySet<number>;
  /** Epoch ms before which no request is sent (set by a 429's Retry-After, shared by all callers). */
  private pauseUntil = 0;

  constructor(options: HttpClientOptions) {
    this.options = options;
    // A 421 (Misdirected Request, RFC 9110 15.5.20) and a 429 are never processed, whatever the profile says.
    this.notProcessed = new Set([421, 429, ...(options.notProcessedStatuses ?? DEFAULT_NOT_PROCESSED)]);
  }

  /**
   * Whether a POST to `url` answered `status` was certainly not processed: 421 and 429 anywhere, the
   * profile's `not-processed-statuses` only from the base URL's origin (they describe the gateway in
   * front of the service, not the gift card provider's).
   */
  notProcessedStatus(url: URL, status: number): boolean {
    if (status === 421 || status === 429) return true;
    const base = this.options.baseUrl;
    return base !== undefined && URL.canParse(base) && new URL(base).origin === url.origin && this.notProcessed.has(status);
  }

  get baseUrl(): string | undefined {
    return this.options.baseUrl;
  }

  private wire(): Transport {
    this.transport ??= new Transport({
      connections: this.options.connections ?? 64,
      connectTimeoutMs: this.options.connectTimeoutMs ?? 10_000,
      timeoutMs: this.options.timeoutMs ?? 30_000,
      route: this.options.route,
      ca: this.options.ca,
    });
    return this.transport;
  }

  /** How a request to `url` goes out (a proxy or directly) and why, as --verbose and `auth status --check` say it. */
  routeOf(url: string | URL): Route {
    const target = typeof url === 'string' ? this.resolve(url) : url;
    return this.options.route?.(target) ?? { reason: 'direct (no proxy is configured)' };
  }

  /** Resolves a path or absolute URL against the base URL. */
  resolve(url: string, query?: HttpRequest['query']): URL {
    let resolved: URL;
    if (/^https?:\/\//i.test(url)) resolved = new URL(url);
    else {
      const base = this.options.baseUrl;
      if (!base) {
        throw new UsageError(
          'No base URL is configured for this profile.',
          'Run `opcli config set base-url https://…`, set OPCLI_BASE_URL, or start `opcli sandbox --write-profile default`.',
        );
      }
      resolved = new URL(base.replace(/\/+$/, '') + (url.startsWith('/') ? url : `/${url}`));
    }
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) resolved.searchParams.set(k, String(v));
    return resolved;
  }

  /** Sends a request with the method's retry policy; non-2xx answers throw ApiError. */
  async request<T = unknown>(req: HttpRequest, schema?: z.ZodType<T>): Promise<HttpResponse<T>> {
    const url = this.resolve(req.url, req.query);
    if (!isSafeForCredentials(url)) {
      throw new UsageError(
        `Refusing to send credentials to ${url.origin}: only https is allowed (plain http only to 127.0.0.1 or localhost).`,
        'Use an https:// base URL.',
      );
    }
    const useAuth = req.auth !== false;
    const maxRetries = req.retry === 'never' ? 0 : (this.options.maxRetries ?? 4);
    const random = this.options.random ?? Math.random;
    let token = useAuth ? await this.requireTokens().get(url) : undefined;
    let refreshed = false;
    let attempt = 0;
    for (;;) {
      const permit = req.limiter ? await req.limiter.acquire(req.signal) : undefined;
      if (!permit) await this.waitForPause(req.signal);
      let res: RawResponse;
      try {
        res = await this.send(url, req, token);
      } catch (error) {
        permit?.done({ error: true });
        const failure = this.classify(error, req, url);
        if (failure instanceof NetworkError && attempt < maxRetries) {
          // An idempotent request may be repeated after any connection failure; a POST only when it
          // provably never reached the server.
          // An answer too large or too slow would be as large and as slow again: not repeated.
          const canRepeat = !NEVER_REPEATED.has(failure.errorCode ?? '') && (isIdempotent(req.method) ? failure.errorCode !== 'ENOTFOUND' : !failure.sent);
          if (canRepeat) {
            const delay = backoffDelay(attempt, random);
            this.options.notice?.(`${clause(failure.message)}; retrying in ${formatWait(delay)}`);
            await this.options.sleep(delay, req.signal);
            attempt++;
            continue;
          }
        }
        throw failure;
      }
      permit?.done({ status: res.status, headers: res.headers });
      if (res.status === 401 && useAuth && token && !refreshed && isInvalidToken(res) && this.options.tokens?.refreshAfterUnauthorized) {
        // A 401 means the request was refused before it did anything: safe to repeat once, even a POST.
        refreshed = true;
        const next = await this.options.tokens.refreshAfterUnauthorized(token);
        if (next && next !== token) {
          token = next;
          continue;
        }
      }
      // A POST is asked again only after an answer saying it was not processed (429, or a status the profile names; never a 421, which would meet the same connection).
      const retryable =
        shouldRetryStatus(req.method, res.status) || (!isIdempotent(req.method) && res.status !== 421 && this.notProcessedStatus(url, res.status));
      if (res.status >= 400 && retryable && attempt < maxRetries) {
        if (permit) {
          // The limiter pauses every request for Retry-After (or its own backoff) before the next permit.
          this.options.trace?.(`${req.method} ${url.pathname} answered ${res.status}; the limiter waits before trying again`);
          attempt++;
          continue;
        }
        const retryAfter = parseRetryAfter(res.headers['retry-after'], this.options.now(), this.options.maxRetryAfterMs);
        const delay = retryAfter ?? backoffDelay(attempt, random);
        if (res.status === 429) this.pauseUntil = Math.max(this.pauseUntil, this.options.now() + delay);
        this.options.notice?.(`${req.method} ${url.pathname} answered ${res.status}; retrying in ${formatWait(delay)}`);
        await this.options.sleep(delay, req.signal);
        attempt++;
        continue;
      }
      if (res.status >= 300 && res.status < 400) throw buildRedirectError(req.method, url, res.status, res.body, res.headers);
      if (res.status >= 400)
        throw buildApiError(req.method, url, res.status, res.body, res.headers, !isIdempotent(req.method) && this.notProcessedStatus(url, res.status));
      if (schema) {
        const parsed = schema.safeParse(res.body);
        if (!parsed.success) {
          const first = parsed.error.issues[0];
          throw new OpcliError(
            `Unexpected answer from ${req.method} ${url.pathname}: ${first ? `${first.path.join('.') || 'body'}: ${first.message}` : 'invalid body'}.`,
            { hint: 'The server does not answer as the API specification says; check the base URL.' },
          );
        }
        return { status: res.status, headers: res.headers, body: parsed.data, attempts: attempt + 1 };
      }
      return { status: res.status, headers: res.headers, body: res.body as T, attempts: attempt + 1 };
    }
  }

  private requireTokens(): TokenSource {
    if (!this.options.tokens) throw new AuthError('This command needs a login, and none is configured.');
    return this.options.tokens;
  }

  private async waitForPause(signal?: AbortSignal): Promise<void> {
    const wait = this.pauseUntil - this.options.now();
    if (wait > 0) await this.options.sleep(wait, signal);
  }

  private async send(url: URL, req: HttpRequest, token: string | undefined): Promise<RawResponse> {
    const headers: Record<string, string> = {
      'user-agent': this.options.userAgent,
      accept: 'application/json',
      ...lowerKeys(req.headers ?? {}),
    };
    if (token) headers.authorization = `Bearer ${token}`;
    else delete headers.authorization;
    let body: string | undefined;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers['content-type'] = 'application/json';
    }
    const started = this.options.now();
    this.traceRequest(req.method, url, headers, req.json);
    const res = await this.wire().send({
      url,
      method: req.method,
      headers,
      body,
      signal: req.signal,
      timeoutMs: req.timeoutMs || undefined,
      maxBytes: this.bodyLimit(req),
      deadline: { ms: this.options.deadlineMs ?? HTTP_LIMITS.deadlineMs, timers: this.options.timers ?? WALL_TIMERS },
    });
    const text = res.text;
    const resHeaders = res.headers;
    const raw = req.rawBody === true && res.status >= 200 && res.status < 300;
    // Read only for --verbose's trace when the caller wants the text.
    const parsed = raw && !this.options.trace ? text : readBody(text, resHeaders);
    this.traceResponse(res.status, resHeaders, parsed, this.options.now() - started);
    return { status: res.status, headers: resHeaders, body: raw ? text : parsed };
  }

  private bodyLimit(req: HttpRequest): number {
    return req.smallAnswer ? (this.options.maxSmallBodyBytes ?? HTTP_LIMITS.maxSmallBodyBytes) : (this.options.maxBodyBytes ?? HTTP_LIMITS.maxBodyBytes);
  }

  private classify(error: unknown, req: HttpRequest, url: URL): Error {
    if (error instanceof OpcliError) return error;
    const err = error as { name?: string; code?: string; message?: string };
    if (req.signal?.aborted) return error as Error;
    const code = err?.code ?? '';
    const where = `${req.method} ${url.origin}${url.pathname}`;
    const wire = (error as { wire?: WireFailure } | undefined)?.wire;
    // undici names a proxy's refusal of CONNECT an AbortError too: read below, not passed on as an abort.
    if (err?.name === 'AbortError' && !wire?.proxy) return error as Error;
    const certCode = certificateCode(error);
    if (certCode) return certificateError(where, url, certCode, wire, error);
    const proxy = wire?.proxy;
    if (proxy) {
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
            cause: error,
            hint:
              status === 407
                ? `Give the proxy's user and password in the proxy URL (http://user:password@host:port) in ${proxy.source}.`
                : unavailable
                  ? `The proxy could not reach ${url.host}: check the base URL, or add the host to NO_PROXY if it is reached directly.`
                  : `The proxy does not allow connections to ${url.host}: ask its administrator, or add the host to NO_PROXY (or the no-proxy setting) if it is reached directly.`,
          },
        );
      }
      if (NOT_SENT_CODES.has(code)) {
        return new NetworkError(`${where} was not sent: could not connect to the proxy ${proxy.shown} (${proxy.source}) (${code})`, {
          sent: false,
          errorCode: code,
          cause: error,
          hint: `Check that the proxy is running and its address in ${proxy.source}; unset it, or add ${url.hostname} to NO_PROXY (or the no-proxy setting), to connect directly.`,
        });
      }
    }
    if (TIMEOUT_CODES.has(code)) return new TimeoutError(`${where} timed out waiting for the server`, error);
    const fate = isIdempotent(req.method) ? '' : '; the request may have been processed';
    if (code === DEADLINE_PASSED) {
      const ms = this.options.deadlineMs ?? HTTP_LIMITS.deadlineMs;
      return new TimeoutError(`${where} did not finish within ${ms / 1000} s, the deadline OPCLI_HTTP_DEADLINE sets${fate}`, error, {
        errorCode: DEADLINE_PASSED,
        hint: 'The server kept the answer coming too slowly. Try again later, or raise OPCLI_HTTP_DEADLINE (milliseconds) if it is expected to take this long.',
      });
    }
    if (code === BODY_TOO_LARGE) {
      const setting = req.smallAnswer ? 'OPCLI_HTTP_MAX_SMALL_BODY' : 'OPCLI_HTTP_MAX_BODY';
      return new NetworkError(`${where} answered with more than ${formatBytes(this.bodyLimit(req))}, the limit ${setting} sets; reading stopped there${fate}`, {
        sent: true,
        errorCode: BODY_TOO_LARGE,
        cause: error,
        hint: `Check the base URL: the service's answers are far smaller. Raise ${setting} (bytes) only if this answer is expected to be this large.`,
      });
    }
    // The request could not be built (a header value with a control character): it never left.
    if (code === INVALID_REQUEST) {
      return new NetworkError(`${where} was not sent: ${safeLine(err?.message ?? 'invalid request')}`, {
        sent: false,
        errorCode: INVALID_REQUEST,
        cause: error,
        hint: 'A header value (usually the access token) holds a character HTTP does not allow, such as a trailing \\r from a Windows file.',
      });
    }
    if (NOT_SENT_CODES.has(code)) {
      return new NetworkError(`${where} could not connect (${code})`, { sent: false, errorCode: code, cause: error });
    }
    // Failed before undici wrote a byte of it (a TLS handshake, a connection closed before it was
    // used): it never reached the server, whatever the code.
    if (requestWritten(error) === false) {
      return new NetworkError(`${where} was not sent: the connection failed before the request was written (${code || err?.message || 'unknown error'})`, {
        sent: false,
        errorCode: code || undefined,
        cause: error,
      });
    }
    return new NetworkError(`${where} failed: the connection was lost (${code || err?.message || 'unknown error'})`, {
      sent: true,
      errorCode: code || undefined,
      cause: error,
    });
  }

  private traceRequest(method: string, url: URL, headers: Record<string, string>, json: unknown): void {
    const trace = this.safeTrace();
    if (!trace) return;
    trace(`* ${url.origin}: ${this.routeOf(url).reason}`);
    const shown = new URL(url);
    for (const key of [...shown.searchParams.keys()]) {
      if (/token|secret|code|verifier/i.test(key)) shown.searchParams.set(key, '***');
    }
    trace(`> ${method} ${shown}`);
    for (const [k, v] of Object.entries(headers)) trace(`> ${k}: ${redactHeader(k, v)}`);
    if (json !== undefined) trace(`> ${JSON.stringify(redactJson(json))}`);
  }

  /** The trace sink with server text made safe for a terminal (JSON.stringify leaves DEL and C1 raw). */
  private safeTrace(): ((line: string) => void) | undefined {
    const trace = this.options.trace;
    return trace && ((line) => trace(safeText(line)));
  }

  private traceResponse(status: number, headers: Record<string, string>, body: unknown, ms: number): void {
    const trace = this.safeTrace();
    if (!trace) return;
    trace(`< ${status} (${ms} ms)`);
    for (const [k, v] of Object.entries(headers)) trace(`< ${k}: ${redactHeader(k, v)}`);
    if (body !== '' && body !== undefined) trace(`< ${typeof body === 'string' ? body.slice(0, 4000) : JSON.stringify(redactJson(body))}`);
  }

  /** Closes the keep-alive connections. */
  async close(): Promise<void> {
    this.transport?.close();
    this.transport = undefined;
  }
}

/** Node's words for each certificate error, and what fixes it. */
function certificateProblem(code: string): string {
  switch (code) {
    case 'CERT_HAS_EXPIRED':
      return 'has expired';
    case 'CERT_NOT_YET_VALID':
      return 'is not valid yet';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
    case 'HOSTNAME_MISMATCH':
      return 'is for another host name';
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
      return 'is self-signed and not trusted';
    default:
      return 'is not trusted: it was issued by a certificate authority this machine does not trust';
  }
}

/**
 * A certificate the client refused: never sent, never retried. Names the host, the issuer (read
 * from the certificate after the fact) and the settings that make opcli trust a private CA.
 */
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
  return new NetworkError(
    `${where} was not sent: the certificate of ${url.host}${via} ${certificateProblem(code)} (${code}${details.length ? `; ${details.join(', ')}` : ''}).`,
    { sent: false, errorCode: CERT_NOT_TRUSTED, cause, hint },
  );
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * A 401 that says the access token is invalid or expired (RFC 6750 `invalid_token`, in the body or
 * in WWW-Authenticate), or that names no reason at all. Another 401 (a refused client, say) is not
 * cured by a refresh, and refreshing would rotate the token pair for nothing.
 */
function isInvalidToken(res: RawResponse): boolean {
  const bodyError = (res.body as { error?: unknown } | undefined)?.error;
  const challenge = res.headers['www-authenticate'] ?? '';
  if (bodyError === 'invalid_token' || /error="?invalid_token/i.test(challenge)) return true;
  return bodyError === undefined && !/error=/i.test(challenge);
}

function lowerKeys(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v;
  return out;
}

function redactHeader(name: string, value: string): string {
  if (name === 'authorization') return value.replace(/^(\w+)\s+.*$/, '$1 ***');
  if (/token|secret|cookie|api-key/i.test(name)) return '***';
  return value;
}

/**
 * The error for a 3xx answer, whatever the command: the status and where it pointed (made safe for
 * a terminal), never followed and never read as a body. For a POST, a 307 or 308 means the request
 * was not processed (it asks for the same request elsewhere); another 3xx leaves its fate unknown.
 */
export function buildRedirectError(method: Method, url: URL, status: number, body: unknown, headers: Record<string, string>): RedirectError {
  const raw = headers.location;
  const location = raw === undefined ? undefined : safeLine(raw.length > 300 ? `${raw.slice(0, 300)}…` : raw);
  const notProcessed = status === 307 || status === 308;
  const uncertain = !isIdempotent(method) && !notProcessed;
  const fate = isIdempotent(method) ? '' : notProcessed ? ' The request was not processed.' : ' The request may have been processed.';
  return new RedirectError({
    status,
    method,
    url: url.toString(),
    body,
    headers,
    location,
    uncertain,
    message: `${method} ${url.pathname} answered ${status} (a redirect${location ? ` to ${location}` : ', no Location header'}), not a success; opcli does not follow redirects.${fate}`,
    hint: 'Check the base URL (https, host, no extra path) with `opcli config get base-url`; a gateway or proxy in front of the service may be redirecting.',
  });
}

/** Builds the typed error for a non-2xx answer, with advice for the statuses a user meets. */
export function buildApiError(method: string, url: URL, status: number, body: unknown, headers: Record<string, string> = {}, notProcessed = false): ApiError {
  // Untrusted: every piece of server text is made safe for a terminal before it joins a message.
  const info = readErrorBody(body);
  const fieldErrors = info.fieldErrors.map((e) => ({ path: safeLine(e.path), message: safeLine(e.message) }));
  const detail = info.message === undefined ? undefined : safeText(info.message);
  const where = `${method} ${url.pathname}`;
  const base = { status, method, url: url.toString(), body, code: info.code, fieldErrors, headers, notProcessed };
  if (status === 400 || status === 422) {
    const fields = fieldErrors.map((e) => `\n  ${e.path || '(body)'}: ${e.message}`).join('');
    return new ApiError({
      ...base,
      message: `${where} was refused (${status})${detail ? `: ${detail}` : ''}${fields}`,
      exitCode: ExitCode.usage,
      hint: 'Correct the fields named above and try again; nothing was changed on the server.',
    });
  }
  if (status === 401) {
    return new ApiError({
      ...base,
      message: `${where} was refused: not authenticated (401)${detail ? `: ${detail}` : ''}`,
      exitCode: ExitCode.auth,
      hint: 'Run `opcli auth login` to log in again.',
    });
  }
  if (status === 403) {
    const scope =
      typeof (body as { required_scope?: unknown } | null)?.required_scope === 'string'
        ? safeLine((body as { required_scope: string }).required_scope)
        : undefined;
    return new ApiError({
      ...base,
      message: scope
        ? `${where} is forbidden: the token lacks the scope "${scope}", which the merchant did not grant (403).`
        : `${where} is forbidden: the token lacks a scope this endpoint needs (403)${detail ? `: ${detail}` : ''}.`,
      exitCode: ExitCode.auth,
      hint: scope
        ? `Log in again asking for it: \`opcli auth login --scopes ${scope}\` (the merchant must approve it).`
        : 'Log in again with the scopes this command needs; the merchant must approve them.',
    });
  }
  if (status === 404) return new ApiError({ ...base, message: `${where}: not found (404)${detail ? `: ${detail}` : ''}` });
  if (status === 429) {
    const after = headers['retry-after'];
    return new ApiError({
      ...base,
      message: `${where} was rate limited (429)${after ? `; the server asks to wait ${after}s` : ''}.`,
      hint: after ? `Try again in ${after} seconds.` : 'Try again in a minute.',
    });
  }
  // An HTML page's title usually repeats the status ("503 Service Temporarily Unavailable"): said once.
  const answered = detail?.startsWith(`${status} `) ? clause(detail) : `${status}${detail ? `: ${clause(detail)}` : ''}`;
  const fate = notProcessed ? ' It was not processed.' : '';
  return new ApiError({
    ...base,
    message: `${where} failed: the server answered ${answered}.${fate}`,
    hint: status >= 500 ? 'The service had a problem; try again later.' : undefined,
  });
}
