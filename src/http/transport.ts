/**
 * The wire under the HTTP core, in three engines, chosen by the caller:
 *
 * - `node` (one-offs, the default): node:http / node:https with keep-alive agents. Measured on
 *   Node 20 (bench/transport-oneoff.mjs, CPU of a process sending one GET), node:http costs ~14 ms
 *   over `node -e 0`, Node's built-in fetch ~110 ms (Node 20 loads and compiles its internal undici
 *   on the first fetch) and the bundled undici package ~165 ms: a one-off keeps node:http.
 * - `agent` (claims batches, run under the bin shim): the bundled undici package's Agent through
 *   `dispatch()`, the design card's HTTP library, where its pool and request path matter for many
 *   parallel requests and its load cost is paid once per run. Loaded on first use only.
 *   `orders list --all` stays on `node`: its pages come one after another (one ahead), and over
 *   100,000 orders node:http took ~0.1 s less CPU and ~20 MiB less peak memory (90 against 112 MiB).
 * - `fetch`: Node's built-in fetch (undici inside Node), for Node versions where it is cheap to
 *   start; opt-in (OPCLI_HTTP_ENGINE=fetch) until measured there.
 *
 * All keep undici's timeout meanings (connect, headers, body idle), never follow redirects, keep
 * connections alive, refuse headers HTTP does not allow before sending anything, and give a
 * failure a `code` the client sorts into "never sent" and "fate unknown".
 */
import type { Agent as HttpAgent, IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { Agent } from 'undici';

/**
 * node:http is loaded with require, not import: on Node 22+ an ES import builds a facade of every
 * export, and node:http's lazy WebSocket/MessageEvent getters then load Node's internal undici
 * (~20 ms of a one-off's start-up) for nothing.
 */
const requireBuiltin = createRequire(import.meta.url);

/** Error codes of this transport's timeouts. */
export const CONNECT_TIMEOUT = 'ECONNECT_TIMEOUT';
export const HEADERS_TIMEOUT = 'EHEADERS_TIMEOUT';
export const BODY_TIMEOUT = 'EBODY_TIMEOUT';
/** The engine could not be loaded (a missing or broken bundle chunk): nothing was sent. */
export const ENGINE_UNAVAILABLE = 'EENGINE_UNAVAILABLE';
/** The request could not be built (an invalid header value): it was never sent. */
export const INVALID_REQUEST = 'UND_ERR_INVALID_ARG';

/** What carries the requests: node:http, the bundled undici Agent, or Node's built-in fetch. */
export type TransportEngine = 'node' | 'agent' | 'fetch';

export interface TransportOptions {
  /** Keep-alive connections per origin (node and agent engines; the built-in fetch pools on its own). */
  connections: number;
  /** Connect timeout (node and agent engines); the built-in fetch keeps Node's own (10 s, the same as opcli's default). */
  connectTimeoutMs: number;
  /** Default time to wait for the response headers, and for each piece of the body. */
  timeoutMs: number;
  /** Default: `node`. */
  engine?: TransportEngine;
}

export interface WireRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** Overrides the headers and body timeouts for this request. */
  timeoutMs?: number;
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

/** The error to hand the client: the caller's abort reason, or one with a code it can sort. */
function wireError(error: unknown, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted) return signal.reason ?? error;
  // fetch wraps the network failure: TypeError('fetch failed', { cause }).
  const inner = (error as { cause?: { code?: string } })?.cause;
  const source = (error as { code?: string })?.code
    ? (error as { code: string; message: string })
    : inner?.code
      ? (inner as { code: string; message?: string })
      : undefined;
  if (!source) return error;
  const code = UNDICI_CODES[source.code] ?? source.code;
  if (code === source.code && source === error) return error;
  return codeError(code, source.message ?? String(code), error);
}

/** A header name (an RFC 9110 token) and value (no control character but tab) HTTP allows. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * A request whose headers HTTP does not allow is refused before anything is sent. Checked here
 * for both engines alike: fetch would otherwise trim a token read with a trailing \r and send it,
 * where undici's Agent (and node:http) refuse it; opcli refuses it in every case.
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

/**
 * One turn of the event loop after a body is read: undici hands the connection back to its pool
 * there, so the caller's next request reuses it instead of opening a second connection.
 */
function handBack(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
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

/** A keep-alive connection pool, created on first use. */
export class Transport {
  private readonly options: TransportOptions;
  private agent?: Promise<Agent>;
  private readonly nodeAgents = new Map<string, HttpAgent>();

  constructor(options: TransportOptions) {
    this.options = options;
  }

  /** Sends one request and reads the whole body as text. */
  async send(req: WireRequest): Promise<WireResponse> {
    const invalid = invalidHeaders(req.headers);
    if (invalid) throw invalid;
    if (this.options.engine === 'agent') return this.sendWithAgent(req);
    if (this.options.engine === 'fetch') return this.sendWithFetch(req);
    return this.sendWithNode(req);
  }

  private async sendWithAgent(req: WireRequest): Promise<WireResponse> {
    this.agent ??= import('./undici.js').then(async ({ loadUndici }) => {
      const { Agent } = await loadUndici();
      return new Agent({
        connections: this.options.connections,
        connect: { timeout: this.options.connectTimeoutMs },
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
      });
    });
    let agent: Agent;
    try {
      agent = await this.agent;
    } catch (error) {
      // Not cached: the next request tries to load it again. Nothing left this process.
      this.agent = undefined;
      throw codeError(ENGINE_UNAVAILABLE, `the HTTP library could not be loaded: ${(error as Error)?.message ?? error}`, error);
    }
    const signal = req.signal;
    if (signal?.aborted) throw signal.reason ?? codeError('ABORT_ERR', 'aborted');
    const timeoutMs = req.timeoutMs ?? this.options.timeoutMs;
    return new Promise<WireResponse>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let status = 0;
      let headers: Record<string, string> = {};
      let onAbort: (() => void) | undefined;
      const stopListening = () => {
        if (onAbort) signal?.removeEventListener('abort', onAbort);
      };
      // undici's dispatch with a handler of its own, rather than `request()`: no stream per
      // response body and no promise per read; the body is a few hundred bytes of JSON.
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
        {
          onRequestStart(controller) {
            if (!signal) return;
            onAbort = () => controller.abort(signal.reason);
            if (signal.aborted) onAbort();
            else signal.addEventListener('abort', onAbort, { once: true });
          },
          onResponseStart(_controller, statusCode, responseHeaders) {
            status = statusCode;
            headers = joinHeaders(responseHeaders);
          },
          onResponseData(_controller, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            stopListening();
            const first = chunks[0];
            const text = chunks.length === 1 && first ? first.toString('utf8') : Buffer.concat(chunks).toString('utf8');
            // undici hands the connection back to its pool on the next turn (it queues that
            // before this handler's stack unwinds): answered after it, the caller's next
            // request reuses the connection instead of opening another (as handBack does).
            queueMicrotask(() => setImmediate(resolve, { status, headers, text }));
          },
          onResponseError(_controller, error) {
            stopListening();
            reject(wireError(error, signal));
          },
        },
      );
    });
  }

  private async sendWithFetch(req: WireRequest): Promise<WireResponse> {
    const timeoutMs = req.timeoutMs ?? this.options.timeoutMs;
    // Our timeouts abort the request through this controller, with a coded reason.
    const own = new AbortController();
    const signal = req.signal ? AbortSignal.any([req.signal, own.signal]) : own.signal;
    let timer: NodeJS.Timeout | undefined;
    const arm = (code: string, message: string) => {
      clearTimeout(timer);
      timer = setTimeout(() => own.abort(codeError(code, message)), timeoutMs);
    };
    // Runs from the start: it covers the connection too (Node's fetch gives up connecting after
    // 10 s on its own, code UND_ERR_CONNECT_TIMEOUT: never sent). A wait for the headers that ends
    // here is "fate unknown", the safe reading for a connection that might have been made.
    arm(HEADERS_TIMEOUT, 'timed out waiting for the response headers');
    try {
      const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body, signal, redirect: 'manual' });
      arm(BODY_TIMEOUT, 'timed out reading the response body');
      const chunks: Uint8Array[] = [];
      let size = 0;
      if (res.body) {
        const reader = res.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          chunks.push(value);
          size += value.byteLength;
          arm(BODY_TIMEOUT, 'timed out reading the response body');
        }
      }
      const headers: Record<string, string> = {};
      res.headers.forEach((value, name) => {
        // Set-Cookie comes one by one; every other repeated header arrives joined already.
        headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
      });
      await handBack();
      const first = chunks[0] as Uint8Array;
      const text =
        chunks.length === 1 ? Buffer.from(first.buffer, first.byteOffset, first.byteLength).toString('utf8') : Buffer.concat(chunks, size).toString('utf8');
      return { status: res.status, headers, text };
    } catch (error) {
      if (own.signal.aborted && !req.signal?.aborted) throw own.signal.reason;
      throw wireError(error, req.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  private module(protocol: string): typeof import('node:http') {
    // node:https (and with it node:tls) is loaded only for https URLs.
    return requireBuiltin(protocol === 'https:' ? 'node:https' : 'node:http') as typeof import('node:http');
  }

  private nodeAgent(protocol: string, mod: typeof import('node:http')): HttpAgent {
    let agent = this.nodeAgents.get(protocol);
    if (!agent) {
      // Node's agent closes an idle socket just before the server's Keep-Alive timeout hint, as
      // undici did, so a request is not written into a connection the server is closing.
      agent = new mod.Agent({ keepAlive: true, maxSockets: this.options.connections, scheduling: 'lifo' });
      this.nodeAgents.set(protocol, agent);
    }
    return agent;
  }

  private sendWithNode(req: WireRequest): Promise<WireResponse> {
    const mod = this.module(req.url.protocol);
    const agent = this.nodeAgent(req.url.protocol, mod);
    const timeoutMs = req.timeoutMs ?? this.options.timeoutMs;
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined) headers['content-length'] = Buffer.byteLength(req.body);
    return new Promise<WireResponse>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      const arm = (ms: number, fail: () => void) => {
        clearTimeout(timer);
        timer = setTimeout(fail, ms);
      };
      const finish = (error: Error | undefined, value?: WireResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(value as WireResponse);
      };
      let request: ReturnType<typeof mod.request>;
      try {
        request = mod.request(req.url, { method: req.method, headers, agent, signal: req.signal });
      } catch (error) {
        // Node refused to build the request (a header value with a control character, such as a
        // token read with a trailing \r): nothing left this process. Same code as undici used.
        const invalid = Object.assign(new Error((error as Error).message), { code: INVALID_REQUEST, name: 'InvalidArgumentError', cause: error });
        finish(invalid);
        return;
      }
      request.on('error', (error) => finish(error));
      request.once('socket', (socket) => {
        const waitHeaders = () => arm(timeoutMs, () => request.destroy(codeError(HEADERS_TIMEOUT, 'timed out waiting for the response headers')));
        if (socket.connecting) {
          arm(this.options.connectTimeoutMs, () => request.destroy(codeError(CONNECT_TIMEOUT, 'timed out connecting')));
          socket.once('connect', waitHeaders);
        } else waitHeaders();
      });
      request.once('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        const idle = () => arm(timeoutMs, () => res.destroy(codeError(BODY_TIMEOUT, 'timed out reading the response body')));
        idle();
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          idle();
        });
        res.on('error', (error) => finish(error));
        res.once('close', () => {
          if (res.complete) return;
          if (req.signal?.aborted) finish(req.signal.reason ?? codeError('ABORT_ERR', 'aborted'));
          else finish(codeError('ECONNRESET', 'the connection closed before the whole body arrived'));
        });
        res.once('end', () => {
          const out = joinHeaders(res.headers);
          const text = chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8');
          finish(undefined, { status: res.statusCode ?? 0, headers: out, text });
        });
      });
      request.end(req.body);
    });
  }

  /** Closes every pooled connection. */
  close(): void {
    for (const agent of this.nodeAgents.values()) agent.destroy();
    this.nodeAgents.clear();
    const agent = this.agent;
    this.agent = undefined;
    void agent?.then((a) => a.destroy()).catch(() => {});
  }
}
