/**
 * The wire under the HTTP core: how a request goes out, whole. The request as it is sent (headers,
 * the bearer token, the --verbose trace of it and of its answer), the route it takes (a proxy or
 * directly, and why), and the bundled undici's Agent, the design card's HTTP library, for every
 * request (one-offs, `orders list`, claims batches), through `dispatch()` with a handler of its own:
 * no stream per response body and no promise per read. Fast path (bench/startup.mjs, the one-off):
 * undici's `Agent` module is imported alone, statically, not from undici's index (its public entry,
 * which loads fetch, WebSocket, the cache and the mocks with it); the index, for its `ProxyAgent`,
 * and the certificate probe load on use, only behind a proxy or after a certificate error (figures:
 * docs/benchmarks.md#figures-behind-the-code).
 *
 * Proxies (docs/http.md#proxies): the profile's `proxy` setting, else HTTPS_PROXY / HTTP_PROXY /
 * ALL_PROXY (lower case first, as undici and curl read them); `no-proxy` or NO_PROXY lists hosts
 * reached directly (names and their subdomains, `*.` and `.` prefixes, ports, IP addresses and CIDR
 * ranges); loopback is reached directly unless `proxy-loopback` says otherwise. Read from the run's
 * environment (deps.env), never process.env, which main.ts has cleared of proxy passwords. What this
 * adds to undici's `EnvHttpProxyAgent`, which reads the same variables: ALL_PROXY, CIDR ranges, the
 * loopback rule and the reason a route was taken; the requests themselves go through undici's
 * `ProxyAgent`.
 *
 * It keeps undici's timeout meanings (connect, headers, body idle), never follows redirects, keeps
 * connections alive, refuses headers HTTP does not allow before sending anything, and gives a
 * failure a `code` the client sorts into "never sent" and "fate unknown".
 */
import { BlockList, isIP } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import type { Dispatcher } from 'undici';
import Agent from 'undici/lib/dispatcher/agent.js';
import { envValue } from '../config/profile.js';
import { UsageError } from '../core/errors.js';
import { redactJson } from '../core/redact.js';
import { safeLine, safeText } from '../text/safe.js';

// The request as it is sent, and its trace.

const LOOPBACK = /^(127(?:\.\d{1,3}){3}|localhost|\[::1\])$/i;

/** Whether a URL may carry credentials: https anywhere, http only to loopback. */
export function isSafeForCredentials(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.test(url.hostname));
}

/** What a request carries: its caller's headers, a token or none, a JSON body or none. */
export interface Outgoing {
  userAgent: string;
  headers?: Record<string, string>;
  token?: string;
  json?: unknown;
}

/** The headers (lower-cased) and body of a request: the bearer token when there is one, never the caller's own Authorization otherwise. */
export function buildRequest(out: Outgoing): { headers: Record<string, string>; body?: string } {
  // No prototype: a caller's header named `__proto__` is a header, not the object's prototype.
  const headers: Record<string, string> = Object.assign(Object.create(null), { 'user-agent': out.userAgent, accept: 'application/json' });
  for (const [k, v] of Object.entries(out.headers ?? {})) headers[k.toLowerCase()] = v;
  if (out.token) headers.authorization = `Bearer ${out.token}`;
  else delete headers.authorization;
  if (out.json === undefined) return { headers };
  headers['content-type'] = 'application/json';
  return { headers, body: JSON.stringify(out.json) };
}

/** A header's value as a trace shows it: credentials masked. */
function redactHeader(name: string, value: string): string {
  if (name === 'authorization') return value.replace(/^(\w+)\s+.*$/, '$1 ***');
  if (/token|secret|cookie|api-key/i.test(name)) return '***';
  return value;
}

/** The --verbose lines of requests and answers, already redacted; server text made safe for a terminal (JSON.stringify leaves DEL and C1 raw). */
export class Tracer {
  private readonly sink: (line: string) => void;

  constructor(sink: (line: string) => void) {
    this.sink = (line) => sink(safeText(line));
  }

  /** The request: how it goes out (`route`), its URL without secrets in the query, headers, JSON body. */
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

  /** The answer: status and time, headers, body (text cut at 4,000 characters). */
  response(status: number, headers: Record<string, string>, body: unknown, ms: number): void {
    this.sink(`< ${status} (${ms} ms)`);
    for (const [k, v] of Object.entries(headers)) this.sink(`< ${k}: ${redactHeader(k, v)}`);
    if (body !== '' && body !== undefined) this.sink(`< ${typeof body === 'string' ? body.slice(0, 4000) : JSON.stringify(redactJson(body))}`);
  }
}

// The route: which proxy a request goes through, and why.

/** The profile's network settings that steer proxies. */
export interface ProxySettings {
  proxy?: string;
  noProxy?: string;
  proxyLoopback?: boolean;
}

/** A proxy and where it was configured. */
export interface ProxyChoice {
  url: URL;
  /** The setting or variable that named it: `HTTPS_PROXY`, `the proxy setting`… */
  source: string;
  /** The URL with its password masked, for messages and traces. */
  shown: string;
}

interface NoProxyEntry {
  text: string;
  /** A host name (lower case, no leading dot): it and its subdomains. */
  host?: string;
  /** An IP address or a CIDR range. */
  addresses?: BlockList;
  port?: number;
}

/** The proxies of a run, read once. */
export interface ProxyConfig {
  http?: ProxyChoice;
  https?: ProxyChoice;
  noProxy: NoProxyEntry[];
  /** `*`: nothing is proxied. */
  noProxyAll: boolean;
  noProxySource?: string;
  proxyLoopback: boolean;
}

/** How one request is sent: through `proxy`, or directly; `reason` says why, for --verbose and `auth status --check`. */
export interface Route {
  proxy?: ProxyChoice;
  reason: string;
}

/** A proxy URL as messages show it: the password (and a token-like user) masked. */
export function maskProxyUrl(url: URL): string {
  const shown = new URL(url.href);
  if (shown.password) shown.password = '***';
  return shown.href.replace(/\/$/, '');
}

/** The first set (non-empty) variable of `names`, with its name. */
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

/**
 * Reads the proxies of a run from the profile's settings and the environment. A proxy URL that
 * does not parse is a usage error naming its variable or setting; a NO_PROXY entry that cannot
 * match any host is left out with a warning.
 */
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

/** Whether a host (as URL.hostname gives it) is this machine: localhost, 127.0.0.0/8, ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(host) || host === '::1';
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

// The wire: undici's Agent, and one exchange through it.

/** Error codes of this transport's timeouts. */
export const CONNECT_TIMEOUT = 'ECONNECT_TIMEOUT';
export const HEADERS_TIMEOUT = 'EHEADERS_TIMEOUT';
export const BODY_TIMEOUT = 'EBODY_TIMEOUT';
/** The HTTP library could not be loaded (a missing or broken bundle chunk): nothing was sent. */
export const ENGINE_UNAVAILABLE = 'EENGINE_UNAVAILABLE';
/** The request could not be built (an invalid header value): it was never sent. */
export const INVALID_REQUEST = 'UND_ERR_INVALID_ARG';
/** The answer's body grew past the request's `maxBytes`: reading stopped there, the connection was closed. */
export const BODY_TOO_LARGE = 'EBODY_TOO_LARGE';
/** The whole exchange did not end within the request's deadline. */
export const DEADLINE_PASSED = 'EDEADLINE';

/**
 * How long a connection may sit idle and still carry a POST, when the server announced no
 * `Keep-Alive: timeout=`: a server closes idle connections on a timer of its own, and a POST
 * written as that close crosses it is lost with its fate unknown (nginx's `keepalive_timeout 1s`
 * met a batch paced at 1/s). Past this, the POST opens a new connection.
 * CHOICE (docs/spec-choices.md#keep-alive-for-posts): the spec names no keep-alive timeout.
 */
export const POST_IDLE_REUSE_MS = 500;
/**
 * The margin kept under a timeout the server announces (`Keep-Alive: timeout=N`): a connection
 * idle for longer than N s less this is not reused (undici's `keepAliveTimeoutThreshold`).
 */
export const KEEP_ALIVE_MARGIN_MS = 2_000;

/**
 * Set on a failure's error: whether undici started writing the request (it writes a request's
 * bytes in the same turn as it starts it). A failure without it left nothing on the wire.
 */
export const REQUEST_WRITTEN = Symbol('requestWritten');

/** The timers a request's deadline runs on (the run's clock: a test's manual one moves it). */
export interface WireTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface TransportOptions {
  /** Keep-alive connections per origin. */
  connections: number;
  /** Time to make a connection. */
  connectTimeoutMs: number;
  /** Default time to wait for the response headers, and for each piece of the body. */
  timeoutMs: number;
  /** How a request goes out (a proxy or directly); absent: always directly. */
  route?: (url: URL) => Route;
  /** The CA certificates to trust (PEM), when they are not Node's default (a ca-file is set). */
  ca?: string[];
}

/** What the server's certificate says: who issued it, for whom, until when. */
export interface PeerCertificate {
  issuer?: string;
  subject?: string;
  validTo?: string;
  altNames?: string;
}

/** What a failure met on the way: the proxy it went through, the certificate it refused. */
export interface WireFailure {
  proxy?: ProxyChoice;
  peer?: PeerCertificate;
}

export interface WireRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** Overrides the headers and body timeouts for this request. */
  timeoutMs?: number;
  /** The most bytes of body read; past it the exchange fails with BODY_TOO_LARGE (never buffered further). */
  maxBytes?: number;
  /** The whole exchange (connection, headers, body) must end within this, on `timers`, or it fails with DEADLINE_PASSED. */
  deadline?: { ms: number; timers: WireTimers };
  /** Called when undici starts writing the request's bytes (after any wait for a connection): the pacing counts from then. */
  onWritten?: () => void;
}

export interface WireResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  text: string;
}

function codeError(code: string, message: string, cause?: unknown): NodeJS.ErrnoException {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code });
}

/** undici's own codes, renamed to this transport's, so the client reads one vocabulary. */
const UNDICI_CODES: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: CONNECT_TIMEOUT,
  UND_ERR_HEADERS_TIMEOUT: HEADERS_TIMEOUT,
  UND_ERR_BODY_TIMEOUT: BODY_TIMEOUT,
};

/**
 * The error to hand the client: the caller's abort reason, or one with a code it can sort, carrying
 * what it met (`wire`) and whether the request was written.
 */
function wireError(error: unknown, signal: AbortSignal | undefined, failure: WireFailure, written: boolean): unknown {
  if (signal?.aborted) return signal.reason ?? error;
  const source = error as { code?: string; message?: string };
  const code = source?.code && UNDICI_CODES[source.code];
  const out = code ? codeError(code, source.message ?? code, error) : error;
  return out !== null && typeof out === 'object' ? Object.assign(out, { wire: failure, [REQUEST_WRITTEN]: written }) : out;
}

/** Node's codes for a certificate the client does not accept. */
export const CERT_ERROR_CODES = new Set([
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

/** Whether a transport failure came after the request was written (undefined when the error did not come from the wire). */
export function requestWritten(error: unknown): boolean | undefined {
  return error !== null && typeof error === 'object' ? (error as { [REQUEST_WRITTEN]?: boolean })[REQUEST_WRITTEN] : undefined;
}

/** A header name (an RFC 9110 token) and value (no control character but tab) HTTP allows. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * A request whose headers HTTP does not allow is refused before anything is sent (a token read
 * with a trailing \r, say), with the message naming the header and never its value.
 */
function invalidHeaders(headers: Record<string, string>): Error | undefined {
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) return invalidRequest(`invalid header name "${name.replace(/[^\x21-\x7e]/g, '?')}"`);
    if (BAD_VALUE_CHAR.test(value)) return invalidRequest(`the value of the ${name} header holds a character HTTP does not allow`);
  }
  return undefined;
}

function invalidRequest(message: string): Error {
  return Object.assign(new Error(message), { code: INVALID_REQUEST, name: 'InvalidArgumentError' });
}

/** Response headers as one string each: a repeated header's values joined with ", ". */
function joinHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in raw) {
    const value = raw[name];
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** Keep-alive connection pools (undici's Agent, a ProxyAgent per proxy), each created on first use. */
export class Transport {
  private readonly options: TransportOptions;
  /** By kind and proxy URL: `unsafe|` and `safe|`, then the proxy's URL ('' for direct connections). */
  private readonly pools = new Map<string, Promise<Dispatcher>>();

  constructor(options: TransportOptions) {
    this.options = options;
  }

  private pool(key: string, proxy: ProxyChoice | undefined, unsafe: boolean): Promise<Dispatcher> {
    let pool = this.pools.get(key);
    if (!pool) {
      const { connections, connectTimeoutMs: timeout, timeoutMs, ca } = this.options;
      const tlsOptions = ca ? { timeout, ca } : { timeout };
      const common = {
        connections,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        keepAliveTimeoutThreshold: KEEP_ALIVE_MARGIN_MS,
        // A POST reuses a connection only while it is fresh (see POST_IDLE_REUSE_MS); a GET after
        // a stale one is simply asked again.
        ...(unsafe ? { keepAliveTimeout: POST_IDLE_REUSE_MS } : {}),
      };
      // undici parses HTTP with llhttp built to WebAssembly, compiled when the first connection
      // opens. By default V8 compiles it twice, the second time with its optimising compiler in the
      // background, which a one-off paid for in CPU and peak memory, for a parser that reads a few
      // kilobytes. Liftoff alone (what the bin shim passes to long runs) compiles it once
      // (docs/benchmarks.md#figures-behind-the-code).
      setFlagsFromString('--liftoff-only');
      // undici's index, for its ProxyAgent, is loaded only when a request goes through a proxy.
      pool = proxy
        ? import('./undici.js').then(({ ProxyAgent }) => new ProxyAgent({ ...common, uri: proxy.url.href, proxyTls: tlsOptions, requestTls: tlsOptions }))
        : Promise.resolve(new Agent({ ...common, connect: tlsOptions }));
      this.pools.set(key, pool);
    }
    return pool;
  }

  /** Sends one request and reads the whole body as text. */
  async send(req: WireRequest): Promise<WireResponse> {
    const invalid = invalidHeaders(req.headers);
    if (invalid) throw invalid;
    const proxy = this.options.route?.(req.url)?.proxy;
    const unsafe = req.method === 'POST' || req.method === 'PATCH';
    const key = `${unsafe ? 'unsafe' : 'safe'}|${proxy?.url.href ?? ''}`;
    let agent: Dispatcher;
    try {
      agent = await this.pool(key, proxy, unsafe);
    } catch (error) {
      // Not cached: the next request tries to load it again. Nothing left this process.
      this.pools.delete(key);
      throw codeError(ENGINE_UNAVAILABLE, `the HTTP library could not be loaded: ${(error as Error)?.message ?? error}`, error);
    }
    if (req.signal?.aborted) throw req.signal.reason ?? codeError('ABORT_ERR', 'aborted');
    const timeoutMs = req.timeoutMs ?? this.options.timeoutMs;
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

  /** Closes every pooled connection. */
  close(): void {
    const pools = [...this.pools.values()];
    this.pools.clear();
    for (const pool of pools) void pool.then((a) => a.destroy()).catch(() => {});
  }
}

/** undici's handle on a request it started: aborting it fails the exchange with the reason. */
interface RequestController {
  abort(reason: Error): void;
}

/**
 * One request's exchange, as undici's dispatch handler: collects the body up to `maxBytes`, applies
 * the deadline and the caller's abort, and settles with the answer or a failure that says whether
 * the request was written. An object of closures over one scope, not a class instance: with the
 * handler as a class (`Exchange`, 58307fa) the peak RSS of `orders list --all` grew outside the JS
 * heap (bench/orders-list.mjs; docs/benchmarks.md#figures-behind-the-code), and keeping the body's
 * chunks out of it (emptying them at the end) did not help; only this shape did.
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
  let controller: RequestController | undefined;
  // A failure of ours (deadline, size) met before undici started the request: applied when it does, before anything is written.
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
    onRequestStart(start: RequestController) {
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
      // undici hands the connection back to its pool on the next turn (it queues that before this
      // handler's stack unwinds): answered after it, the caller's next request reuses the connection
      // instead of opening another.
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
    // Only to name who issued the certificate: a handshake, nothing sent, then closed. Loaded only
    // then: node:tls and the rest cost a one-off start-up that never meets a certificate error
    // (bench/startup.mjs).
    void import('./trust.js')
      .then(({ probePeerCertificate }) => probePeerCertificate(req.url, proxy))
      .catch(() => undefined)
      .then((peer) => reject(wireError(error, signal, { ...failure, peer }, written)));
    return;
  }
  reject(wireError(error, signal, failure, written));
}
