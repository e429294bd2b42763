import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { handleAdmin } from './admin.js';
import type { Faults } from './faults.js';
import { refuseStranger } from './guard.js';
import { type Ctx, type Reply, flattenHeaders, json } from './http.js';
import type { RateLimiter } from './rate-limit.js';
import { matchRoute } from './routes.js';
import { later, type SandboxState } from './state.js';
import type { FaultRule, Sandbox, ReceivedRequest } from './types.js';

/** The HTTP front of the sandbox: body reading, recording, fault injection, routing, answering. */

const MAX_BODY = 1024 * 1024;

/** The body as text, or null past MAX_BODY (read to its end all the same). */
async function readRaw(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= MAX_BODY) chunks.push(chunk);
  }
  return size > MAX_BODY ? null : Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, reply: Reply): void {
  if (res.destroyed || res.headersSent) return;
  const text = typeof reply.body === 'string' ? reply.body : reply.body === undefined ? '' : JSON.stringify(reply.body);
  const headers: Record<string, string | number> = { ...reply.headers, 'content-length': Buffer.byteLength(text) };
  if (typeof reply.body !== 'string' && !reply.headers?.['content-type']) headers['content-type'] = 'application/json';
  res.writeHead(reply.status, headers);
  res.end(text);
}

function faultReply(rule: FaultRule): Reply {
  const status = rule.status ?? 500;
  const headers: Record<string, string> = {};
  if (rule.retryAfter !== undefined) headers['retry-after'] = String(rule.retryAfter);
  return json(status, { error: 'fault_injected', message: `sandbox fault rule for ${rule.path} answered ${status}` }, headers);
}

interface Parts {
  state: SandboxState;
  recorder: Recorder;
  faults: Faults;
  limiter: RateLimiter;
  /** Admin requests are not slowed. */
  latencyMs: () => number;
  /** Set once the server listens, as `guard` is. */
  sandbox: () => Sandbox;
  guard: () => { origins: Set<string>; adminSecret: string };
}

/** The route's handler's answer, or 405, 400 or 404. */
function route(state: Parts['state'], ctx: Ctx): Reply {
  const { method, path } = ctx;
  const match = matchRoute(method, path);
  if (match.kind === 'found') {
    ctx.params = match.params;
    try {
      return match.route.handler(state, ctx);
    } catch (error) {
      return json(500, { error: 'internal_error', message: error instanceof Error ? error.message : String(error) });
    }
  }
  if (match.kind === 'method') {
    return json(
      405,
      { error: 'method_not_allowed', message: `${method} is not allowed on ${path}; use ${match.allow.join(', ')}` },
      { allow: match.allow.join(', ') },
    );
  }
  if (match.kind === 'bad_path') return json(400, { error: 'invalid_request', message: `the path ${path} is not validly percent-encoded` });
  return json(404, { error: 'not_found', message: `no route for ${method} ${path}` });
}

/** `raw` null: larger than MAX_BODY. */
async function readRequest(req: IncomingMessage): Promise<{ ctx: Ctx; raw: string | null }> {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const query: Record<string, string> = {};
  if (q >= 0) for (const [k, v] of new URLSearchParams(url.slice(q + 1))) query[k] = v;
  const raw = await readRaw(req);
  const path = q < 0 ? url : url.slice(0, q);
  return {
    ctx: { method: req.method ?? 'GET', path, query, headers: flattenHeaders(req), body: raw ?? '', params: [], ip: req.socket.remoteAddress ?? '' },
    raw,
  };
}

export function createSandboxServer(parts: Parts): Server {
  const { state, recorder, faults } = parts;

  const sleep = (ms: number) => new Promise<void>((resolve) => later(state, ms, resolve));

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { ctx, raw } = await readRequest(req);
    const { method, path, query, headers } = ctx;

    // Only the sandbox's own user, from this machine: neither served nor recorded otherwise.
    const refused = refuseStranger(ctx, parts.guard());
    if (refused) {
      send(res, refused);
      return;
    }

    if (path === '/__admin' || path.startsWith('/__admin/')) {
      send(res, handleAdmin(parts.sandbox(), ctx));
      return;
    }

    // Decided on arrival, per bearer token; requests without one are not limited.
    const bearer = /^Bearer\s+(\S+)/i.exec(headers.authorization ?? '')?.[1];
    const limit = bearer === undefined ? null : parts.limiter.take(bearer);
    const latency = parts.latencyMs();
    const withLimitHeaders = (reply: Reply): Reply =>
      limit && Object.keys(limit.headers).length > 0 ? { ...reply, headers: { ...reply.headers, ...limit.headers } } : reply;
    const record = recorder.add({ at: state.now(), method, path, query, headers, body: ctx.body });
    const answer = (reply: Reply) => {
      if (res.destroyed) return;
      record.status = reply.status;
      send(res, withLimitHeaders(reply));
    };
    const drop = () => {
      record.status = 0;
      req.socket.destroy();
    };

    if (latency > 0) await sleep(latency);
    if (limit && !limit.allowed) {
      return answer(json(429, { error: 'rate_limited', message: `too many requests for this access token; try again in ${limit.waitMs} ms` }, limit.headers));
    }

    const fault = faults.pick(method, path);
    const before = fault !== null && (fault.phase ?? 'before') === 'before';
    /** Its latency, then a dropped connection or its answer; true when that ended the request. */
    const inject = async (rule: FaultRule) => {
      if (rule.latencyMs) await sleep(rule.latencyMs);
      if (rule.drop) drop();
      else if (rule.status !== undefined) answer(faultReply(rule));
      return rule.drop || rule.status !== undefined;
    };
    if (fault && before && (await inject(fault))) return;
    const reply = raw === null ? json(413, { error: 'invalid_request', message: `the request body is larger than ${MAX_BODY} bytes` }) : route(state, ctx);
    if (fault && !before && (await inject(fault))) return;
    answer(reply);
  }

  const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
    onRequest(req, res).catch((error: unknown) => {
      send(res, json(500, { error: 'internal_error', message: error instanceof Error ? error.message : String(error) }));
    });
  });
  return server;
}

/**
 * The log of received requests, the oldest dropped past `max`: in slices of max/8 (one at a time
 * would move the whole log on each request), and before every read, so a reader sees at most `max`.
 */
export function createRecorder(max: number) {
  const entries: ReceivedRequest[] = [];
  const slack = Math.max(1, Math.ceil(max / 8));
  const trim = () => {
    if (entries.length > max) entries.splice(0, entries.length - max);
  };
  let seq = 0;
  return {
    /** Always the same array. */
    get list(): ReceivedRequest[] {
      trim();
      return entries;
    },
    /** Status 0 until answered. */
    add(entry: Omit<ReceivedRequest, 'seq' | 'status'>): ReceivedRequest {
      const record: ReceivedRequest = { seq: ++seq, ...entry, status: 0 };
      entries.push(record);
      if (entries.length >= max + slack) trim();
      return record;
    },
    clear(): void {
      entries.length = 0;
    },
  };
}

export type Recorder = ReturnType<typeof createRecorder>;
