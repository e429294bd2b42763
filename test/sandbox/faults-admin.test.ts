import { describe, expect, test, vi } from 'vitest';
import { manualClock, type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { createRateLimiter } from '../../src/sandbox/rate-limit.js';
import { runOpcli, tempConfigDir } from '../helpers.js';
import { admin, call, claimBody, clientFields, sandboxSuite } from './client.js';

let sb: Sandbox;
let token: string;
sandboxSuite((s) => ({ sb, token } = s), { token: true });

const postClaim = () => call(`${sb.url}/v1/claims/offline`, { json: claimBody(sb.store.storeId), token });
const listOrders = () => call(`${sb.url}/v1/orders?size=1`, { token });

describe('faults', () => {
  test('status before: answers the fault, nothing changes on the server, Retry-After sent', async () => {
    sb.setFaults([{ method: 'POST', path: '/v1/claims', status: 503, retryAfter: 2 }]);
    const res = await postClaim();
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    expect(res.body.error).toBe('fault_injected');
    expect(sb.counters.claimsCreated).toBe(0);
    expect(sb.requests.at(-1)).toMatchObject({ path: '/v1/claims/offline', status: 503 });
    expect((await listOrders()).status).toBe(200);
  });

  test('status after: the claim is created, the answer is lost', async () => {
    sb.setFaults([{ path: '/v1/claims/offline', phase: 'after', status: 502 }]);
    const res = await postClaim();
    expect(res.status).toBe(502);
    expect(sb.counters.claimsCreated).toBe(1);
    expect(sb.claims).toHaveLength(1);
  });

  test('drop before: the socket is destroyed, status 0 recorded, nothing created', async () => {
    sb.setFaults([{ path: '/v1/claims/offline', drop: true, count: 1 }]);
    await expect(postClaim()).rejects.toThrow();
    expect(sb.counters.claimsCreated).toBe(0);
    expect(sb.requests.at(-1)).toMatchObject({ path: '/v1/claims/offline', status: 0 });
    expect((await postClaim()).status).toBe(200);
  });

  test('drop after: the claim exists though the client saw the connection die', async () => {
    sb.setFaults([{ path: '/v1/claims/offline', drop: true, phase: 'after' }]);
    await expect(postClaim()).rejects.toThrow();
    expect(sb.counters.claimsCreated).toBe(1);
    expect(sb.requests.at(-1)?.status).toBe(0);
  });

  test('latency delays the answer', async () => {
    const clock = manualClock();
    const clocked = await startSandbox({ clock });
    try {
      clocked.setFaults([{ path: '/v1/orders', latencyMs: 150 }]);
      let answered = false;
      const pending = call(`${clocked.url}/v1/orders?size=1`, { token: clocked.issueTokens().access_token }).then((res) => {
        answered = true;
        return res;
      });
      await vi.waitFor(() => expect(clock.pending).toBe(1));
      clock.advance(149);
      expect(clock.pending).toBe(1);
      expect(answered).toBe(false);
      clock.advance(1);
      expect((await pending).status).toBe(200);
    } finally {
      await clocked.close();
    }
  });

  test('after and count: skip the first N, then hit at most M, then spent', async () => {
    sb.setFaults([{ path: '/v1/orders', status: 429, retryAfter: 1, after: 2, count: 2 }]);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await listOrders()).status);
    expect(statuses).toEqual([200, 200, 429, 429, 200, 200]);
  });

  test('rate 0 never hits; a regex path and the method filter select', async () => {
    sb.setFaults([
      { path: '/v1/orders', status: 500, rate: 0 },
      { method: 'PUT', path: '/^\\/v1\\/orders\\/ord_\\d+$/', status: 500 },
    ]);
    expect((await listOrders()).status).toBe(200);
    const put = await call(`${sb.url}/v1/orders/ord_000001`, {
      method: 'PUT',
      json: { sourceOrderNumber: '#1', currency: 'USD' },
      token,
    });
    expect(put.status).toBe(500);
    expect(sb.counters.ordersUpdated).toBe(0);
  });

  test('the first matching rule wins; setFaults replaces the rules', async () => {
    sb.setFaults([
      { path: '/v1/orders', status: 503 },
      { path: '/v1', status: 500 },
    ]);
    expect((await listOrders()).status).toBe(503);
    expect((await postClaim()).status).toBe(500);
    sb.setFaults([]);
    expect((await listOrders()).status).toBe(200);
  });
});

describe('admin HTTP', () => {
  test('faults over HTTP; admin calls are neither recorded nor faulted', async () => {
    const put = await admin(sb, '/__admin/faults', { method: 'PUT', json: [{ path: '/', status: 500 }] });
    expect(put.status).toBe(200);
    expect((await listOrders()).status).toBe(500);
    const counters = await admin(sb, '/__admin/counters');
    expect(counters.status).toBe(200);
    expect(counters.body.claimsCreated).toBe(0);
    const bad = await admin(sb, '/__admin/faults', { method: 'PUT', json: [{ status: 500 }] });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('0.path');
    await admin(sb, '/__admin/faults', { method: 'PUT', json: [] });
    expect((await listOrders()).status).toBe(200);
    expect(sb.requests.map((r) => r.path)).toEqual(['/v1/orders', '/v1/orders']);
  });

  test('requests are recorded with method, path, query, headers, body and status; ?path= filters', async () => {
    await listOrders();
    await postClaim();
    const all = await admin(sb, '/__admin/requests');
    expect(all.body).toHaveLength(2);
    expect(all.body[0]).toMatchObject({ seq: 1, method: 'GET', path: '/v1/orders', query: { size: '1' }, status: 200, body: '' });
    expect(all.body[0].headers.authorization).toBe(`Bearer ${token}`);
    expect(JSON.parse(all.body[1].body).storeId).toBe(sb.store.storeId);
    const filtered = await admin(sb, '/__admin/requests?path=/v1/claims');
    expect(filtered.body.map((r: { path: string }) => r.path)).toEqual(['/v1/claims/offline']);
  });

  test('reset-log forgets requests and zeroes counters, but state stays', async () => {
    await postClaim();
    const held = sb.counters;
    const res = await admin(sb, '/__admin/reset-log', { method: 'POST' });
    expect(res.status).toBe(200);
    expect(sb.requests).toHaveLength(0);
    expect(held.claimsCreated).toBe(0);
    expect(held.creditsPosted.native).toBe(0);
    expect(sb.claims).toHaveLength(1);
    expect(sb.isAccessTokenValid(token)).toBe(true);
  });

  test('configure changes the token lifetime and auto-approve', async () => {
    const res = await admin(sb, '/__admin/configure', { json: { accessTokenTtl: 120, autoApprove: true } });
    expect(res.status).toBe(200);
    expect(sb.issueTokens().expires_in).toBe(120);
    const bad = await admin(sb, '/__admin/configure', { json: { accessTokenTtl: 'long' } });
    expect(bad.status).toBe(400);
  });

  test('state and tokens endpoints serve out-of-process tests', async () => {
    const state = await admin(sb, '/__admin/state');
    expect(state.body).toMatchObject({ url: sb.url, client: sb.client, store: sb.store, otherStoreId: sb.otherStoreId });
    const tokens = await admin(sb, '/__admin/tokens', { json: { scopes: ['read_orders'] } });
    expect(tokens.body.scope).toBe('read_orders');
    expect(sb.isAccessTokenValid(tokens.body.access_token)).toBe(true);
  });

  test('the recorder keeps at most maxRecorded requests, oldest dropped', async () => {
    const small = await startSandbox({ maxRecorded: 3 });
    try {
      const t = small.issueTokens().access_token;
      for (let i = 1; i <= 5; i++) await call(`${small.url}/v1/orders?size=${i}`, { token: t });
      expect(small.requests.map((r) => r.query.size)).toEqual(['3', '4', '5']);
      expect(small.requests.map((r) => r.seq)).toEqual([3, 4, 5]);
    } finally {
      await small.close();
    }
  });
});

describe('lifecycle', () => {
  test('close() ends open keep-alive connections promptly and frees the port', async () => {
    const other = await startSandbox();
    await call(`${other.url}/v1/orders`);
    // Resolves although a keep-alive connection is open (the test's own timeout is the bound).
    await other.close();
    await expect(call(`${other.url}/v1/orders`)).rejects.toThrow();
  });
});

describe('rate limit (token bucket per access token)', () => {
  test('the bucket refills at the rate, holds a burst, and says how long to wait', () => {
    let t = 0;
    const limiter = createRateLimiter(() => t);
    limiter.set({ perSecond: 4, burst: 2, headers: 'both' });
    expect(limiter.take('a')).toMatchObject({ allowed: true, headers: { 'ratelimit-limit': '2', 'ratelimit-remaining': '1', 'x-ratelimit-remaining': '1' } });
    expect(limiter.take('a')?.allowed).toBe(true);
    const refused = limiter.take('a');
    expect(refused).toMatchObject({ allowed: false, waitMs: 250, headers: { 'retry-after': '1', 'ratelimit-remaining': '0', 'ratelimit-reset': '1' } });
    expect(limiter.take('b')?.allowed).toBe(true);
    t += 250;
    expect(limiter.take('a')?.allowed).toBe(true);
    expect(limiter.take('a')?.allowed).toBe(false);
    t += 10_000;
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a')].map((d) => d?.allowed)).toEqual([true, true, false]);
    limiter.set({ perSecond: 4, burst: 2, retryAfter: false });
    limiter.take('a');
    limiter.take('a');
    expect(limiter.take('a')).toEqual({ allowed: false, headers: {}, waitMs: 250 });
    limiter.set(null);
    expect(limiter.take('a')).toBeNull();
  });

  test('answers 429 with Retry-After beyond the limit, per token, and leaves the token endpoint alone', async () => {
    await sb.close();
    sb = await startSandbox({ rateLimit: { perSecond: 3 } });
    token = sb.issueTokens().access_token;
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await listOrders());
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    const refused = answers[3];
    expect(refused?.headers['retry-after']).toBe('1');
    expect(refused?.body.error).toBe('rate_limited');
    expect(refused?.headers['ratelimit-limit']).toBeUndefined();
    expect(sb.requests.at(-1)).toMatchObject({ path: '/v1/orders', status: 429 });
    // Another token has its own bucket; a refused POST created nothing.
    const other = sb.issueTokens().access_token;
    expect((await call(`${sb.url}/v1/orders?size=1`, { token: other })).status).toBe(200);
    expect((await postClaim()).status).toBe(429);
    expect(sb.counters.claimsCreated).toBe(0);
    const grant = await call(`${sb.url}/v1/oauth/token`, {
      json: { grant_type: 'client_credentials', ...clientFields(sb), store_id: sb.store.storeId },
    });
    expect(grant.status).toBe(200);
  });

  test('configure sets the limit without Retry-After and with headers, removes it, and adds latency', async () => {
    const configure = (body: unknown) => admin(sb, '/__admin/configure', { json: body });
    expect((await configure({ rateLimit: { perSecond: 1, retryAfter: false, headers: 'ietf' } })).status).toBe(200);
    const first = await listOrders();
    expect(first.status).toBe(200);
    expect(first.headers).toMatchObject({ 'ratelimit-limit': '1', 'ratelimit-remaining': '0' });
    const second = await listOrders();
    expect(second.status).toBe(429);
    expect(second.headers['retry-after']).toBeUndefined();
    expect(second.headers['ratelimit-reset']).toBe('1');
    expect((await configure({ rateLimit: null })).status).toBe(200);
    expect((await listOrders()).status).toBe(200);
    const bad = await configure({ rateLimit: { perSecond: 0 } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('rateLimit.perSecond');
    // The latency it adds is a timer of the sandbox's clock: a manual one here, so nothing waits for real.
    const clock = manualClock();
    const clocked = await startSandbox({ clock });
    try {
      expect((await admin(clocked, '/__admin/configure', { json: { latencyMs: 60 } })).status).toBe(200);
      const pending = call(`${clocked.url}/v1/orders?size=1`, { token: clocked.issueTokens().access_token });
      await vi.waitFor(() => expect(clock.pending).toBe(1));
      expect(clocked.requests.at(-1)).toMatchObject({ path: '/v1/orders', status: 0 });
      clock.advance(59);
      expect(clocked.requests.at(-1)?.status).toBe(0);
      clock.advance(1);
      expect((await pending).status).toBe(200);
    } finally {
      await clocked.close();
    }
  });
});

describe('opcli sandbox rate and latency flags', () => {
  test.each([
    [['--rate-limit', 'fast'], '--rate-limit "fast" is not a rate'],
    [['--rate-limit', '40/s', '--rate-limit-burst', '0'], '--rate-limit-burst'],
    [['--rate-limit', '40/s', '--rate-limit-headers', 'github'], '--rate-limit-headers "github" is not a style'],
    [['--latency', '50'], '--latency'],
  ])('refuses %j with exit 2 before starting', async (args, message) => {
    const { dir, cleanup } = tempConfigDir();
    try {
      const r = await runOpcli(['sandbox', ...args], { env: { OPCLI_CONFIG_DIR: dir } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stdout).toBe('');
    } finally {
      cleanup();
    }
  });
});
