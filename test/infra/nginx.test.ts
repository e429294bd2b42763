/**
 * The nginx and CA fixtures against plain undici requests (not opcli): TLS with the throwaway CA,
 * nginx's rate limiter, redirects, an upstream switched off and frozen, keep-alive, and an access
 * log that shows which requests reached the gateway.
 */
import { X509Certificate } from 'node:crypto';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { blackhole, type Echo, startUpstreamSwitch, makeCa, missingInfra, type Nginx, type NginxOptions, startEcho, startNginx, type TestCa } from './index.js';

const missing = missingInfra('nginx', 'openssl');

describe.skipIf(missing)('nginx fixture', () => {
  let echo: Echo;
  let ca: TestCa;
  const gateways: Nginx[] = [];
  const agents: Agent[] = [];

  beforeAll(async () => {
    [echo, ca] = await Promise.all([startEcho(), makeCa({ name: 'opcli infra test CA' })]);
  });
  afterAll(async () => {
    await Promise.allSettled([...gateways.map((g) => g.stop()), ...agents.map((a) => a.close())]);
    await echo?.close();
    ca?.cleanup();
  });

  async function gateway(options: Partial<NginxOptions> = {}): Promise<Nginx> {
    const started = await startNginx({ upstream: echo.url, ...options });
    gateways.push(started);
    return started;
  }
  function agent(options: Agent.Options = {}): Agent {
    const made = new Agent(options);
    agents.push(made);
    return made;
  }
  async function get(url: string, dispatcher: Agent) {
    const res = await request(url, { dispatcher });
    return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
  }

  test('the CA signs a server certificate for 127.0.0.1 and localhost', () => {
    const cert = new X509Certificate(ca.certPem);
    expect(cert.subjectAltName).toContain('DNS:localhost');
    expect(cert.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(cert.issuer).toContain('CN=opcli infra test CA');
    expect(cert.checkIssued(new X509Certificate(ca.caPem))).toBe(true);
  });

  test('TLS answers when the CA is trusted and fails the handshake when not; only the trusted request is logged', async () => {
    const gw = await gateway({ tls: ca });
    expect(gw.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);

    await expect(request(`${gw.url}/tls/untrusted`, { dispatcher: agent() })).rejects.toMatchObject({ code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
    const trusted = await get(`${gw.url}/tls/trusted?page=2`, agent({ connect: { ca: ca.caPem } }));
    expect(trusted.status).toBe(200);
    expect(JSON.parse(trusted.body)).toMatchObject({ method: 'GET', url: '/tls/trusted?page=2', headers: { 'x-forwarded-proto': 'https' } });

    const log = await gw.waitForAccessLog(1);
    expect(log).toEqual([expect.objectContaining({ method: 'GET', uri: '/tls/trusted?page=2', status: 200, upstreamStatus: '200' })]);
    expect(log[0]!.requestTime).toBeGreaterThanOrEqual(0);
    expect(echo.requests.map((r) => r.url).filter((u) => u.startsWith('/tls/'))).toEqual(['/tls/trusted?page=2']);
  });

  test('the sandbox behind the TLS gateway: its answer comes through and it records the request', async () => {
    const sandbox = await startSandbox();
    try {
      const gw = await gateway({ upstream: sandbox.url, tls: ca });
      const res = await get(`${gw.url}/v1/orders?size=5`, agent({ connect: { ca: ca.caPem } }));
      expect(res.status).toBe(401);
      expect(sandbox.requests.map((r) => [r.method, r.path])).toContainEqual(['GET', '/v1/orders']);
      expect(await gw.waitForAccessLog(1)).toEqual([expect.objectContaining({ uri: '/v1/orders?size=5', status: 401, upstreamStatus: '401' })]);
    } finally {
      await sandbox.close();
    }
  });

  test('limit_req refuses a burst above the rate with the configured status, and a reload changes it', async () => {
    const gw = await gateway({ limitReq: { rate: '1r/s', status: 429 } });
    const burst = async (path: string) => {
      const pool = agent({ connections: 8 });
      return (await Promise.all(Array.from({ length: 8 }, (_, i) => get(`${gw.url}${path}?i=${i}`, pool)))).map((r) => r.status);
    };
    const first = await burst('/limited/429');
    expect(first).toContain(200);
    expect(first).toContain(429);
    expect(first.every((s) => s === 200 || s === 429)).toBe(true);
    const log = await gw.waitForAccessLog(8);
    expect(log.filter((e) => e.status === 429).every((e) => e.limitReq === 'REJECTED' && e.upstreamStatus === '')).toBe(true);

    // nginx's default refusal status, and its HTML page.
    await gw.reconfigure({ limitReq: { rate: '1r/s' } });
    const second = await burst('/limited/503');
    expect(second).toContain(503);
    expect(second.every((s) => s === 200 || s === 503)).toBe(true);
    const refused = await get(`${gw.url}/limited/503-page`, agent());
    expect(refused).toMatchObject({ status: 503, body: expect.stringContaining('<title>503 Service Temporarily Unavailable</title>') });
    // Every request the upstream saw passed the limiter.
    const passed = gw.accessLog().filter((e) => e.uri.startsWith('/limited/') && e.status === 200).length;
    expect(echo.requests.filter((r) => r.url.startsWith('/limited/'))).toHaveLength(passed);
  });

  test('redirects answer 301/302/307/308 with their Location and never reach the upstream', async () => {
    const statuses = [301, 302, 307, 308] as const;
    const gw = await gateway({ redirects: statuses.map((status) => ({ path: `/moved-${status}/`, status, to: 'https://elsewhere.test$request_uri' })) });
    const pool = agent();
    for (const status of statuses) {
      const res = await get(`${gw.url}/moved-${status}/v1/orders?size=5`, pool);
      expect(res.status).toBe(status);
      expect(res.headers.location).toBe(`https://elsewhere.test/moved-${status}/v1/orders?size=5`);
    }
    expect(echo.requests.filter((r) => r.url.startsWith('/moved-'))).toEqual([]);
    expect((await gw.waitForAccessLog(4)).map((e) => e.status)).toEqual([...statuses]);
  });

  test('the upstream switched off gives 502 and on again 200; a frozen upstream gives 504 after proxyReadTimeout', async () => {
    const hole = await blackhole();
    try {
      const gw = await gateway({ proxyReadTimeout: '200ms' });
      const pool = agent();
      expect((await get(`${gw.url}/outage/before`, pool)).status).toBe(200);
      await gw.upstreamDown();
      const down = await get(`${gw.url}/outage/down`, pool);
      expect(down).toMatchObject({ status: 502, body: expect.stringContaining('<title>502 Bad Gateway</title>') });
      await gw.upstreamUp();
      expect((await get(`${gw.url}/outage/after`, pool)).status).toBe(200);
      await gw.reconfigure({ upstream: hole.url });
      expect((await get(`${gw.url}/outage/frozen`, pool)).status).toBe(504);
      expect(hole.accepted()).toBe(1);

      const log = await gw.waitForAccessLog(4);
      expect(log.map((e) => [e.uri, e.status, e.upstreamStatus])).toEqual([
        ['/outage/before', 200, '200'],
        ['/outage/down', 502, '502'],
        ['/outage/after', 200, '200'],
        ['/outage/frozen', 504, '504'],
      ]);
      expect(echo.requests.filter((r) => r.url.startsWith('/outage/')).map((r) => r.url)).toEqual(['/outage/before', '/outage/after']);
    } finally {
      await hole.close();
    }
  });

  test('an upstream switch: refused (502) and frozen (504) with the client connection kept, the frozen request delivered on up()', async () => {
    const upstream = await startUpstreamSwitch(echo.url);
    try {
      const gw = await gateway({ upstream: upstream.url, proxyReadTimeout: '200ms' });
      const pool = agent({ connections: 1 });
      expect((await get(`${gw.url}/switch/before`, pool)).status).toBe(200);
      await upstream.down();
      expect((await get(`${gw.url}/switch/down`, pool)).status).toBe(502);
      await upstream.up();
      expect((await get(`${gw.url}/switch/after`, pool)).status).toBe(200);
      await upstream.freeze();
      expect((await get(`${gw.url}/switch/frozen`, pool)).status).toBe(504);
      expect(echo.requests.map((r) => r.url)).not.toContain('/switch/frozen');
      await upstream.up();
      await vi.waitFor(() => expect(echo.requests.map((r) => r.url)).toContain('/switch/frozen'), { timeout: 5000, interval: 20 });

      const log = await gw.waitForAccessLog(4);
      expect(log.map((e) => e.status)).toEqual([200, 502, 200, 504]);
      expect(new Set(log.map((e) => e.connection)).size).toBe(1);
      expect(echo.requests.filter((r) => r.url.startsWith('/switch/')).map((r) => r.url)).toEqual(['/switch/before', '/switch/after', '/switch/frozen']);
    } finally {
      await upstream.close();
    }
  });

  test('a config nginx rejects: reconfigure fails with the reason nginx gives and the running config keeps serving', async () => {
    const gw = await gateway({ limitReq: { rate: '100r/s', status: 429 } });
    await expect(gw.reconfigure({ limitReq: { rate: 'fast' } })).rejects.toThrow(/invalid rate "rate=fast"/);
    expect(gw.options.limitReq?.rate).toBe('100r/s');
    expect((await get(`${gw.url}/rejected-config`, agent())).status).toBe(200);
  });

  test('keep-alive: the Keep-Alive header, and nginx closing a connection after keepaliveRequests', async () => {
    // undici does not reuse a connection whose Keep-Alive timeout is under its 2 s margin: 10 s here.
    const gw = await gateway({ keepaliveTimeout: '10s', keepaliveHeader: '10s', keepaliveRequests: 2 });
    const pool = agent({ connections: 1 });
    const first = await get(`${gw.url}/keepalive/1`, pool);
    expect(first.headers['keep-alive']).toBe('timeout=10');
    expect((await get(`${gw.url}/keepalive/2`, pool)).headers.connection).toBe('close');
    await get(`${gw.url}/keepalive/3`, pool);
    const [a, b, c] = await gw.waitForAccessLog(3);
    expect([a!.connectionRequests, b!.connectionRequests, c!.connectionRequests]).toEqual([1, 2, 1]);
    expect(b!.connection).toBe(a!.connection);
    expect(c!.connection).not.toBe(a!.connection);
  });
});
