/**
 * The HTTP core: JSON bodies, bearer tokens, the method's retry policy, a pause after a 429 that
 * every unpaced request waits out (a batch's limiter holds its own retries: adaptive.ts), redacted
 * traces. What a failure means: retry.ts; an error answer: error-body.ts; the wire: transport.ts.
 */
import type { z } from 'zod';
import { AuthError, type NetworkError, OpcliError, UsageError } from '../core/errors.js';
import { nestsTooDeep } from '../core/json-text.js';
import { realTimers, type Timers } from '../core/timers.js';
import type { Permit, RequestLimiter } from './adaptive.js';
import { buildApiError, buildRedirectError, clause, isInvalidToken, type RawResponse } from './error-body.js';
import { backoffDelay, classifyFailure, formatWait, isIdempotent, type Method, mayRepeat, parseRetryAfter, shouldRetryStatus } from './retry.js';
import { buildRequest, isSafeForCredentials, type Route, Tracer, Transport } from './transport.js';

export { clause } from './error-body.js';
export { CERT_NOT_TRUSTED, neverLeft, PROXY_REFUSED, serviceNotReached, stoppedOnThisSide, wouldRecur } from './retry.js';
export { isSafeForCredentials } from './transport.js';

/** Where the bearer token comes from; the auth layer refreshes behind it. */
export interface TokenSource {
  /** A valid access token for `target`; refused when the token does not belong there. */
  get(target?: URL): Promise<string>;
  /** Once after a 401 `invalid_token` answered to `sent`: a fresh token, or undefined to give up. */
  refreshAfterUnauthorized?(sent: string): Promise<string | undefined>;
}

export interface HttpRequest {
  method: Method;
  /** An absolute URL, or a path joined to the base URL. */
  url: string;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  json?: unknown;
  /** Default true; false: no Authorization header at all. */
  auth?: boolean;
  retry?: 'auto' | 'never';
  /** Retries after a connection failure are traced, not announced: the caller says how the request ended. */
  quiet?: boolean;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** A batch's shared limiter: each attempt waits for a permit; it holds the retry after a 429, with no notice. */
  limiter?: RequestLimiter;
  /** A 2xx body returned as text: a page waiting to be parsed (`readBody`) holds one string, not thousands of objects. */
  rawBody?: boolean;
  /** A token, a session check, a gift card: at most `maxSmallBodyBytes`. */
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
  /** --verbose lines (redacted); absent when not verbose. */
  trace?: (line: string) => void;
  /** Notices such as "retrying in 2s" (stderr). */
  notice?: (line: string) => void;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  now: () => number;
  random?: () => number;
  timeoutMs?: number;
  /** Retries after the first attempt (default 4). */
  maxRetries?: number;
  /** Longest Retry-After honoured, in milliseconds (default 60 s). */
  maxRetryAfterMs?: number;
  /** OPCLI_HTTP_MAX_BODY. */
  maxBodyBytes?: number;
  /** OPCLI_HTTP_MAX_SMALL_BODY. */
  maxSmallBodyBytes?: number;
  /** One exchange, start to last byte (OPCLI_HTTP_DEADLINE). */
  deadlineMs?: number;
  /** The deadline's timers (default the wall clock's). */
  timers?: Timers;
  /** Absent: directly. */
  route?: (url: URL) => Route;
  /** PEM certificates when a ca-file is set; absent: Node's own. */
  ca?: string[];
  /** The profile's `not-processed-statuses` for a POST (default 429); 421 always is. */
  notProcessedStatuses?: readonly number[];
}

// CHOICE (docs/spec-choices.md#answer-sizes-and-deadlines): the spec gives no size or time for an answer.
export const HTTP_LIMITS = { maxBodyBytes: 64 * 1024 * 1024, maxSmallBodyBytes: 1024 * 1024, deadlineMs: 120_000 } as const;

/**
 * JSON when the content type says so and it parses, else the text. JSON nested deeper than opcli
 * reads stays text: every walk of it recurses, and a hostile server must not overflow the stack.
 */
export function readBody(text: string, headers: Record<string, string>): unknown {
  if (!text || !/json/i.test(headers['content-type'] ?? '')) return text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  return nestsTooDeep(value) ? text : value;
}

interface Run {
  req: HttpRequest;
  url: URL;
  token: string | undefined;
  attempt: number;
  maxRetries: number;
  refreshed: boolean;
}

export class HttpClient {
  private readonly options: HttpClientOptions;
  private transport?: Transport;
  /** For a POST to the base URL's origin; elsewhere only 421 and 429. */
  private readonly notProcessed: ReadonlySet<number>;
  /** Epoch ms before which no unpaced request is sent (a 429's wait). */
  private pauseUntil = 0;
  private readonly tracer?: Tracer;

  constructor(options: HttpClientOptions) {
    this.options = options;
    // A 421 (Misdirected Request, RFC 9110 15.5.20) and a 429 are never processed, whatever the profile says.
    // CHOICE (docs/spec-choices.md#not-processed-statuses): the spec names no status that guarantees a POST was not processed.
    this.notProcessed = new Set([421, 429, ...(options.notProcessedStatuses ?? [])]);
    this.tracer = options.trace && new Tracer(options.trace);
  }

  /** Whether a POST answered `status` was certainly not processed: the profile's statuses describe its gateway only. */
  notProcessedStatus(url: URL, status: number): boolean {
    if (status === 421 || status === 429) return true;
    const base = this.options.baseUrl;
    return this.notProcessed.has(status) && base !== undefined && URL.canParse(base) && new URL(base).origin === url.origin;
  }

  get baseUrl(): string | undefined {
    return this.options.baseUrl;
  }

  private wire(): Transport {
    this.transport ??= new Transport({
      timeoutMs: this.options.timeoutMs ?? 30_000,
      route: this.options.route,
      ca: this.options.ca,
    });
    return this.transport;
  }

  /** How a request to `url` goes out and why, as --verbose and `auth status --check` say it. */
  routeOf(url: string | URL): Route {
    const target = typeof url === 'string' ? this.resolve(url) : url;
    return this.options.route?.(target) ?? { reason: 'direct (no proxy is configured)' };
  }

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
    const maxRetries = req.retry === 'never' ? 0 : (this.options.maxRetries ?? 4);
    const token = req.auth !== false ? await this.requireTokens().get(url) : undefined;
    const run: Run = { req, url, token, attempt: 0, maxRetries, refreshed: false };
    let permit: Permit | undefined;
    for (;;) {
      permit = req.limiter ? await req.limiter.acquire(req.signal, permit) : undefined;
      if (!permit) await this.waitForPause(req.signal);
      let res: RawResponse;
      try {
        res = await this.send(url, req, run.token, permit);
      } catch (error) {
        permit?.done({ error: true });
        await this.afterFailure(run, error);
        continue;
      }
      permit?.done({ status: res.status, headers: res.headers });
      if (await this.tryAgain(run, res, permit !== undefined)) continue;
      return this.settle(run, res, schema);
    }
  }

  /** After a failed exchange: waits and returns when the request may be sent again, else throws what the failure means. */
  private async afterFailure(run: Run, error: unknown): Promise<void> {
    const { req, url } = run;
    const failure = classifyFailure(error, {
      method: req.method,
      url,
      signal: req.signal,
      smallAnswer: req.smallAnswer,
      maxBytes: this.bodyLimit(req),
      deadlineMs: this.deadlineMs(),
    });
    if (run.attempt >= run.maxRetries || !mayRepeat(req.method, failure)) throw failure;
    const delay = backoffDelay(run.attempt, this.options.random ?? Math.random);
    const say = req.quiet ? this.options.trace : this.options.notice;
    say?.(`${clause((failure as NetworkError).message)}; retrying in ${formatWait(delay)}`);
    await this.options.sleep(delay, req.signal);
    run.attempt++;
  }

  /** After an answer: whether to send again (a refreshed token after a 401, a retryable status), having waited. */
  private async tryAgain(run: Run, res: RawResponse, paced: boolean): Promise<boolean> {
    const { req, url } = run;
    const tokens = this.options.tokens;
    if (res.status === 401 && run.token && !run.refreshed && isInvalidToken(res) && tokens?.refreshAfterUnauthorized) {
      // A 401 means the request was refused before it did anything: safe to repeat once, even a POST.
      run.refreshed = true;
      const next = await tokens.refreshAfterUnauthorized(run.token);
      if (next && next !== run.token) {
        run.token = next;
        return true;
      }
    }
    if (res.status < 400) return false;
    // A POST only after an answer saying it was not processed; never a 421, which would meet the same connection.
    const retryable =
      shouldRetryStatus(req.method, res.status) || (!isIdempotent(req.method) && res.status !== 421 && this.notProcessedStatus(url, res.status));
    if (!retryable || run.attempt >= run.maxRetries) return false;
    run.attempt++;
    if (paced) {
      this.options.trace?.(`${req.method} ${url.pathname} answered ${res.status}; the limiter waits before trying again`);
      return true;
    }
    const retryAfter = parseRetryAfter(res.headers['retry-after'], this.options.now(), this.options.maxRetryAfterMs);
    const delay = retryAfter ?? backoffDelay(run.attempt - 1, this.options.random ?? Math.random);
    if (res.status === 429) this.pauseUntil = Math.max(this.pauseUntil, this.options.now() + delay);
    this.options.notice?.(`${req.method} ${url.pathname} answered ${res.status}; retrying in ${formatWait(delay)}`);
    await this.options.sleep(delay, req.signal);
    return true;
  }

  /** A success checked against `schema`, or the error of a redirect or an error status. */
  private settle<T>(run: Run, res: RawResponse, schema: z.ZodType<T> | undefined): HttpResponse<T> {
    const { req, url } = run;
    if (res.status >= 300 && res.status < 400) throw buildRedirectError(req.method, url, res.status, res.body, res.headers);
    if (res.status >= 400) {
      throw buildApiError(req.method, url, res.status, res.body, res.headers, !isIdempotent(req.method) && this.notProcessedStatus(url, res.status));
    }
    const attempts = run.attempt + 1;
    if (!schema) return { status: res.status, headers: res.headers, body: res.body as T, attempts };
    const parsed = schema.safeParse(res.body);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      throw new OpcliError(
        `Unexpected answer from ${req.method} ${url.pathname}: ${first ? `${first.path.join('.') || 'body'}: ${first.message}` : 'invalid body'}.`,
        { hint: 'The server does not answer as the API specification says; check the base URL.' },
      );
    }
    return { status: res.status, headers: res.headers, body: parsed.data, attempts };
  }

  private requireTokens(): TokenSource {
    if (!this.options.tokens) throw new AuthError('This command needs a login, and none is configured.');
    return this.options.tokens;
  }

  private async waitForPause(signal?: AbortSignal): Promise<void> {
    const wait = this.pauseUntil - this.options.now();
    if (wait > 0) await this.options.sleep(wait, signal);
  }

  private deadlineMs(): number {
    return this.options.deadlineMs ?? HTTP_LIMITS.deadlineMs;
  }

  private async send(url: URL, req: HttpRequest, token: string | undefined, permit?: Permit): Promise<RawResponse> {
    const { headers, body } = buildRequest({ userAgent: this.options.userAgent, headers: req.headers, token, json: req.json });
    const started = this.options.now();
    this.tracer?.request(this.routeOf(url).reason, req.method, url, headers, req.json);
    const res = await this.wire().send({
      url,
      method: req.method,
      headers,
      body,
      signal: req.signal,
      timeoutMs: req.timeoutMs || undefined,
      maxBytes: this.bodyLimit(req),
      deadline: { ms: this.deadlineMs(), timers: this.options.timers ?? realTimers },
      // The limiter spaces the next request from when this one's bytes were written, not from its permit.
      onWritten: permit && (() => permit.sent()),
    });
    const raw = req.rawBody === true && res.status >= 200 && res.status < 300;
    const parsed = raw && !this.tracer ? res.text : readBody(res.text, res.headers);
    this.tracer?.response(res.status, res.headers, parsed, this.options.now() - started);
    return { status: res.status, headers: res.headers, body: raw ? res.text : parsed };
  }

  private bodyLimit(req: HttpRequest): number {
    return req.smallAnswer ? (this.options.maxSmallBodyBytes ?? HTTP_LIMITS.maxSmallBodyBytes) : (this.options.maxBodyBytes ?? HTTP_LIMITS.maxBodyBytes);
  }

  async close(): Promise<void> {
    this.transport?.close();
    this.transport = undefined;
  }
}
