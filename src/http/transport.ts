/**
 * The wire under the HTTP core: node:http / node:https with keep-alive agents. Node's own HTTP
 * stack is part of the runtime, so a one-off command no longer loads, evaluates and compiles the
 * whole undici bundle (and its llhttp WebAssembly) for a single request: that was ~100 ms of CPU of
 * every `opcli orders list`. Timeouts are kept here with undici's meaning (connect, headers, body
 * idle), and a failure carries a `code` the client sorts into "never sent" and "fate unknown".
 */
import type { Agent as HttpAgent, IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';

/**
 * node:http is loaded with require, not import: on Node 22+ an ES import builds a facade of every
 * export, and node:http's lazy WebSocket/MessageEvent getters then load Node's internal undici
 * (~20 ms of a one-off's start-up) for nothing.
 */
const requireBuiltin = createRequire(import.meta.url);

/** Error codes of this transport's own timeouts. */
export const CONNECT_TIMEOUT = 'ECONNECT_TIMEOUT';
export const HEADERS_TIMEOUT = 'EHEADERS_TIMEOUT';
export const BODY_TIMEOUT = 'EBODY_TIMEOUT';
/** The request could not be built (an invalid header value): it was never sent. */
export const INVALID_REQUEST = 'UND_ERR_INVALID_ARG';

export interface TransportOptions {
  /** Keep-alive connections per origin. */
  connections: number;
  connectTimeoutMs: number;
  /** Default time to wait for the response headers, and for each piece of the body. */
  timeoutMs: number;
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

function codeError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/** A keep-alive connection pool per scheme, created on first use. */
export class Transport {
  private readonly options: TransportOptions;
  private readonly agents = new Map<string, HttpAgent>();

  constructor(options: TransportOptions) {
    this.options = options;
  }

  private module(protocol: string): typeof import('node:http') {
    // node:https (and with it node:tls) is loaded only for https URLs.
    return requireBuiltin(protocol === 'https:' ? 'node:https' : 'node:http') as typeof import('node:http');
  }

  private agent(protocol: string, mod: typeof import('node:http')): HttpAgent {
    let agent = this.agents.get(protocol);
    if (!agent) {
      // Node's agent closes an idle socket just before the server's Keep-Alive timeout hint, as
      // undici did, so a request is not written into a connection the server is closing.
      agent = new mod.Agent({ keepAlive: true, maxSockets: this.options.connections, scheduling: 'lifo' });
      this.agents.set(protocol, agent);
    }
    return agent;
  }

  /** Sends one request and reads the whole body as text. */
  async send(req: WireRequest): Promise<WireResponse> {
    const mod = this.module(req.url.protocol);
    const agent = this.agent(req.url.protocol, mod);
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
          const out: Record<string, string> = {};
          for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
          const text = chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8');
          finish(undefined, { status: res.statusCode ?? 0, headers: out, text });
        });
      });
      request.end(req.body);
    });
  }

  /** Closes every pooled connection. */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
