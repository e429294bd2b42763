/**
 * The HTTP core, one request to the service. First its policy: JSON bodies, bearer tokens, the
 * method's retry policy, a pause after a 429 that every unpaced request waits out (a batch's limiter
 * holds its own retries: adaptive.ts), redacted traces. What a failure means: retry.ts; an error
 * answer: error-body.ts. Then the wire: the request as it is sent (headers, the bearer token, the
 * --verbose trace), the route it takes (a proxy or directly, and why: docs/http.md#proxies), and
 * undici's Agent through `dispatch()` with a handler of its own: no stream per body. The Agent module
 * is imported alone; undici's index only behind a proxy, the certificate probe only after a
 * certificate error (ARCHITECTURE.md, the HTTP core's fast path).
 *
 * Proxies are read from the run's environment (deps.env), never process.env, which main.ts has
 * cleared of proxy passwords. What this adds to undici's `EnvHttpProxyAgent`, which reads the same
 * variables: ALL_PROXY, CIDR ranges, the loopback rule and the reason a route was taken; requests
 * go through undici's `ProxyAgent`.
 *
 * Redirects are never followed; headers HTTP does not allow are refused before anything is sent; a
 * failure gets a `code` that retry.ts sorts into "never sent" and "fate unknown".
 */
import { BlockList, isIP } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import type { Dispatcher } from 'undici';
import Agent from 'undici/lib/dispatcher/agent.js';
import type { z } from 'zod';
import { envValue } from '../config/profile.js';
import { AuthError, type NetworkError, OpcliError, UsageError } from '../core/errors.js';
import { nestsTooDeep } from '../core/json-text.js';
import { redactJson } from '../core/redact.js';
import { realTimers, type Timers } from '../core/timers.js';
import { safeLine, safeText } from '../text/safe.js';
import type { Permit, RequestLimiter } from './adaptive.js';
import { buildApiError, buildRedirectError, clause, isInvalidToken, type RawResponse } from './error-body.js';
import {
  BODY_TIMEOUT,
  BODY_TOO_LARGE,
  backoffDelay,
  CONNECT_TIMEOUT,
  certificateCode,
  classifyFailure,
  DEADLINE_PASSED,
  ENGINE_UNAVAILABLE,
  formatWait,
  HEADERS_TIMEOUT,
  INVALID_REQUEST,
  isIdempotent,
  type Method,
  mayRepeat,
  parseRetryAfter,
  REQUEST_WRITTEN,
  shouldRetryStatus,
  type WireFailure,
} from './retry.js';

export { clause } from './error-body.js';
export { CERT_NOT_TRUSTED, neverLeft, PROXY_REFUSED, serviceNotReached, stoppedOnThisSide, wouldRecur } from './retry.js';

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
  /** Keep-alive pools (undici's Agent, a ProxyAgent per proxy), each created on first use: `unsafe|` or `safe|`, then the proxy's URL ('' for direct). */
  private readonly pools = new Map<string, Promise<Dispatcher>>();
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
    const res = await this.dispatch({
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

  /** For the response headers, and for each piece of the body. */
  private timeoutMs(): number {
    return this.options.timeoutMs ?? 30_000;
  }

  private pool(key: string, proxy: ProxyChoice | undefined, unsafe: boolean): Promise<Dispatcher> {
    let pool = this.pools.get(key);
    if (!pool) {
      const { ca } = this.options;
      const timeoutMs = this.timeoutMs();
      const tlsOptions = ca ? { timeout: CONNECT_TIMEOUT_MS, ca } : { timeout: CONNECT_TIMEOUT_MS };
      const common = {
        connections: CONNECTIONS,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        keepAliveTimeoutThreshold: KEEP_ALIVE_MARGIN_MS,
        // A GET after a stale connection is simply asked again; a POST must not meet one.
        ...(unsafe ? { keepAliveTimeout: POST_IDLE_REUSE_MS } : {}),
      };
      // undici's llhttp is WebAssembly: Liftoff alone compiles it once, not twice (ARCHITECTURE.md's fast path).
      setFlagsFromString('--liftoff-only');
      pool = proxy
        ? import('./undici.js').then(({ ProxyAgent }) => new ProxyAgent({ ...common, uri: proxy.url.href, proxyTls: tlsOptions, requestTls: tlsOptions }))
        : Promise.resolve(new Agent({ ...common, connect: tlsOptions }));
      this.pools.set(key, pool);
    }
    return pool;
  }

  /** One exchange through the pool of its route: the answer, or a failure with a code retry.ts sorts. */
  private async dispatch(req: WireRequest): Promise<WireResponse> {
    const invalid = invalidHeaders(req.headers);
    if (invalid) throw invalid;
    const proxy = this.options.route?.(req.url)?.proxy;
    const unsafe = req.method === 'POST' || req.method === 'PATCH';
    const key = `${unsafe ? 'unsafe' : 'safe'}|${proxy?.url.href ?? ''}`;
    let agent: Dispatcher;
    try {
      agent = await this.pool(key, proxy, unsafe);
    } catch (error) {
      // Not cached: the next request tries again. Nothing left this process.
      this.pools.delete(key);
      throw codeError(ENGINE_UNAVAILABLE, `the HTTP library could not be loaded: ${(error as Error)?.message ?? error}`, error);
    }
    if (req.signal?.aborted) throw req.signal.reason ?? codeError('ABORT_ERR', 'aborted');
    const timeoutMs = req.timeoutMs ?? this.timeoutMs();
    return new Promise<WireResponse>((resolve, reject) => {
      agent.dispatch(
        {
          origin: req.url.origin,
          path: `${req.url.pathname}${req.url.search}`,
          method: req.method as 'GET',
          headers: req.headers,
          body: req.body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        exchange(req, proxy, resolve, reject),
      );
    });
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    for (const pool of pools) void pool.then((a) => a.destroy()).catch(() => {});
  }
}

// The request as it is sent, and its trace.

/** Whether a URL may carry credentials: https anywhere, http only to loopback named as such (no `*.localhost`). */
export function isSafeForCredentials(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname, false));
}

interface Outgoing {
  userAgent: string;
  headers?: Record<string, string>;
  token?: string;
  json?: unknown;
}

/** The headers (lower-cased) and body of a request: the bearer token when there is one, else no Authorization at all. */
function buildRequest(out: Outgoing): { headers: Record<string, string>; body?: string } {
  // No prototype: a caller's header named `__proto__` is a header, not the object's prototype.
  const headers: Record<string, string> = Object.assign(Object.create(null), { 'user-agent': out.userAgent, accept: 'application/json' });
  for (const [k, v] of Object.entries(out.headers ?? {})) headers[k.toLowerCase()] = v;
  if (out.token) headers.authorization = `Bearer ${out.token}`;
  else delete headers.authorization;
  if (out.json === undefined) return { headers };
  headers['content-type'] = 'application/json';
  return { headers, body: JSON.stringify(out.json) };
}

function redactHeader(name: string, value: string): string {
  if (name === 'authorization') return value.replace(/^(\w+)\s+.*$/, '$1 ***');
  if (/token|secret|cookie|api-key/i.test(name)) return '***';
  return value;
}

/** The --verbose lines, redacted; server text made safe for a terminal (JSON.stringify leaves DEL and C1 raw). */
class Tracer {
  private readonly sink: (line: string) => void;

  constructor(sink: (line: string) => void) {
    this.sink = (line) => sink(safeText(line));
  }

  request(route: string, method: string, url: URL, headers: Record<string, string>, json: unknown): void {
    this.sink(`* ${url.origin}: ${route}`);
    const shown = new URL(url);
    for (const key of [...shown.searchParams.keys()]) {
      if (/token|secret|code|verifier/i.test(key)) shown.searchParams.set(key, '***');
    }
    this.sink(`> ${method} ${shown}`);
    for (const [k, v] of Object.entries(headers)) this.sink(`> ${k}: ${redactHeader(k, v)}`);
    if (json !== undefined) this.sink(`> ${JSON.stringify(redactJson(json))}`);
  }

  response(status: number, headers: Record<string, string>, body: unknown, ms: number): void {
    this.sink(`< ${status} (${ms} ms)`);
    for (const [k, v] of Object.entries(headers)) this.sink(`< ${k}: ${redactHeader(k, v)}`);
    if (body !== '' && body !== undefined) this.sink(`< ${typeof body === 'string' ? body.slice(0, 4000) : JSON.stringify(redactJson(body))}`);
  }
}

// The route: which proxy a request goes through, and why.

export interface ProxySettings {
  proxy?: string;
  noProxy?: string;
  proxyLoopback?: boolean;
}

/** A proxy, the setting or variable that named it (`HTTPS_PROXY`, `the proxy setting`), its URL as messages show it. */
export interface ProxyChoice {
  url: URL;
  source: string;
  shown: string;
}

/** A host name (lower case, no leading dot: it and its subdomains), or IP addresses and CIDR ranges. */
interface NoProxyEntry {
  text: string;
  host?: string;
  addresses?: BlockList;
  port?: number;
}

export interface ProxyConfig {
  http?: ProxyChoice;
  https?: ProxyChoice;
  noProxy: NoProxyEntry[];
  /** NO_PROXY is `*`. */
  noProxyAll: boolean;
  noProxySource?: string;
  proxyLoopback: boolean;
}

/** Through `proxy`, or directly; `reason` says why, for --verbose and `auth status --check`. */
export interface Route {
  proxy?: ProxyChoice;
  reason: string;
}

export function maskProxyUrl(url: URL): string {
  const shown = new URL(url.href);
  if (shown.password) shown.password = '***';
  return shown.href.replace(/\/$/, '');
}

function firstSet(env: Record<string, string | undefined>, names: string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return { name, value };
  }
  return undefined;
}

/** Reads a proxy URL (`host:port` alone is read as http://host:port, as curl does), or exit 2 naming where it came from. */
export function parseProxyUrl(value: string, source: string): URL {
  const withScheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(value) ? value : `http://${value}`;
  let url: URL | undefined;
  try {
    url = new URL(withScheme);
  } catch {}
  // Never echo the value: it may hold a password.
  const masked = url ? maskProxyUrl(url) : value.replace(/\/\/[^@/]*@/, '//***@').replace(/^[^/@]*@/, '***@');
  if (!url?.hostname) {
    throw new UsageError(
      `${source} "${masked}" is not a proxy URL.`,
      `Set ${source} to a URL such as http://proxy.example.com:3128 (http://user:password@host:port with a login), or unset it.`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(
      `${source} "${masked}" is a ${url.protocol.replace(/:$/, '')} proxy; opcli goes through http:// and https:// proxies only.`,
      `Set ${source} to the http(s) address of the proxy, or unset it.`,
    );
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
    throw new UsageError(
      `${source} "${masked}" has a path; a proxy URL is a scheme, a host and a port.`,
      `Set ${source} to a URL such as http://proxy.example.com:3128.`,
    );
  }
  return url;
}

const HOST_LABELS = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

/** One NO_PROXY entry, or undefined when it can match no host (the caller warns). */
function parseNoProxyEntry(raw: string): NoProxyEntry | undefined {
  const lower = raw.toLowerCase();
  // [v6]:port, host:port (one colon), v4:port; a bare IPv6 address has several colons.
  const split = /^\[([^\]]+)\](?::(\d+))?$/.exec(lower) ?? /^([^:]+):(\d+)$/.exec(lower);
  const text = split ? (split[1] ?? '') : lower;
  const port = split?.[2] === undefined ? undefined : Number(split[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  const [address = '', bits] = text.split('/');
  const family = isIP(address);
  if (family) {
    const max = family === 4 ? 32 : 128;
    const prefix = bits === undefined ? max : /^\d+$/.test(bits) ? Number(bits) : Number.NaN;
    if (!(prefix <= max)) return undefined;
    const addresses = new BlockList();
    addresses.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
    return { text: raw, addresses, port };
  }
  const host = text.replace(/^\*?\./, '');
  return HOST_LABELS.test(host) ? { text: raw, host, port } : undefined;
}

/** The proxies of a run: a proxy URL that does not parse is a usage error; a NO_PROXY entry that can match no host, a warning. */
export function readProxyConfig(settings: ProxySettings, env: Record<string, string | undefined>, warn: (line: string) => void): ProxyConfig {
  const choose = (names: string[]): ProxyChoice | undefined => {
    if (settings.proxy) {
      const url = parseProxyUrl(settings.proxy, 'The proxy setting');
      return { url, source: 'the proxy setting', shown: maskProxyUrl(url) };
    }
    const found = firstSet(env, names);
    if (!found) return undefined;
    const url = parseProxyUrl(found.value, found.name);
    return { url, source: found.name, shown: maskProxyUrl(url) };
  };
  const https = choose(['https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY']);
  const http = choose(['http_proxy', 'HTTP_PROXY', 'all_proxy', 'ALL_PROXY']);
  const fromEnv = settings.noProxy === undefined ? firstSet(env, ['no_proxy', 'NO_PROXY']) : undefined;
  const noProxySource = settings.noProxy !== undefined ? 'the no-proxy setting' : fromEnv?.name;
  const list = (settings.noProxy ?? fromEnv?.value ?? '').split(/[\s,]+/).filter(Boolean);
  const noProxy: NoProxyEntry[] = [];
  let noProxyAll = false;
  for (const raw of list) {
    if (raw === '*') {
      noProxyAll = true;
      continue;
    }
    const entry = parseNoProxyEntry(raw);
    if (entry) noProxy.push(entry);
    else
      warn(
        `Warning: ${noProxySource} entry "${raw}" cannot match any host (expected a host name, .domain, *.domain, an IP address or a CIDR range such as 10.0.0.0/8, with :port if needed); it is ignored.`,
      );
  }
  return { http, https, noProxy, noProxyAll, noProxySource, proxyLoopback: proxyLoopback(settings, env) };
}

/** OPCLI_PROXY_LOOPBACK (1/true/0/false) for this run, else the proxy-loopback setting, else false. */
function proxyLoopback(settings: ProxySettings, env: Record<string, string | undefined>): boolean {
  const raw = envValue(env, 'OPCLI_PROXY_LOOPBACK', [])?.toLowerCase();
  if (raw === undefined) return settings.proxyLoopback === true;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new UsageError(
    `OPCLI_PROXY_LOOPBACK "${safeLine(raw)}" is neither 1 nor 0.`,
    'Set it to 1 (or true) to send loopback requests through the proxy, 0 (or false) not to, or unset it.',
  );
}

/**
 * Whether a host (as URL.hostname gives it) is this machine: localhost, 127.0.0.0/8, ::1, and with
 * `subdomains` `*.localhost`, which a resolver may still send elsewhere (RFC 6761 §6.3): never for a token.
 */
export function isLoopbackHost(hostname: string, subdomains = true): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || (subdomains && host.endsWith('.localhost')) || /^127(\.\d{1,3}){3}$/.test(host) || host === '::1';
}

function matches(entry: NoProxyEntry, host: string, port: number): boolean {
  if (entry.port !== undefined && entry.port !== port) return false;
  if (!entry.addresses) return host === entry.host || host.endsWith(`.${entry.host}`);
  const family = isIP(host);
  return family !== 0 && entry.addresses.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

/** How a request to `url` is sent: the proxy for its scheme, or directly, with the reason. */
export function routeFor(config: ProxyConfig, url: URL): Route {
  const proxy = url.protocol === 'https:' ? config.https : config.http;
  if (!proxy) return { reason: 'direct (no proxy is configured)' };
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  // CHOICE (docs/spec-choices.md#loopback-not-proxied): a proxy cannot reach this machine's loopback.
  if (!config.proxyLoopback && isLoopbackHost(host))
    return { reason: `direct (${host} is loopback; set proxy-loopback to true to send it through ${proxy.shown})` };
  if (config.noProxyAll) return { reason: `direct (${config.noProxySource} is "*")` };
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const entry = config.noProxy.find((e) => matches(e, host, port));
  if (entry) return { reason: `direct (${config.noProxySource} matched "${entry.text}")` };
  return { proxy, reason: `through the proxy ${proxy.shown} (${proxy.source})` };
}

// The wire: the keep-alive pools' settings, and one exchange through undici's dispatch().

/**
 * How long a connection may sit idle and still carry a POST when the server announced no
 * `Keep-Alive: timeout=`: a POST written as the server's idle close crosses it has an unknown fate.
 * CHOICE (docs/spec-choices.md#keep-alive-for-posts): the spec names no keep-alive timeout.
 */
export const POST_IDLE_REUSE_MS = 500;
/** Keep-alive connections per origin: the highest --concurrency, so a batch never waits for the pool. */
const CONNECTIONS = 64;
const CONNECT_TIMEOUT_MS = 10_000;
/** undici's `keepAliveTimeoutThreshold`: the margin kept under a server's `Keep-Alive: timeout=N`. */
export const KEEP_ALIVE_MARGIN_MS = 2_000;

interface WireRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Past it the exchange fails with BODY_TOO_LARGE, never buffered further. */
  maxBytes?: number;
  /** The whole exchange must end within this, on `timers`, or it fails with DEADLINE_PASSED. */
  deadline?: { ms: number; timers: Timers };
  /** When undici starts writing the request's bytes (after any wait for a connection): the pacing counts from then. */
  onWritten?: () => void;
}

interface WireResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

function codeError(code: string, message: string, cause?: unknown): NodeJS.ErrnoException {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code });
}

/** undici's codes in the vocabulary of retry.ts. */
const UNDICI_CODES: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: CONNECT_TIMEOUT,
  UND_ERR_HEADERS_TIMEOUT: HEADERS_TIMEOUT,
  UND_ERR_BODY_TIMEOUT: BODY_TIMEOUT,
};

/** The caller's abort reason, or an error with a code the client sorts, what it met (`wire`) and whether it was written. */
function wireError(error: unknown, signal: AbortSignal | undefined, failure: WireFailure, written: boolean): unknown {
  if (signal?.aborted) return signal.reason ?? error;
  const source = error as { code?: string; message?: string };
  const code = source?.code && UNDICI_CODES[source.code];
  const out = code ? codeError(code, source.message ?? code, error) : error;
  return out !== null && typeof out === 'object' ? Object.assign(out, { wire: failure, [REQUEST_WRITTEN]: written }) : out;
}

/** An RFC 9110 token; a value holds no control character but tab. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/** A header HTTP does not allow (a token read with a trailing \r, say), named without its value. */
function invalidHeaders(headers: Record<string, string>): Error | undefined {
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) return codeError(INVALID_REQUEST, `invalid header name "${name.replace(/[^\x21-\x7e]/g, '?')}"`);
    if (BAD_VALUE_CHAR.test(value)) return codeError(INVALID_REQUEST, `the value of the ${name} header holds a character HTTP does not allow`);
  }
  return undefined;
}

/** A repeated header's values joined with ", ". */
function joinHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in raw) {
    const value = raw[name];
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/**
 * One request's exchange, as undici's dispatch handler: the body up to `maxBytes`, the deadline and
 * the caller's abort, settled with the answer or a failure that says whether the request was
 * written. Closures, not a class: as a class, the peak RSS of `orders list --all` grew outside the
 * JS heap (bench/orders-list.mjs).
 */
function exchange(
  req: WireRequest,
  proxy: ProxyChoice | undefined,
  resolve: (res: WireResponse) => void,
  reject: (error: unknown) => void,
): Dispatcher.DispatchHandler {
  const signal = req.signal;
  const maxBytes = req.maxBytes ?? Number.POSITIVE_INFINITY;
  const chunks: Buffer[] = [];
  let size = 0;
  let status = 0;
  let headers: Record<string, string> = {};
  let onAbort: (() => void) | undefined;
  let controller: Dispatcher.DispatchController | undefined;
  // A failure of ours (deadline, size) before undici started the request: applied when it does.
  let pending: Error | undefined;
  let ended = false;
  // undici writes the request in the turn it starts it; a failure before that left nothing.
  let written = false;
  const fail = (error: Error) => {
    if (ended) return;
    if (controller) controller.abort(error);
    else pending ??= error;
  };
  const limit = req.deadline;
  const deadline = limit?.timers.setTimeout(() => fail(codeError(DEADLINE_PASSED, `the whole answer did not arrive within ${limit.ms} ms`)), limit.ms);
  const finish = () => {
    ended = true;
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    if (deadline !== undefined) limit?.timers.clearTimeout(deadline);
  };
  const tooLarge = () => codeError(BODY_TOO_LARGE, `the answer is larger than ${maxBytes} bytes`);
  return {
    onRequestStart(start: Dispatcher.DispatchController) {
      controller = start;
      const early = pending ?? (signal?.aborted ? signal.reason : undefined);
      if (early !== undefined) return start.abort(early);
      written = true;
      req.onWritten?.();
      if (!signal) return;
      onAbort = () => start.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    },
    onResponseStart(_controller: unknown, statusCode: number, responseHeaders: Record<string, string | string[] | undefined>) {
      status = statusCode;
      headers = joinHeaders(responseHeaders);
      // A declared length past the limit fails before the first byte of the body is read.
      if (Number(headers['content-length']) > maxBytes) fail(tooLarge());
    },
    onResponseData(_controller: unknown, chunk: Buffer) {
      if (ended) return;
      size += chunk.length;
      if (size > maxBytes) return fail(tooLarge());
      chunks.push(chunk);
    },
    onResponseEnd() {
      if (ended) return;
      finish();
      const first = chunks[0];
      const text = chunks.length === 1 && first ? first.toString('utf8') : Buffer.concat(chunks).toString('utf8');
      // Answered after undici hands the connection back to its pool (next turn): the next request reuses it.
      queueMicrotask(() => setImmediate(resolve, { status, headers, text }));
    },
    onResponseError(_controller: unknown, error: Error) {
      finish();
      chunks.length = 0;
      failed(req, proxy, error, written, reject);
    },
  } as Dispatcher.DispatchHandler;
}

/** Rejects with the wire error of a failed exchange; a certificate error first names who issued the certificate. */
function failed(req: WireRequest, proxy: ProxyChoice | undefined, error: Error, written: boolean, reject: (error: unknown) => void): void {
  const signal = req.signal;
  const failure: WireFailure = { proxy };
  if (!signal?.aborted && certificateCode(error) && req.url.protocol === 'https:') {
    // To name who issued the certificate: a handshake, nothing sent. node:tls loads only then.
    void import('./trust.js')
      .then(({ probePeerCertificate }) => probePeerCertificate(req.url, proxy))
      .catch(() => undefined)
      .then((peer) => reject(wireError(error, signal, { ...failure, peer }, written)));
    return;
  }
  reject(wireError(error, signal, failure, written));
}
