/**
 * The squid fixture against plain undici requests (not opcli): a request forwarded and one tunnelled
 * to a TLS gateway both show in squid's access log, basic auth, a proxy refusing CONNECT, and a dead
 * proxy refusing the connection.
 */
import { request as httpRequest } from 'node:http';
import { ProxyAgent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { deadProxy, type Echo, makeCa, missingInfra, type Nginx, type Squid, startEcho, startNginx, startSquid, type TestCa } from './index.js';

const missing = missingInfra('squid', 'nginx', 'openssl');

describe.skipIf(missing)('squid fixture', () => {
  let echo: Echo;
  let ca: TestCa;
  let gateway: Nginx;
  let proxy: Squid;
  let authProxy: Squid;
  let noTunnel: Squid;
  const dispatchers: ProxyAgent[] = [];

  beforeAll(async () => {
    [echo, ca] = await Promise.all([startEcho(), makeCa()]);
    [gateway, proxy, authProxy, noTunnel] = await Promise.all([
      startNginx({ upstream: echo.url, tls: ca }),
      startSquid(),
      startSquid({ auth: { user: 'merchant', password: 'p@ss word:1' } }),
      startSquid({ refuseConnect: true }),
    ]);
  });
  afterAll(async () => {
    // Some are closed by their test already.
    await Promise.all(dispatchers.map((d) => d.close().catch(() => {})));
    // squid takes about 2 s to stop: all at once.
    await Promise.allSettled([gateway, proxy, authProxy, noTunnel].map((s) => s?.stop()));
    await echo?.close();
    ca?.cleanup();
  });

  function via(options: ProxyAgent.Options): ProxyAgent {
    const made = new ProxyAgent(options);
    dispatchers.push(made);
    return made;
  }

  test('a plain request is forwarded: the upstream sees squid, the access log shows it', async () => {
    const res = await request(`${echo.url}/forwarded?x=1`, { dispatcher: via({ uri: proxy.url, proxyTunnel: false }) });
    expect(res.statusCode).toBe(200);
    const seen = (await res.body.json()) as { url: string; headers: Record<string, string> };
    expect(seen.url).toBe('/forwarded?x=1');
    expect(seen.headers.via).toMatch(/opcli-test-proxy/);
    const [entry] = await proxy.waitForAccessLog(1, (e) => e.url.endsWith('/forwarded?x=1'));
    expect(entry).toMatchObject({ method: 'GET', url: `${echo.url}/forwarded?x=1`, status: 200, result: 'TCP_MISS', hierarchy: 'HIER_DIRECT', user: '' });
  });

  test('CONNECT tunnels to the TLS gateway on a loopback port: logged by squid when the tunnel closes, and by nginx', async () => {
    const dispatcher = via({ uri: proxy.url, requestTls: { ca: ca.caPem } });
    const res = await request(`${gateway.url}/tunnelled`, { dispatcher });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    await dispatcher.close();
    const [entry] = await proxy.waitForAccessLog(1, (e) => e.method === 'CONNECT');
    expect(entry).toMatchObject({ url: `127.0.0.1:${gateway.port}`, status: 200, result: 'TCP_TUNNEL', hierarchy: 'HIER_DIRECT' });
    expect(await gateway.waitForAccessLog(1, (e) => e.uri === '/tunnelled')).toHaveLength(1);
  });

  /** A request in the absolute form through `proxy`, by node:http (undici's ProxyAgent throws on a 407). */
  function forward(squid: Squid, url: string, credentials?: string): Promise<{ status: number; authenticate: string | undefined }> {
    const headers: Record<string, string> = credentials ? { 'proxy-authorization': `Basic ${Buffer.from(credentials).toString('base64')}` } : {};
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: squid.port, path: url, headers, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, authenticate: res.headers['proxy-authenticate'] as string | undefined }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  test('basic auth: 407 without or with wrong credentials, through with them, the user logged', async () => {
    const without = await forward(authProxy, `${echo.url}/auth/none`);
    expect(without.status).toBe(407);
    expect(without.authenticate).toMatch(/^Basic realm="opcli test proxy"/);
    expect((await forward(authProxy, `${echo.url}/auth/wrong`, 'merchant:nope')).status).toBe(407);
    const right = await request(`${echo.url}/auth/right`, { dispatcher: via({ uri: authProxy.urlWithAuth, proxyTunnel: false }) });
    expect(right.statusCode).toBe(200);
    await right.body.dump();

    const log = await authProxy.waitForAccessLog(3, (e) => e.url.includes('/auth/'));
    expect(log.map((e) => [e.url.replace(echo.url, ''), e.status, e.result, e.user])).toEqual([
      ['/auth/none', 407, 'TCP_DENIED', ''],
      ['/auth/wrong', 407, 'TCP_DENIED', 'merchant'],
      ['/auth/right', 200, 'TCP_MISS', 'merchant'],
    ]);
    expect(echo.requests.filter((r) => r.url.startsWith('/auth/')).map((r) => r.url)).toEqual(['/auth/right']);
  });

  test('a proxy refusing CONNECT answers 403 and nothing reaches the gateway', async () => {
    await expect(request(`${gateway.url}/refused`, { dispatcher: via({ uri: noTunnel.url, requestTls: { ca: ca.caPem } }) })).rejects.toThrow(/403/);
    const [entry] = await noTunnel.waitForAccessLog(1);
    expect(entry).toMatchObject({ method: 'CONNECT', status: 403, result: 'TCP_DENIED', hierarchy: 'HIER_NONE' });
    expect(gateway.accessLog().filter((e) => e.uri === '/refused')).toEqual([]);
  });

  test('a dead proxy refuses the connection', async () => {
    const dead = await deadProxy();
    await expect(request(`${echo.url}/dead`, { dispatcher: via({ uri: dead.url }) })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
