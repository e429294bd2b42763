import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceApi } from '../../src/api/service.js';
import { oauthEndpoints } from '../../src/oauth/endpoints.js';
import { ApiError, isOutcomeUncertain, NetworkError, TimeoutError, UsageError } from '../../src/core/errors.js';
import { createAdaptiveLimiter } from '../../src/http/adaptive.js';
import { HttpClient } from '../../src/http/client.js';
import { sessionContext } from '../examples.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A loopback server whose answers the test scripts, one handler per request in order. */
async function scriptedServer(handlers: ((req: IncomingMessage, res: ServerResponse) => void)[]) {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers, 'x-port': String(req.socket.remotePort) }, body });
      const handler = handlers[seen.length - 1] ?? ((_q, r) => json(r, 500, { error: 'no more scripted answers' }));
      handler(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  servers.push(server);
  return { url, seen };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A client with a fake clock: sleeps are recorded and advance time instead of waiting. */
function client(baseUrl: string, extra: Partial<ConstructorParameters<typeof HttpClient>[0]> = {}) {
  let t = 1_000_000;
  const sleeps: number[] = [];
  const trace: string[] = [];
  const http = new HttpClient({
    baseUrl,
    userAgent: 'opcli/test',
    tokens: { get: async () => 'svc_at_testtoken123' },
    sleep: async (ms) => {
      sleeps.push(ms);
      t += ms;
    },
    now: () => t,
    random: () => 0.5,
    trace: (line) => trace.push(line),
    ...extra,
  });
  return { http, sleeps, trace };
}

const ok = (_q: IncomingMessage, r: ServerResponse) => json(r, 200, { status: 'ok' });

/** A token source holding 'svc_at_old' that refreshes to 'svc_at_fresh'; `sent` lists the tokens it was asked to replace. */
function refreshingTokens() {
  const sent: string[] = [];
  const tokens = {
    get: async () => 'svc_at_old',
    refreshAfterUnauthorized: async (stale: string) => {
      sent.push(stale);
      return 'svc_at_fresh';
    },
  };
  return { tokens, sent };
}

describe('on the bundled undici Agent', () => {
  describe('retry policy of idempotent requests', () => {
    it('retries GET on 503 and 502 with backoff, then succeeds', async () => {
      const srv = await scriptedServer([(_q, r) => json(r, 503, {}), (_q, r) => json(r, 502, {}), ok]);
      const { http, sleeps } = client(srv.url);
      const res = await http.request({ method: 'GET', url: '/v1/orders' });
      expect(res.status).toBe(200);
      expect(res.attempts).toBe(3);
      expect(srv.seen).toHaveLength(3);
      expect(sleeps).toHaveLength(2);
      expect(sleeps[1]).toBeGreaterThan(sleeps[0] as number);
    });

    it('honours Retry-After in seconds and as an HTTP date', async () => {
      const srv = await scriptedServer([
        (_q, r) => json(r, 429, {}, { 'retry-after': '3' }),
        (_q, r) => json(r, 503, {}, { 'retry-after': new Date(1_000_000 + 3000 + 7000).toUTCString() }),
        ok,
      ]);
      const { http, sleeps } = client(srv.url);
      await http.request({ method: 'PUT', url: '/v1/orders/o1', json: { a: 1 } });
      expect(sleeps[0]).toBe(3000);
      // The date is 7 s after the clock at the second answer; HTTP dates have whole seconds.
      expect(sleeps[1]).toBeGreaterThanOrEqual(6000);
      expect(sleeps[1]).toBeLessThanOrEqual(7000);
      expect(srv.seen.map((s) => s.method)).toEqual(['PUT', 'PUT', 'PUT']);
    });

    it('caps a huge Retry-After', async () => {
      const srv = await scriptedServer([(_q, r) => json(r, 429, {}, { 'retry-after': '86400' }), ok]);
      const { http, sleeps } = client(srv.url, { maxRetryAfterMs: 5000 });
      await http.request({ method: 'GET', url: '/x' });
      expect(sleeps).toEqual([5000]);
    });

    it('retries a GET whose connection was dropped', async () => {
      const srv = await scriptedServer([(q) => q.socket.destroy(), ok]);
      const { http } = client(srv.url);
      const res = await http.request({ method: 'GET', url: '/v1/orders' });
      expect(res.status).toBe(200);
      expect(srv.seen).toHaveLength(2);
    });

    it('gives up after the retry budget with the last error', async () => {
      const srv = await scriptedServer(Array(10).fill((_q: IncomingMessage, r: ServerResponse) => json(r, 503, { message: 'down' })));
      const { http } = client(srv.url, { maxRetries: 2 });
      const err = await http.request({ method: 'GET', url: '/v1/orders' }).catch((e) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(503);
      expect(srv.seen).toHaveLength(3);
    });

    it('a 429 pauses every request of the client, not only the one that got it', async () => {
      const srv = await scriptedServer([(_q, r) => json(r, 429, {}, { 'retry-after': '2' }), ok, ok]);
      const { http, sleeps } = client(srv.url);
      await http.request({ method: 'GET', url: '/a' });
      // The pause is over for the clock (sleep advanced it), so the next call goes straight out.
      await http.request({ method: 'GET', url: '/b' });
      expect(sleeps).toEqual([2000]);
      expect(srv.seen.map((s) => s.url)).toEqual(['/a', '/a', '/b']);
    });
  });

  describe('POST is never resent when its fate is unknown', () => {
    it('does not resend after a 500, and calls the outcome uncertain', async () => {
      const srv = await scriptedServer([(_q, r) => json(r, 500, { message: 'boom' }), ok]);
      const { http } = client(srv.url);
      const err = await http.request({ method: 'POST', url: '/v1/claims/offline', json: { a: 1 } }).catch((e) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(isOutcomeUncertain(err)).toBe(true);
      expect(srv.seen).toHaveLength(1);
    });

    it('does not resend after a 502 or 503 either', async () => {
      const srv = await scriptedServer([(_q, r) => json(r, 503, {}, { 'retry-after': '1' }), ok]);
      const { http } = client(srv.url);
      await expect(http.request({ method: 'POST', url: '/v1/claims/offline', json: {} })).rejects.toBeInstanceOf(ApiError);
      expect(srv.seen).toHaveLength(1);
    });

    it("a 502 says the gateway could not reach the service or lost it: probably not processed, but it may have been; a GET's 502 stays plain", async () => {
      const page = (_q: IncomingMessage, r: ServerResponse) => {
        r.writeHead(502, { 'content-type': 'text/html' });
        r.end(
          '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx/1.22.1</center></body></html>',
        );
      };
      const srv = await scriptedServer([page, page, page]);
      const { http } = client(srv.url, { maxRetries: 1 });
      const post = await http.request({ method: 'POST', url: '/v1/giftcards', json: {} }).catch((e) => e);
      expect(isOutcomeUncertain(post)).toBe(true);
      expect(post.message).toBe(
        'POST /v1/giftcards failed: the server answered 502 Bad Gateway. The gateway in front of the service could not reach it or lost it mid-request: ' +
          "the request was probably not processed, but may have been; check before sending it again. If your gateway answers 502 only before it forwards a request, add 502 to the profile's not-processed-statuses.",
      );
      const get = await http.request({ method: 'GET', url: '/v1/orders' }).catch((e) => e);
      expect(get.message).toBe('GET /v1/orders failed: the server answered 502 Bad Gateway.');
      expect(srv.seen).toHaveLength(3);
    });

    it('does not resend after a timeout', async () => {
      const srv = await scriptedServer([() => {}, ok]);
      const { http } = client(srv.url);
      const err = await http.request({ method: 'POST', url: '/v1/claims/offline', json: {}, timeoutMs: 300 }).catch((e) => e);
      expect(err).toBeInstanceOf(TimeoutError);
      expect(isOutcomeUncertain(err)).toBe(true);
      expect(srv.seen).toHaveLength(1);
    });

    it('does not resend after a connection reset mid-request', async () => {
      const srv = await scriptedServer([(q) => q.socket.destroy(), ok]);
      const { http } = client(srv.url);
      const err = await http.request({ method: 'POST', url: '/v1/claims/offline', json: {} }).catch((e) => e);
      expect(err).toBeInstanceOf(NetworkError);
      expect((err as NetworkError).sent).toBe(true);
      expect(srv.seen).toHaveLength(1);
    });

    it('resends after a 429: the server refused it before doing anything', async () => {
      const srv = await scriptedServer([(_q, r) => json(r, 429, {}, { 'retry-after': '1' }), ok]);
      const { http, sleeps } = client(srv.url);
      const res = await http.request({ method: 'POST', url: '/v1/claims/offline', json: {} });
      expect(res.status).toBe(200);
      expect(srv.seen).toHaveLength(2);
      expect(sleeps).toEqual([1000]);
    });

    it('resends after connection refused: it provably never arrived', async () => {
      const srv = await scriptedServer([]);
      const closedUrl = srv.url;
      await new Promise((r) => servers.pop()?.close(r));
      const { http, sleeps } = client(closedUrl, { maxRetries: 2 });
      const err = await http.request({ method: 'POST', url: '/v1/claims/offline', json: {} }).catch((e) => e);
      expect(err).toBeInstanceOf(NetworkError);
      expect((err as NetworkError).sent).toBe(false);
      expect(isOutcomeUncertain(err)).toBe(false);
      expect(sleeps).toHaveLength(2);
    });
  });

  describe('rawBody: a 2xx body left as text', () => {
    it('returns a 2xx JSON body as its text, and still reads an error body in any shape', async () => {
      const page = { edges: [{ node: { id: 'o1' } }], pageInfo: { hasNextPage: false } };
      const srv = await scriptedServer([
        (_q, r) => json(r, 200, page),
        (_q, r) => json(r, 422, { errors: [{ message: 'size must be at most 250' }] }),
        (_q, r) => {
          r.writeHead(400, { 'content-type': 'text/plain' });
          r.end('bad cursor');
        },
      ]);
      const { http, trace } = client(srv.url);
      const ok200 = await http.request({ method: 'GET', url: '/v1/orders', rawBody: true });
      expect(typeof ok200.body).toBe('string');
      expect(JSON.parse(ok200.body as string)).toEqual(page);
      const shaped = await http.request({ method: 'GET', url: '/v1/orders', rawBody: true }).catch((e: unknown) => e);
      expect(shaped).toBeInstanceOf(ApiError);
      expect((shaped as ApiError).status).toBe(422);
      expect((shaped as ApiError).message).toContain('size must be at most 250');
      const plain = await http.request({ method: 'GET', url: '/v1/orders', rawBody: true }).catch((e: unknown) => e);
      expect((plain as ApiError).status).toBe(400);
      expect((plain as ApiError).message).toContain('bad cursor');
      // --verbose still shows the 2xx body, read as JSON.
      expect(trace.some((line) => line.includes('"edges":[{"node":{"id":"o1"}}]'))).toBe(true);
    });
  });

  describe('credentials and headers', () => {
    it('refuses to send anything to a plain-http host that is not loopback (a *.localhost name included)', async () => {
      const { http } = client('http://api.example.com');
      await expect(http.request({ method: 'GET', url: '/v1/orders' })).rejects.toBeInstanceOf(UsageError);
      await expect(http.request({ method: 'GET', url: 'http://10.0.0.1/v1/orders' })).rejects.toThrow(/only https/);
      // A *.localhost name is loopback for the proxy's bypass, but a resolver may send it elsewhere (RFC 6761 §6.3).
      await expect(http.request({ method: 'GET', url: 'http://opcli.localhost/v1/orders' })).rejects.toThrow(/only https/);
    });

    it('attaches the bearer token, but never on the token and session-verify endpoints', async () => {
      const tokenBody = { access_token: 'svc_at_new', token_type: 'Bearer', expires_in: 3600, refresh_token: 'svc_rt_new', scope: 'read_orders' };
      const srv = await scriptedServer([ok, (_q, r) => json(r, 200, tokenBody), (_q, r) => json(r, 200, sessionContext)]);
      const { http } = client(srv.url);
      const api = createServiceApi(http);
      await api.updateOrder('o1', { sourceOrderNumber: '1', currency: 'USD' });
      await oauthEndpoints(http, srv.url).token({
        grant_type: 'refresh_token',
        client_id: 'svc_app_1',
        client_secret: 'svc_secret_1',
        refresh_token: 'svc_rt_old',
      });
      await api.verifySession('jwt.session.token');
      expect(srv.seen[0]?.headers.authorization).toBe('Bearer svc_at_testtoken123');
      expect(srv.seen[1]?.headers.authorization).toBeUndefined();
      expect(srv.seen[1]?.headers['content-type']).toBe('application/json');
      expect(srv.seen[2]?.headers.authorization).toBeUndefined();
      expect(srv.seen[0]?.headers['user-agent']).toMatch(/^opcli\//);
    });

    it('refreshes once after a 401 and resends with the new token', async () => {
      const srv = await scriptedServer([(_q, r) => json(r, 401, { error: 'invalid_token' }), ok]);
      const { tokens, sent } = refreshingTokens();
      const { http } = client(srv.url, { tokens });
      await http.request({ method: 'POST', url: '/v1/claims/offline', json: {} });
      expect(sent).toEqual(['svc_at_old']);
      expect(srv.seen.map((s) => s.headers.authorization)).toEqual(['Bearer svc_at_old', 'Bearer svc_at_fresh']);
    });

    it('does not refresh after a 401 that is not about the access token', async () => {
      const srv = await scriptedServer([(_q, r) => json(r, 401, { error: 'invalid_client' }), ok]);
      const { tokens, sent } = refreshingTokens();
      const { http } = client(srv.url, { tokens });
      const err = (await http.request({ method: 'GET', url: '/v1/orders' }).catch((e) => e)) as ApiError;
      expect(err.status).toBe(401);
      expect(sent).toEqual([]);
      expect(srv.seen).toHaveLength(1);
    });

    it('traces without any secret', async () => {
      const srv = await scriptedServer([
        (_q, r) => json(r, 200, { access_token: 'svc_at_secretAAA', token_type: 'Bearer', expires_in: 3600, refresh_token: 'svc_rt_secretBBB', scope: '' }),
      ]);
      const { http, trace } = client(srv.url);
      await oauthEndpoints(http, srv.url).token({
        grant_type: 'authorization_code',
        client_id: 'svc_app_1',
        client_secret: 'svc_secret_CCC',
        code: 'authcodeDDD',
        redirect_uri: 'http://127.0.0.1:5000/callback',
        code_verifier: 'verifierEEEverifierEEEverifierEEEverifierEEE',
      });
      const all = trace.join('\n');
      expect(all).toContain('POST');
      expect(all).toContain('< 200');
      for (const secret of ['svc_at_secretAAA', 'svc_rt_secretBBB', 'svc_secret_CCC', 'authcodeDDD', 'verifierEEE']) expect(all).not.toContain(secret);
    });

    it('names the missing scope on a 403 and exits 4', async () => {
      const srv = await scriptedServer([(_q, r) => json(r, 403, { error: 'insufficient_scope', required_scope: 'read_orders' })]);
      const { http } = client(srv.url);
      const err = (await http.request({ method: 'PUT', url: '/v1/orders/o1', json: {} }).catch((e) => e)) as ApiError;
      expect(err.message).toContain('read_orders');
      expect(err.exitCode).toBe(4);
      expect(err.hint).toContain('--scopes read_orders');
    });

    it('lists field errors of a 400 and exits 2', async () => {
      const srv = await scriptedServer([(_q, r) => json(r, 400, { error: 'invalid_request', errors: [{ path: 'item.price', message: 'expected number' }] })]);
      const { http } = client(srv.url);
      const err = (await http.request({ method: 'POST', url: '/v1/claims/offline', json: {} }).catch((e) => e)) as ApiError;
      expect(err.exitCode).toBe(2);
      expect(err.message).toContain('item.price: expected number');
    });
  });

  describe('the wire (undici keep-alive pool)', () => {
    it('reuses one connection for requests in sequence', async () => {
      const srv = await scriptedServer([ok, ok, ok]);
      const { http } = client(srv.url);
      for (let i = 0; i < 3; i++) await http.request({ method: 'GET', url: '/v1/orders' });
      const ports = new Set(srv.seen.map((s) => s.headers['x-port']));
      expect(srv.seen).toHaveLength(3);
      expect(srv.seen.every((s) => s.headers.connection === 'keep-alive')).toBe(true);
      expect(ports.size).toBe(1);
      await http.close();
    });

    it('reads a body that arrives in pieces, with repeated headers joined', async () => {
      const srv = await scriptedServer([
        (_q, r) => {
          r.writeHead(200, [
            ['content-type', 'application/json'],
            ['x-note', 'a'],
            ['x-note', 'b'],
          ]);
          r.write('{"edges":[1,');
          setTimeout(() => r.end('2,3],"é":"ü"}'), 20);
        },
      ]);
      const { http } = client(srv.url);
      const res = await http.request({ method: 'GET', url: '/v1/orders' });
      expect(res.body).toEqual({ edges: [1, 2, 3], é: 'ü' });
      expect(res.headers['x-note']).toBe('a, b');
      await http.close();
    });

    it('a body that stops arriving is a timeout, and a GET is tried again', async () => {
      const srv = await scriptedServer([
        (_q, r) => {
          r.writeHead(200, { 'content-type': 'application/json' });
          r.write('{"partial":');
        },
        ok,
      ]);
      const { http, sleeps } = client(srv.url);
      const res = await http.request({ method: 'GET', url: '/v1/orders', timeoutMs: 150 });
      expect(res.body).toEqual({ status: 'ok' });
      expect(srv.seen).toHaveLength(2);
      expect(sleeps).toHaveLength(1);
      await http.close();
    });

    it('a POST whose answer is cut mid-body is never resent and is reported as uncertain', async () => {
      const srv = await scriptedServer([
        (q, r) => {
          r.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
          r.write('{"claim');
          setTimeout(() => q.socket.destroy(), 10);
        },
        ok,
      ]);
      const { http } = client(srv.url);
      const err = await http.request({ method: 'POST', url: '/v1/claims/offline', json: { a: 1 } }).catch((e) => e);
      expect(err).toBeInstanceOf(NetworkError);
      expect(isOutcomeUncertain(err)).toBe(true);
      expect(srv.seen).toHaveLength(1);
      expect(srv.seen[0]?.body).toBe('{"a":1}');
      await http.close();
    });

    it('stops at once when the signal aborts, without a retry', async () => {
      const srv = await scriptedServer([() => {}, ok]);
      const { http, sleeps } = client(srv.url);
      const controller = new AbortController();
      const pending = http.request({ method: 'GET', url: '/v1/orders', signal: controller.signal }).catch((e) => e);
      // Abort once the server holds the request (not after a guessed delay, which a loaded machine outran).
      while (srv.seen.length === 0) await new Promise((r) => setImmediate(r));
      controller.abort(Object.assign(new Error('Interrupted'), { name: 'AbortError' }));
      const err = await pending;
      expect((err as Error).name).toBe('AbortError');
      expect(sleeps).toHaveLength(0);
      expect(srv.seen).toHaveLength(1);
      await http.close();
    });
  });

  describe('with an adaptive limiter', () => {
    it('waits for a permit per attempt and leaves the wait after a 429 to the limiter, without a notice', async () => {
      const srv = await scriptedServer([(_q, r) => json(r, 429, {}, { 'retry-after': '2' }), ok]);
      const notices: string[] = [];
      let t = 0;
      const limiterSleeps: number[] = [];
      const limiter = createAdaptiveLimiter({
        maxConcurrency: 2,
        now: () => t,
        sleep: async (ms) => {
          limiterSleeps.push(ms);
          t += ms;
        },
      });
      const { http, sleeps } = client(srv.url, { notice: (line) => notices.push(line), now: () => t });
      const res = await http.request({ method: 'POST', url: '/v1/claims/offline', json: {}, limiter });
      expect(res.status).toBe(200);
      expect(srv.seen).toHaveLength(2);
      expect(sleeps).toEqual([]);
      expect(limiterSleeps).toEqual([2000]);
      expect(notices).toEqual([]);
      expect(limiter.snapshot()).toMatchObject({ answered: 2, refused: 1, inFlight: 0 });
    });

    it('reports a lost connection and still never resends a POST whose fate is unknown', async () => {
      const srv = await scriptedServer([(q) => q.socket.destroy(), ok]);
      const limiter = createAdaptiveLimiter({ maxConcurrency: 2, now: () => 0, sleep: async () => {} });
      const { http } = client(srv.url);
      const err = await http.request({ method: 'POST', url: '/v1/claims/offline', json: {}, limiter }).catch((e) => e);
      expect(isOutcomeUncertain(err)).toBe(true);
      expect(srv.seen).toHaveLength(1);
      expect(limiter.snapshot()).toMatchObject({ answered: 1, refused: 0, inFlight: 0 });
    });
  });

  describe('a request that cannot be built', () => {
    it('a token with a control character is never sent, not retried, and not called uncertain', async () => {
      const srv = await scriptedServer([ok]);
      const { http, sleeps } = client(srv.url, { tokens: { get: async () => 'svc_at_token\r' } });
      const err = await http.request({ method: 'POST', url: '/v1/claims/offline', json: {} }).catch((e) => e);
      expect(err).toBeInstanceOf(NetworkError);
      expect((err as NetworkError).sent).toBe(false);
      expect(isOutcomeUncertain(err)).toBe(false);
      expect((err as NetworkError).message).toContain('was not sent');
      expect((err as NetworkError).message).not.toContain('svc_at_token');
      expect(srv.seen).toHaveLength(0);
      expect(sleeps).toEqual([]);
    });
  });

  describe('redirects', () => {
    it('are not followed: the 3xx is the answer, and the target never hears of it', async () => {
      const target = await scriptedServer([ok]);
      const srv = await scriptedServer([
        (_q, r) => {
          r.writeHead(307, { location: `${target.url}/v1/orders` });
          r.end();
        },
      ]);
      const { http } = client(srv.url);
      const res = await http.request({ method: 'POST', url: '/v1/claims/offline', json: { a: 1 } }).catch((e) => e);
      expect((res as { status?: number }).status).toBe(307);
      expect(srv.seen).toHaveLength(1);
      expect(target.seen).toHaveLength(0);
      await http.close();
    });
  });
});
