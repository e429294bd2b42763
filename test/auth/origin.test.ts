/**
 * Issue 27, item 1: credentials belong to the origin that issued them. After a login at sandbox A,
 * the base URL is moved (OPCLI_BASE_URL, `config set base-url`) to server B, a loopback server that
 * records everything and answers 401 `invalid_token` (which used to make opcli refresh there too):
 * B must receive nothing, the command exits 4 naming both origins and the way on.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { CredentialStore } from '../../src/config/credentials.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { authSuite, get, leakedSecrets, locationOf, opcli, rememberStored, secrets } from './util.js';

let sandbox: Sandbox;
let dir: string;
authSuite((s) => ({ sandbox, dir } = s), { sandbox: () => ({ autoApprove: true }), loggedIn: false });

/** Server B: records every request (headers and body) and answers 401 invalid_token. */
interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
let serverB: Server;
let received: Recorded[];
let urlB: string;

beforeEach(async () => {
  received = [];
  serverB = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' });
      res.end(JSON.stringify({ error: 'invalid_token', message: 'who are you?' }));
    });
  });
  await new Promise<void>((resolve) => serverB.listen(0, '127.0.0.1', resolve));
  const address = serverB.address();
  urlB = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterEach(async () => {
  await new Promise<void>((resolve) => serverB.close(() => resolve()));
});

function stored(profile = 'default') {
  return JSON.parse(readFileSync(`${dir}/credentials.json`, 'utf8')).profiles[profile] as {
    clientSecret?: string;
    clientSecretOrigin?: string;
    token?: { accessToken: string; refreshToken?: string; origin?: string; tokenUrl?: string; expiresAt?: number };
  };
}

async function browserLogin(): Promise<void> {
  const res = await opcli(dir, ['auth', 'login'], {
    openBrowser: async (url) => {
      await get(await locationOf(url));
    },
  });
  expect(res.code).toBe(0);
  await rememberStored(dir);
}

async function expireStored(): Promise<void> {
  const store = await CredentialStore.open(dir);
  await store.update('default', (cur) => ({ ...cur, token: cur.token && { ...cur.token, expiresAt: Date.now() - 1000, obtainedAt: Date.now() - 3600_000 } }));
}

/** Every secret of the login and the app, none of which B may see, nor any output. */
function assertNothingLeaked(): void {
  const all = JSON.stringify(received);
  for (const secret of secrets) if (secret.length >= 6) expect(all).not.toContain(secret);
  expect(leakedSecrets()).toEqual([]);
}

describe('a login belongs to the origin that issued it', () => {
  test('browser login: OPCLI_BASE_URL and `config set base-url` pointing at another server send it nothing', async () => {
    await browserLogin();
    const a = sandbox.url;
    expect(stored().token).toMatchObject({ origin: a, tokenUrl: `${a}/v1/oauth/token` });
    expect(stored().clientSecretOrigin).toBe(a);

    const viaEnv = await opcli(dir, ['orders', 'list'], { env: { OPCLI_BASE_URL: urlB } });
    expect(viaEnv.code).toBe(4);
    expect(viaEnv.stderr).toContain(`was issued by ${a}, but the base URL is now ${urlB} (from OPCLI_BASE_URL)`);
    expect(viaEnv.stderr).toContain('opcli auth login');
    expect(viaEnv.stderr).toContain('opcli auth logout');
    expect(viaEnv.stderr).toContain('unset OPCLI_BASE_URL');
    // `auth status` says where the login belongs, and that it is not used here.
    const status = await opcli(dir, ['auth', 'status'], { env: { OPCLI_BASE_URL: urlB } });
    expect(status.code).toBe(4);
    expect(status.stdout).toContain(`Issued by\t${a} (not the base URL: not used)`);
    expect(status.stderr).toContain(`is logged in at ${a}, not at its base URL ${urlB}`);
    expect((await opcli(dir, ['auth', 'status'])).stdout).toContain(`Issued by\t${a}\n`);
    // The forced refresh is refused the same way, before its POST.
    const refresh = await opcli(dir, ['auth', 'refresh'], { env: { OPCLI_BASE_URL: urlB } });
    expect(refresh.code).toBe(4);
    expect(received).toEqual([]);

    const set = await opcli(dir, ['config', 'set', 'base-url', urlB]);
    expect(set.code).toBe(0);
    expect(set.stderr).toContain(`Warning: the login of profile "default" was issued by ${a}; it does not apply to ${urlB}`);
    expect(set.stderr).toContain(`Warning: the client secret of profile "default" was stored for ${a}`);
    const viaSetting = await opcli(dir, ['orders', 'list']);
    expect(viaSetting.code).toBe(4);
    expect(viaSetting.stderr).toContain(`was issued by ${a}, but the base URL is now ${urlB} (the profile's base-url setting)`);
    expect(viaSetting.stderr).toContain(`opcli config set base-url ${a}`);
    // A new browser login there is refused before the browser opens: the client secret is A's.
    let opened = false;
    const login = await opcli(dir, ['auth', 'login'], {
      openBrowser: async () => {
        opened = true;
      },
    });
    expect(login.code).toBe(4);
    expect(login.stderr).toContain(`The client secret of profile "default" was stored for ${a}, but the base URL is now ${urlB}`);
    expect(opened).toBe(false);
    expect(received).toEqual([]);

    // Back at A, the login works as before.
    expect((await opcli(dir, ['config', 'set', 'base-url', a])).code).toBe(0);
    expect((await opcli(dir, ['orders', 'list'])).code).toBe(0);
    assertNothingLeaked();
  });

  test('an expired login is not refreshed at the other server (no POST /v1/oauth/token there), nor at A; OPCLI_TOKEN alone goes there', async () => {
    await browserLogin();
    await expireStored();
    const res = await opcli(dir, ['orders', 'list'], { env: { OPCLI_BASE_URL: urlB } });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain(`was issued by ${sandbox.url}`);
    expect(received).toEqual([]);
    expect(sandbox.counters.refreshes).toBe(0);
    // OPCLI_TOKEN is exempt (given for this run): the other server gets that token, and only that.
    const envToken = 'svc_at_passed_for_this_run_only';
    const withEnv = await opcli(dir, ['orders', 'list'], { env: { OPCLI_BASE_URL: urlB, OPCLI_TOKEN: envToken } });
    expect(withEnv.code).toBe(4);
    expect(received.map((r) => [r.method, r.url.split('?')[0], r.headers.authorization])).toEqual([['GET', '/v1/orders', `Bearer ${envToken}`]]);
    expect(withEnv.stderr).toContain('OPCLI_TOKEN');
    expect(withEnv.stderr).not.toContain(envToken);
    expect(sandbox.counters.refreshes).toBe(0);
    assertNothingLeaked();
  });

  test('client credentials: neither the token nor the re-run grant (with the secret) goes to the other server', async () => {
    const login = await opcli(dir, ['auth', 'login', '--client-credentials', '--store-id', sandbox.store.storeId]);
    expect(login.code).toBe(0);
    await rememberStored(dir);
    expect(stored().token).toMatchObject({ origin: sandbox.url, tokenUrl: `${sandbox.url}/v1/oauth/token` });
    const fresh = await opcli(dir, ['orders', 'list'], { env: { OPCLI_BASE_URL: urlB } });
    expect(fresh.code).toBe(4);
    await expireStored();
    const expired = await opcli(dir, ['orders', 'list'], { env: { OPCLI_BASE_URL: urlB } });
    expect(expired.code).toBe(4);
    expect(expired.stderr).toContain(`was issued by ${sandbox.url}, but the base URL is now ${urlB}`);
    // Logging in there with the secret stored for A is refused too.
    const again = await opcli(dir, ['auth', 'login', '--client-credentials', '--store-id', sandbox.store.storeId], { env: { OPCLI_BASE_URL: urlB } });
    expect(again.code).toBe(4);
    expect(again.stderr).toContain(`was stored for ${sandbox.url}, but the base URL is now ${urlB}`);
    expect(received).toEqual([]);
    assertNothingLeaked();
  });

  test('logout with the base URL moved deletes the login here and sends nothing to the other server', async () => {
    await browserLogin();
    const res = await opcli(dir, ['auth', 'logout'], { env: { OPCLI_BASE_URL: urlB } });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`was not revoked: the login belongs to ${sandbox.url} and the base URL is ${urlB}`);
    expect(stored()?.token).toBeUndefined();
    expect(received).toEqual([]);
    // With the old login gone, a login at B is the way on (the secret is A's, so B gets nothing yet).
    assertNothingLeaked();
  });
});

describe('a two-step login belongs to the server it was started at', () => {
  test('--complete with the base URL moved sends the code and verifier nowhere, even with OPCLI_CLIENT_SECRET', async () => {
    const start = await opcli(dir, ['auth', 'login', '--no-browser', '--json']);
    expect(start.code).toBe(0);
    const redirect = await locationOf(JSON.parse(start.stdout).authorize_url);
    const env = { OPCLI_BASE_URL: urlB, OPCLI_CLIENT_SECRET: sandbox.client.clientSecret };
    const done = await opcli(dir, ['auth', 'login', '--complete', '--stdin'], { env, stdin: redirect });
    expect(done.code).toBe(4);
    expect(done.stderr).toContain(`was started at ${sandbox.url}, but the base URL is now ${urlB}`);
    expect(done.stderr).toContain('that login is still waiting');
    expect(received).toEqual([]);
    expect(stored()?.token).toBeUndefined();
    // Back at the server it was started at, the same address completes it.
    const back = await opcli(dir, ['auth', 'login', '--complete', '--stdin'], { stdin: redirect });
    expect(back.code).toBe(0);
    expect(stored()?.token).toMatchObject({ origin: sandbox.url });
    await rememberStored(dir);
    assertNothingLeaked();
  });
});

describe('credentials stored by an older opcli (no origin recorded)', () => {
  /** A login as an older opcli stored it: the token pair without origin or token endpoint. */
  async function oldFormatLogin(): Promise<void> {
    const tokens = sandbox.issueTokens({});
    secrets.add(tokens.access_token);
    secrets.add(tokens.refresh_token);
    const store = await CredentialStore.open(dir);
    await store.update('default', (cur) => ({
      ...cur,
      clientSecretOrigin: undefined,
      providerTokenOrigin: undefined,
      token: {
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token,
        expiresAt: Date.now() + 3600_000,
        scopes: tokens.scope.split(' '),
        grant: 'authorization_code',
        obtainedAt: Date.now(),
      },
    }));
  }

  test('work against their own base-url, are bound to it when it changes, and are never sent to an OPCLI_BASE_URL override', async () => {
    await oldFormatLogin();
    expect(stored().token?.origin).toBeUndefined();
    expect(stored().clientSecretOrigin).toBeUndefined();
    expect((await opcli(dir, ['orders', 'list'])).code).toBe(0);
    // An override is not the server that issued it: refused, nothing sent.
    const override = await opcli(dir, ['orders', 'list'], { env: { OPCLI_BASE_URL: urlB } });
    expect(override.code).toBe(4);
    expect(override.stderr).toContain(`was issued by ${sandbox.url}, but the base URL is now ${urlB}`);
    // Changing the setting first writes the old origin into them, then warns.
    const set = await opcli(dir, ['config', 'set', 'base-url', urlB]);
    expect(set.stderr).toContain(`was issued by ${sandbox.url}; it does not apply to ${urlB}`);
    expect(stored().token).toMatchObject({ origin: sandbox.url, tokenUrl: `${sandbox.url}/v1/oauth/token` });
    expect(stored().clientSecretOrigin).toBe(sandbox.url);
    expect((await opcli(dir, ['orders', 'list'])).code).toBe(4);
    expect(received).toEqual([]);
    expect((await opcli(dir, ['config', 'set', 'base-url', sandbox.url])).code).toBe(0);
    expect((await opcli(dir, ['orders', 'list'])).code).toBe(0);
    assertNothingLeaked();
  });

  test('a refresh binds them to the origin they were refreshed at', async () => {
    await oldFormatLogin();
    await expireStored();
    expect((await opcli(dir, ['orders', 'list'])).code).toBe(0);
    expect(sandbox.counters.refreshes).toBe(1);
    await rememberStored(dir);
    expect(stored().token).toMatchObject({ origin: sandbox.url, tokenUrl: `${sandbox.url}/v1/oauth/token` });
  });
});
