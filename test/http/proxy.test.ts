/**
 * Proxies (issue 29): opcli goes through a real squid when HTTPS_PROXY, HTTP_PROXY or ALL_PROXY
 * (either case) or the `proxy` setting names it, reaches loopback directly unless asked, logs in to
 * a proxy with the URL's user and password without ever showing the password, and names a dead or
 * refusing proxy as an error that sent nothing.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { writeRows } from '../claims/fixtures.js';
import { runBinary, runOpcli, tempConfigDir } from '../helpers.js';
import { deadProxy, makeCa, missingInfra, type Nginx, type Squid, startNginx, startSquid, type TestCa } from '../infra/index.js';

const missing = missingInfra('squid', 'nginx', 'openssl');

describe.skipIf(missing)('through a forward proxy (squid)', () => {
  let sandbox: Sandbox;
  let ca: TestCa;
  let gateway: Nginx;
  let squid: Squid;
  let authSquid: Squid;
  let refusing: Squid;
  let token: string;
  let config: ReturnType<typeof tempConfigDir>;
  /** Retries of a refused connection wait no real time. */
  const instant = { sleep: async () => {} };
  const PROXY_VARS = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy', 'NO_PROXY', 'no_proxy'];

  beforeAll(async () => {
    [sandbox, ca] = await Promise.all([startSandbox(), makeCa()]);
    [gateway, squid, authSquid, refusing] = await Promise.all([
      startNginx({ upstream: sandbox.url, tls: ca }),
      startSquid(),
      startSquid({ auth: { user: 'merchant', password: 'p@ss word:1' } }),
      startSquid({ refuseConnect: true }),
    ]);
    token = sandbox.issueTokens({ scopes: ['read_orders', 'write_claims', 'read_claims'] }).access_token;
  });
  afterAll(async () => {
    await Promise.allSettled([gateway, squid, authSquid, refusing].map((s) => s?.stop()));
    await sandbox?.close();
    ca?.cleanup();
  });
  beforeEach(() => {
    config = tempConfigDir();
    sandbox.resetLog();
    return () => config.cleanup();
  });

  /** The run's environment: no proxy variable of the test process leaks in; OPCLI_TOKEN for `base`. */
  function env(base: string, extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
    const clean = Object.fromEntries(PROXY_VARS.map((name) => [name, undefined]));
    return { ...clean, OPCLI_CONFIG_DIR: config.dir, OPCLI_BASE_URL: base, OPCLI_TOKEN: token, OPCLI_CA_FILE: ca.caFile, ...extra };
  }

  const tunnelsTo = (url: string) => (e: { method: string; url: string }) => e.method === 'CONNECT' && e.url === new URL(url).host;

  // Each variable, with NO_PROXY unset, empty and naming another host; HTTPS_PROXY carries the https
  // gateway's requests, HTTP_PROXY the plain sandbox's, ALL_PROXY either.
  const cases = [
    ['HTTPS_PROXY', 'https'],
    ['https_proxy', 'https'],
    ['HTTP_PROXY', 'http'],
    ['http_proxy', 'http'],
    ['ALL_PROXY', 'https'],
    ['all_proxy', 'http'],
  ] as const;
  for (const [variable, scheme] of cases) {
    for (const noProxy of [undefined, '', 'example.com,.internal:8443,10.0.0.0/8']) {
      test(`${variable} (${scheme}), NO_PROXY ${JSON.stringify(noProxy)}: orders list goes through squid`, async () => {
        const base = scheme === 'https' ? gateway.url : sandbox.url;
        const before = squid.accessLog().filter(tunnelsTo(base)).length;
        const r = await runOpcli(['orders', 'list', '--size', '2', '--json'], {
          env: env(base, { [variable]: squid.url, NO_PROXY: noProxy, OPCLI_PROXY_LOOPBACK: '1' }),
        });
        expect(r.stderr).not.toMatch(/Error|Warning/);
        expect(r.code).toBe(0);
        expect(JSON.parse(r.stdout)).toHaveLength(2);
        const log = await squid.waitForAccessLog(before + 1, tunnelsTo(base));
        expect(log.at(-1)).toMatchObject({ status: 200, result: 'TCP_TUNNEL' });
      });
    }
  }

  // The bundle, not src/: the proxy agent is a chunk of its own loaded on first use, which the
  // in-process tests (importing src/) never load.
  test('built binary: HTTPS_PROXY, orders list goes through squid', async () => {
    const before = squid.accessLog().filter(tunnelsTo(gateway.url)).length;
    const r = await runBinary(['orders', 'list', '--size', '2', '--json'], {
      env: env(gateway.url, { HTTPS_PROXY: squid.url, OPCLI_PROXY_LOOPBACK: '1' }),
    });
    expect(r.stderr).not.toMatch(/Error|Warning/);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(2);
    const log = await squid.waitForAccessLog(before + 1, tunnelsTo(gateway.url));
    expect(log.at(-1)).toMatchObject({ status: 200, result: 'TCP_TUNNEL' });
  });

  test('a claims batch goes through the proxy: every row filed, squid logged the tunnel', async () => {
    const rows = join(config.dir, 'rows.csv');
    writeRows(rows, 5);
    await runOpcli(['config', 'set', 'store-id', sandbox.store.storeId], { env: { OPCLI_CONFIG_DIR: config.dir } });
    const r = await runOpcli(['claims', 'file', '--from', rows, '--jsonl'], { env: env(sandbox.url, { HTTP_PROXY: squid.url, OPCLI_PROXY_LOOPBACK: '1' }) });
    expect(r.stderr).toContain('Filed 5 claims');
    expect(r.code).toBe(0);
    expect(
      r.stdout
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('{"summary"'))
        .map((l) => JSON.parse(l).status),
    ).toEqual(Array(5).fill('filed'));
    await squid.waitForAccessLog(1, tunnelsTo(sandbox.url));
  });

  test('a client-credentials login goes through the proxy set in the profile', async () => {
    const setup = { OPCLI_CONFIG_DIR: config.dir };
    for (const [key, value] of [
      ['base-url', gateway.url],
      ['proxy', squid.url],
      ['proxy-loopback', 'true'],
      ['ca-file', ca.caFile],
      ['client-id', sandbox.client.clientId],
      ['store-id', sandbox.store.storeId],
    ]) {
      expect((await runOpcli(['config', 'set', key as string, value as string], { env: setup })).code).toBe(0);
    }
    expect((await runOpcli(['config', 'set', 'client-secret', '--stdin'], { env: setup, stdin: sandbox.client.clientSecret })).code).toBe(0);
    const before = squid.accessLog().filter(tunnelsTo(gateway.url)).length;
    const login = await runOpcli(['auth', 'login', '--client-credentials'], { env: setup });
    expect(login.stderr).not.toContain('Error');
    expect(login.code).toBe(0);
    await squid.waitForAccessLog(before + 1, tunnelsTo(gateway.url));
    // auth status --check says which proxy and why.
    const status = await runOpcli(['auth', 'status', '--check', '--json'], { env: setup });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout).connection).toBe(`through the proxy ${squid.url} (the proxy setting)`);
  });

  test('loopback is reached directly by default, even with a dead proxy set; --verbose says why', async () => {
    const dead = await deadProxy();
    const r = await runOpcli(['--verbose', 'orders', 'list', '--size', '1', '--json'], { env: env(sandbox.url, { HTTP_PROXY: dead.url }) });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`* ${sandbox.url}: direct (127.0.0.1 is loopback; set proxy-loopback to true to send it through ${dead.url})`);
  });

  test('NO_PROXY matching the host (with its port, or a CIDR range) goes direct; --verbose names the entry', async () => {
    const port = new URL(sandbox.url).port;
    for (const entry of [`127.0.0.1:${port}`, '127.0.0.0/8']) {
      const dead = await deadProxy();
      const r = await runOpcli(['--verbose', 'orders', 'list', '--size', '1', '--json'], {
        env: env(sandbox.url, { HTTP_PROXY: dead.url, NO_PROXY: `example.com,${entry}`, OPCLI_PROXY_LOOPBACK: '1' }),
      });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain(`direct (NO_PROXY matched "${entry}")`);
    }
  });

  test('a proxy with basic auth: the user and password of the URL, never shown in --verbose', async () => {
    const r = await runOpcli(['--verbose', 'orders', 'list', '--size', '1', '--json'], {
      env: env(sandbox.url, { HTTP_PROXY: authSquid.urlWithAuth, OPCLI_PROXY_LOOPBACK: '1' }),
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`through the proxy http://merchant:***@127.0.0.1:${authSquid.port} (HTTP_PROXY)`);
    expect(r.stderr).not.toMatch(/p@ss|p%40ss/);
    const [entry] = await authSquid.waitForAccessLog(1, (e) => e.method === 'CONNECT');
    expect(entry).toMatchObject({ status: 200, user: 'merchant' });
  });

  test('a dead proxy: an error naming it (password masked), nothing sent, a single claim "was not filed"', async () => {
    const dead = await deadProxy();
    const proxyUrl = `http://merchant:s3cret-pw@127.0.0.1:${new URL(dead.url).port}`;
    const list = await runOpcli(['orders', 'list'], {
      ...instant,
      env: env(sandbox.url, { HTTPS_PROXY: proxyUrl, HTTP_PROXY: proxyUrl, OPCLI_PROXY_LOOPBACK: '1' }),
    });
    expect(list.code).toBe(1);
    expect(list.stdout).toBe('');
    expect(list.stderr).toContain(`could not connect to the proxy http://merchant:***@127.0.0.1:${new URL(dead.url).port} (HTTP_PROXY) (ECONNREFUSED)`);
    expect(list.stderr).not.toContain('s3cret-pw');

    const template = await runOpcli(['claims', 'template', '--json'], { env: { OPCLI_CONFIG_DIR: config.dir } });
    const data = join(config.dir, 'claim.json');
    writeFileSync(data, template.stdout);
    const claim = await runOpcli(['claims', 'file', '--data', data, '--store-id', sandbox.store.storeId], {
      ...instant,
      env: env(sandbox.url, { HTTP_PROXY: proxyUrl, OPCLI_PROXY_LOOPBACK: '1' }),
    });
    expect(claim.code).toBe(1);
    expect(claim.stderr).toContain('The claim was not filed');
    expect(claim.stderr).not.toMatch(/may or may not|s3cret-pw/);
    expect(sandbox.requests).toEqual([]);
  });

  test('a proxy refusing CONNECT: named with its status, not retried, nothing reached the service', async () => {
    const r = await runOpcli(['orders', 'list'], { ...instant, env: env(sandbox.url, { HTTP_PROXY: refusing.url, OPCLI_PROXY_LOOPBACK: '1' }) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the proxy ${refusing.url} (HTTP_PROXY) answered 403 when asked to connect to 127.0.0.1:${new URL(sandbox.url).port}`);
    expect(r.stderr).not.toContain('retrying');
    expect(await refusing.waitForAccessLog(1)).toHaveLength(1);
    expect(sandbox.requests).toEqual([]);
  });

  test('a batch with --wait-for-service through a proxy refusing CONNECT: no wait for the service, the refusal named, exit 1', async () => {
    const rows = join(config.dir, 'rows.csv');
    writeRows(rows, 12);
    await runOpcli(['config', 'set', 'store-id', sandbox.store.storeId], { env: { OPCLI_CONFIG_DIR: config.dir } });
    const proxied = env(sandbox.url, { HTTP_PROXY: refusing.url, OPCLI_PROXY_LOOPBACK: '1' });
    const r = await runOpcli(['claims', 'file', '--from', rows, '--concurrency', '4', '--wait-for-service', '30s'], { ...instant, env: proxied });
    expect(r.code).toBe(1);
    // The proxy's refusal is this side's setup, not the service down (before, it waited "the service refused connections").
    expect(r.stderr).not.toContain('looks down');
    expect(r.stderr).toContain(`Error: POST ${sandbox.url}/v1/claims/offline was not sent: the proxy ${refusing.url} (HTTP_PROXY) answered 403`);
    expect(r.stderr).toMatch(/0 uncertain, \d+ not sent/);
    expect(r.stdout).toBe('');
    expect(sandbox.requests).toEqual([]);
  });

  test('an untrusted certificate behind the proxy: named with its issuer and the proxy, nothing reached nginx', async () => {
    const before = gateway.accessLog().length;
    const r = await runOpcli(['orders', 'list'], {
      ...instant,
      env: env(gateway.url, { HTTPS_PROXY: squid.url, OPCLI_PROXY_LOOPBACK: '1', OPCLI_CA_FILE: undefined }),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the certificate of 127.0.0.1:${gateway.port} (through the proxy ${squid.url}) is not trusted`);
    expect(r.stderr).toContain(`issued by "CN=${ca.name}`);
    expect(r.stderr).not.toContain('retrying');
    expect(gateway.accessLog()).toHaveLength(before);
  });

  test('bad input: a proxy URL that does not parse is exit 2 naming the variable; a NO_PROXY entry that matches nothing warns', async () => {
    const bad = await runOpcli(['orders', 'list'], { env: env(sandbox.url, { HTTPS_PROXY: 'http://user:pw@[bad' }) });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('HTTPS_PROXY');
    expect(bad.stderr).not.toContain('pw@');
    const socks = await runOpcli(['orders', 'list'], { env: env(sandbox.url, { ALL_PROXY: 'socks5://127.0.0.1:1080' }) });
    expect(socks.code).toBe(2);
    expect(socks.stderr).toContain('ALL_PROXY "socks5://127.0.0.1:1080" is a socks5 proxy');
    const set = await runOpcli(['config', 'set', 'proxy', 'http://u:secret@proxy.example:3128'], { env: { OPCLI_CONFIG_DIR: config.dir } });
    expect(set.code).toBe(2);
    expect(set.stderr).not.toContain('secret@');

    const warned = await runOpcli(['orders', 'list', '--size', '1', '--json'], {
      env: env(sandbox.url, { HTTP_PROXY: squid.url, NO_PROXY: 'example.com,10.0.0.0/40,http://x' }),
    });
    expect(warned.code).toBe(0);
    expect(warned.stderr).toContain('Warning: NO_PROXY entry "10.0.0.0/40" cannot match any host');
    expect(warned.stderr).toContain('Warning: NO_PROXY entry "http://x" cannot match any host');
    expect(warned.stderr).not.toContain('"example.com"');
  });
});
