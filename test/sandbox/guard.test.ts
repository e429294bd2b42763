/**
 * The sandbox is for its own user (issue 38 row 11): the admin API needs the run's secret, every
 * request must name a loopback host (DNS rebinding), admin writes take JSON only, and no request
 * from another origin (a web page) is served. Refused requests change nothing and are not recorded.
 */
import { request as httpRequest } from 'node:http';
import { describe, expect, test } from 'vitest';
import { isLoopbackHostHeader } from '../../src/sandbox/guard.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { admin, call, sandboxSuite } from './client.js';

let sb: Sandbox;
let token: string;
sandboxSuite((s) => ({ sb, token } = s), { token: true });

/** One request with headers a browser or a rebinding page would send, Host included (node:http sends it as given). */
function raw(path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; text: string }> {
  const { port } = new URL(sb.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const secrets = () => [sb.client.clientSecret, sb.store.providerToken, sb.adminSecret, token];
const port = () => new URL(sb.url).port;

describe('the admin API needs the run secret', () => {
  test('GET /__admin/state without it, or with another, is 401 and shows no secret; with it, 200', async () => {
    const tries: Record<string, string>[] = [{}, { authorization: 'Bearer sbx_admin_guess' }, { authorization: `Basic ${sb.adminSecret}` }];
    for (const headers of tries) {
      const res = await call(`${sb.url}/__admin/state`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toContain('Bearer');
      for (const secret of secrets()) expect(res.text).not.toContain(secret);
    }
    const ok = await admin(sb, '/__admin/state');
    expect(ok.status).toBe(200);
    expect(ok.body.client.clientSecret).toBe(sb.client.clientSecret);
  });

  test('every admin route is refused without it, and nothing changes', async () => {
    const routes: [string, string][] = [
      ['GET', '/__admin/requests'],
      ['GET', '/__admin/counters'],
      ['GET', '/__admin/claims'],
      ['POST', '/__admin/tokens'],
      ['POST', '/__admin/session-tokens'],
      ['POST', '/__admin/reset-log'],
      ['PUT', '/__admin/faults'],
      ['POST', '/__admin/configure'],
    ];
    for (const [method, path] of routes) {
      const res = await call(`${sb.url}${path}`, { method, json: method === 'GET' ? undefined : path.endsWith('faults') ? [{ path: '/', status: 500 }] : {} });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
    expect((await call(`${sb.url}/v1/orders?size=1`, { token })).status).toBe(200);
    expect(sb.counters.tokensIssued).toBe(1);
  });

  test('each sandbox has its own secret', async () => {
    const { startSandbox } = await import('../../src/sandbox/index.js');
    const other = await startSandbox();
    try {
      expect(other.adminSecret).not.toBe(sb.adminSecret);
      expect((await call(`${other.url}/__admin/counters`, { headers: { authorization: `Bearer ${sb.adminSecret}` } })).status).toBe(401);
    } finally {
      await other.close();
    }
  });
});

describe('Host must name this machine (DNS rebinding)', () => {
  test('a foreign Host is 421 for the API, the consent page and the admin API (even with the secret); nothing recorded', async () => {
    for (const host of [
      `evil.example:${port()}`,
      'evil.example',
      `127.0.0.1.evil.example:${port()}`,
      `localhost.evil.example:${port()}`,
      `10.0.0.1:${port()}`,
    ]) {
      const api = await raw('/v1/orders?size=1', { headers: { host, authorization: `Bearer ${token}` } });
      expect(api.status, host).toBe(421);
      expect(api.text).toContain('misdirected_request');
      for (const secret of secrets()) expect(api.text).not.toContain(secret);
      expect((await raw('/v1/oauth/authorize', { headers: { host } })).status).toBe(421);
      expect((await raw('/__admin/state', { headers: { host, authorization: `Bearer ${sb.adminSecret}` } })).status).toBe(421);
    }
    expect(sb.requests).toHaveLength(0);
  });

  test('localhost, 127.0.0.1 and [::1], with the port or without, are served', async () => {
    for (const host of [`localhost:${port()}`, `LOCALHOST:${port()}`, `127.0.0.1:${port()}`, `[::1]:${port()}`, 'localhost']) {
      expect((await raw('/v1/orders?size=1', { headers: { host, authorization: `Bearer ${token}` } })).status, host).toBe(200);
    }
  });

  test('the Host rule over spellings', () => {
    for (const host of ['localhost:1', '127.0.0.1:65535', '[::1]', '[::1]:8787']) expect(isLoopbackHostHeader(host), host).toBe(true);
    for (const host of [
      undefined,
      '',
      'localhost:65536',
      'localhost:',
      '127.1',
      '0x7f.0.0.1',
      'user@127.0.0.1',
      '127.0.0.1 ',
      '[::ffff:127.0.0.1]',
      'localhost.',
    ]) {
      expect(isLoopbackHostHeader(host), String(host)).toBe(false);
    }
  });
});

describe('no other origin, and admin writes in JSON only', () => {
  test('POST /__admin/configure as text/plain with a foreign Origin (a web page) is refused and changes nothing', async () => {
    const body = JSON.stringify({ accessTokenTtl: 5, autoApprove: true });
    const page = await raw('/__admin/configure', {
      method: 'POST',
      headers: { host: `127.0.0.1:${port()}`, origin: 'http://evil.example', 'content-type': 'text/plain' },
      body,
    });
    expect(page.status).toBe(403);
    // Even with the secret: a foreign Origin is 403; text/plain is 415.
    const auth = { authorization: `Bearer ${sb.adminSecret}` };
    expect((await admin(sb, '/__admin/configure', { body, headers: { ...auth, origin: 'http://evil.example' } })).status).toBe(403);
    expect((await admin(sb, '/__admin/configure', { body, headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    expect((await admin(sb, '/__admin/configure', { body, headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(415);
    expect(sb.issueTokens().expires_in).toBe(3600);
    // The sandbox's own origin, JSON and the secret: accepted.
    expect((await admin(sb, '/__admin/configure', { body, headers: { origin: sb.url } })).status).toBe(200);
    expect(sb.issueTokens().expires_in).toBe(5);
  });

  test('a foreign Origin is refused on the API and the consent decision too; null as well', async () => {
    for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${Number(port()) + 1}`, `https://127.0.0.1:${port()}`]) {
      expect((await call(`${sb.url}/v1/orders?size=1`, { token, headers: { origin } })).status, origin).toBe(403);
      const decision = await call(`${sb.url}/v1/oauth/authorize/decision`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'request_id=x&decision=approve',
      });
      expect(decision.status, origin).toBe(403);
    }
    for (const origin of [sb.url, `http://localhost:${port()}`, `http://[::1]:${port()}`]) {
      expect((await call(`${sb.url}/v1/orders?size=1`, { token, headers: { origin } })).status, origin).toBe(200);
    }
  });
});
