import { readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, test } from 'vitest';
import { pendingPath } from '../../src/auth/pending.js';
import type { Prompter } from '../../src/cli/deps.js';
import { manualClock, type Sandbox } from '../../src/sandbox/index.js';
import { authSuite, get, leakedSecrets, locationOf, opcli, portRefuses, printed, secrets, tokenRequests } from './util.js';

let sandbox: Sandbox;
let dir: string;
authSuite((s) => ({ sandbox, dir } = s), { sandbox: () => ({ autoApprove: true }), loggedIn: false });

function stored(profile = 'default') {
  const file = JSON.parse(readFileSync(`${dir}/credentials.json`, 'utf8'));
  return file.profiles[profile]?.token as
    | { accessToken: string; refreshToken?: string; expiresAt?: number; scopes: string[]; grant: string; storeId?: string }
    | undefined;
}

/** A browser stand-in: records the authorization URL and optionally visits the callback with a chosen query. */
function fakeBrowser(visit?: (authorizeUrl: URL) => Promise<void>) {
  const seen: URL[] = [];
  const visits: Promise<void>[] = [];
  return {
    seen,
    /** Resolves when every visit has finished (opcli does not wait for the browser). */
    done: () => Promise.all(visits),
    openBrowser: async (url: string) => {
      seen.push(new URL(url));
      const visit1 = visit?.(new URL(url)) ?? Promise.resolve();
      visits.push(visit1);
      await visit1;
    },
  };
}

describe('browser login (authorization code + PKCE)', () => {
  test('follows the consent redirect to the loopback callback, exchanges the code and stores the token', async () => {
    let page: Awaited<ReturnType<typeof get>> | undefined;
    const browser = fakeBrowser(async (url) => {
      page = await get(await locationOf(url.toString()));
    });
    const res = await opcli(dir, ['auth', 'login', '--scopes', 'read_orders,read_claims'], { openBrowser: browser.openBrowser });
    expect(res.stderr).toContain('Logged in with scopes read_orders read_claims');
    expect(res.code).toBe(0);
    await browser.done();
    const auth = browser.seen[0] as URL;
    // The URL is printed on stderr as well.
    expect(res.stderr).toContain(auth.toString());
    const redirectUri = auth.searchParams.get('redirect_uri') as string;
    expect(redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
    expect(auth.searchParams.get('scope')).toBe('read_orders read_claims');
    expect(auth.searchParams.get('response_type')).toBe('code');
    expect(Buffer.from(auth.searchParams.get('state') as string, 'base64url').length).toBeGreaterThanOrEqual(16);
    // The callback page: static, no-store, no referrer, never the code.
    expect(page?.status).toBe(200);
    expect(page?.headers['cache-control']).toBe('no-store');
    expect(page?.headers['referrer-policy']).toBe('no-referrer');
    expect(page?.text).not.toMatch(/<(script|img|link)\b/);
    const [exchange] = tokenRequests(sandbox);
    expect(exchange).toMatchObject({ grant_type: 'authorization_code', client_id: sandbox.client.clientId, redirect_uri: redirectUri });
    expect(page?.text).not.toContain(exchange?.code);
    expect(exchange?.code_verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const tokenReq = sandbox.requests.find((r) => r.path === '/v1/oauth/token');
    expect(tokenReq?.headers.authorization).toBeUndefined();
    expect(tokenReq?.headers['content-type']).toMatch(/application\/json/);
    const token = stored();
    expect(token).toMatchObject({ grant: 'authorization_code', scopes: ['read_orders', 'read_claims'] });
    expect(token?.accessToken).toMatch(/^svc_at_/);
    expect(token?.refreshToken).toMatch(/^svc_rt_/);
    expect(token?.expiresAt).toBeGreaterThan(Date.now() + 3500_000);
    expect(sandbox.isAccessTokenValid(token?.accessToken as string)).toBe(true);
    // After the one redirect the listener is gone.
    expect(await portRefuses(Number(new URL(redirectUri).port))).toBe(true);
    // Files are private.
    expect(statSync(`${dir}/credentials.json`).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  test.each([
    ['a different state', (q: URLSearchParams) => q.set('state', 'forged-state-value'), /does not match this login: refused as a possible forgery/],
    ['no state', (q: URLSearchParams) => q.delete('state'), /no `state`: refused as a possible forgery/],
  ])('a stray callback with %s gets an error page and the login keeps waiting for the real one', async (_name, tamper, message) => {
    let stray: Awaited<ReturnType<typeof get>> | undefined;
    const browser = fakeBrowser(async (url) => {
      const real = new URL(await locationOf(url.toString()));
      const forged = new URL(real);
      tamper(forged.searchParams);
      // Also a code of the forger's own: it must never be exchanged.
      forged.searchParams.set('code', 'forged-code');
      stray = await get(forged.toString());
      await get(`${real.origin}/callback?state=x`);
      await get(real.toString());
    });
    const res = await opcli(dir, ['auth', 'login'], { openBrowser: browser.openBrowser });
    await browser.done();
    expect(stray?.status).toBe(400);
    expect(stray?.text).toMatch(message);
    expect(stray?.text).toContain('still waiting');
    expect(res.stderr).toContain('Ignored a request to the callback whose state does not match this login');
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('Logged in');
    const sent = tokenRequests(sandbox);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.code).not.toBe('forged-code');
    expect(stored()?.grant).toBe('authorization_code');
  });

  test.each([['no code', (q: URLSearchParams) => q.delete('code'), /no authorization code/]])(
    'a redirect with %s is refused and nothing is exchanged',
    async (_name, tamper, message) => {
      let page: Awaited<ReturnType<typeof get>> | undefined;
      const browser = fakeBrowser(async (url) => {
        const redirect = new URL(await locationOf(url.toString()));
        tamper(redirect.searchParams);
        page = await get(redirect.toString());
      });
      const res = await opcli(dir, ['auth', 'login'], { openBrowser: browser.openBrowser });
      await browser.done();
      expect(res.stderr).toMatch(message);
      expect(res.code).toBe(4);
      expect(page?.status).toBe(400);
      expect(page?.text).toMatch(message);
      expect(tokenRequests(sandbox)).toHaveLength(0);
      expect(stored()).toBeUndefined();
    },
  );

  test('an error redirect is reported in words, exit 4', async () => {
    const browser = fakeBrowser(async (url) => {
      url.searchParams.set('scope', 'read_orders not_a_scope');
      await get(await locationOf(url.toString()));
    });
    const res = await opcli(dir, ['auth', 'login'], { openBrowser: browser.openBrowser });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('The authorization was refused: a requested scope is unknown or was not granted to the app');
    expect(res.stderr).toContain('not_a_scope');
    expect(tokenRequests(sandbox)).toHaveLength(0);
  });

  test('gives up after --timeout with a clear error and closes the port', async () => {
    // The wait runs on a manual clock: the browser never answers, and the test moves the clock.
    const clock = manualClock();
    let waitingJustBefore = false;
    const browser = fakeBrowser(async (url) => {
      const port = Number(new URL(url.searchParams.get('redirect_uri') as string).port);
      clock.advance(299_999);
      waitingJustBefore = !(await portRefuses(port));
      clock.advance(1);
    });
    const res = await opcli(dir, ['auth', 'login', '--timeout', '5m'], { openBrowser: browser.openBrowser, timers: clock });
    expect(res.code).toBe(4);
    expect(waitingJustBefore).toBe(true);
    expect(res.stderr).toContain('No answer from the browser within 300 seconds; the login was stopped.');
    const port = Number(new URL(browser.seen[0]?.searchParams.get('redirect_uri') as string).port);
    expect(await portRefuses(port)).toBe(true);
  });

  test('Ctrl-C stops the wait cleanly (exit 130) and closes the port', async () => {
    // The wait (and its deadline, on a manual clock that never moves) is running while the browser
    // opens: Ctrl-C lands there, with no timer.
    const controller = new AbortController();
    const browser = fakeBrowser(async () => {
      controller.abort(Object.assign(new Error('Interrupted'), { name: 'AbortError' }));
    });
    const res = await opcli(dir, ['auth', 'login'], { openBrowser: browser.openBrowser, signal: controller.signal, timers: manualClock() });
    expect(res.code).toBe(130);
    const port = Number(new URL(browser.seen[0]?.searchParams.get('redirect_uri') as string).port);
    expect(await portRefuses(port)).toBe(true);
    expect(tokenRequests(sandbox)).toHaveLength(0);
  });

  test('--port pins the port; a busy one gets a clear message', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const busy = (blocker.address() as { port: number }).port;
    try {
      const res = await opcli(dir, ['auth', 'login', '--port', String(busy)], { openBrowser: async () => {} });
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`Port ${busy} on 127.0.0.1 is already in use`);
      expect(sandbox.requests).toHaveLength(0);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
    const browser = fakeBrowser(async (url) => {
      await get(await locationOf(url.toString()));
    });
    const res = await opcli(dir, ['auth', 'login', '--port', String(busy)], { openBrowser: browser.openBrowser });
    expect(res.code).toBe(0);
    expect(browser.seen[0]?.searchParams.get('redirect_uri')).toBe(`http://127.0.0.1:${busy}/callback`);
    expect(tokenRequests(sandbox)[0]?.redirect_uri).toBe(`http://127.0.0.1:${busy}/callback`);
  });

  test('--no-browser prints the link and opens nothing; on a terminal the user pastes the redirect address', async () => {
    const { PassThrough, Readable } = await import('node:stream');
    const { createDeps } = await import('../../src/cli/deps.js');
    const { runCli } = await import('../../src/cli/program.js');
    const stderr = new PassThrough();
    const stdout = new PassThrough();
    let err = '';
    stderr.on('data', (c) => {
      err += c.toString();
    });
    stdout.resume();
    let opened = 0;
    let askedWithSignal = false;
    let validated: true | string | undefined;
    let link: string | undefined;
    const prompter: Prompter = {
      input: async (o) => {
        askedWithSignal = o.signal instanceof AbortSignal;
        validated = o.validate?.('not a url');
        // The remote user opens the printed link; their browser cannot reach the port, so they
        // copy the address it ends on.
        link = /(http:\/\/127\.0\.0\.1:\d+\/v1\/oauth\/authorize\?\S+)/.exec(err)?.[1];
        return locationOf(link as string);
      },
      password: async () => '',
      confirm: async () => false,
      select: async () => {
        throw new Error('unexpected prompt');
      },
    };
    const deps = createDeps({
      stdin: Readable.from([]),
      stdout,
      stderr,
      stdinIsTTY: true,
      stderrIsTTY: true,
      env: { OPCLI_CONFIG_DIR: dir, HOME: process.env.HOME },
      cwd: dir,
      prompter,
      openBrowser: async () => {
        opened++;
      },
    });
    const code = await runCli(['auth', 'login', '--no-browser'], deps);
    printed.push(err);
    expect(err).toContain('Logged in');
    expect(code).toBe(0);
    expect(opened).toBe(0);
    expect(askedWithSignal).toBe(true);
    expect(validated).toMatch(/not a URL/);
    expect(stored()?.grant).toBe('authorization_code');
    const [exchange] = tokenRequests(sandbox);
    const redirectUri = new URL(link as string).searchParams.get('redirect_uri') as string;
    // The pasted code was exchanged with the same redirect_uri, though the listener never saw it.
    expect(exchange?.redirect_uri).toBe(redirectUri);
    expect(await portRefuses(Number(new URL(redirectUri).port))).toBe(true);
  });
});

describe('two-step login for scripts', () => {
  test('--no-browser --json prints the link and keeps the pending login 0600; --complete finishes it once', async () => {
    const start = await opcli(dir, ['auth', 'login', '--no-browser', '--json']);
    expect(start.code).toBe(0);
    const doc = JSON.parse(start.stdout);
    expect(Object.keys(doc)).toEqual(expect.arrayContaining(['authorize_url', 'redirect_uri', 'expires_at']));
    expect(doc.redirect_uri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(new URL(doc.authorize_url).searchParams.get('redirect_uri')).toBe(doc.redirect_uri);
    const pending = pendingPath(dir, 'default');
    expect(statSync(pending).mode & 0o777).toBe(0o600);
    secrets.add(JSON.parse(readFileSync(pending, 'utf8')).verifier);
    expect(start.stdout).not.toContain(JSON.parse(readFileSync(pending, 'utf8')).verifier);
    const redirect = await locationOf(doc.authorize_url);
    const done = await opcli(dir, ['auth', 'login', '--complete', redirect]);
    expect(done.stderr).toContain('Logged in');
    expect(done.code).toBe(0);
    expect(stored()?.grant).toBe('authorization_code');
    const [exchange] = tokenRequests(sandbox);
    expect(exchange?.redirect_uri).toBe(doc.redirect_uri);
    const again = await opcli(dir, ['auth', 'login', '--complete', redirect]);
    expect(again.code).toBe(4);
    expect(again.stderr).toContain('No login is waiting to be completed');
    expect(tokenRequests(sandbox)).toHaveLength(1);
  });

  test("--complete with another login's state is refused and nothing is exchanged", async () => {
    const start = await opcli(dir, ['auth', 'login', '--no-browser', '--json']);
    const doc = JSON.parse(start.stdout);
    const redirect = new URL(await locationOf(doc.authorize_url));
    redirect.searchParams.set('state', 'someone-elses-state');
    const done = await opcli(dir, ['auth', 'login', '--complete', redirect.toString()]);
    expect(done.code).toBe(4);
    expect(done.stderr).toContain('possible forgery');
    expect(tokenRequests(sandbox)).toHaveLength(0);
  });
});

describe('client credentials and --with-token', () => {
  test('client credentials store a token for the store; an expired one runs the grant again', async () => {
    const res = await opcli(dir, ['auth', 'login', '--client-credentials', '--store-id', sandbox.store.storeId, '--scopes', 'read_orders']);
    expect(res.code).toBe(0);
    expect(stored()).toMatchObject({ grant: 'client_credentials', storeId: sandbox.store.storeId, scopes: ['read_orders'] });
    expect(stored()?.refreshToken).toBeUndefined();
    const { CredentialStore } = await import('../../src/config/credentials.js');
    const store = await CredentialStore.open(dir);
    await store.update('default', (cur) => ({ ...cur, token: cur.token && { ...cur.token, expiresAt: Date.now() - 1000 } }));
    const first = stored()?.accessToken;
    const token = await opcli(dir, ['auth', 'token']);
    expect(token.code).toBe(0);
    expect(token.stdout.trim()).toBe(stored()?.accessToken);
    expect(token.stdout.trim()).not.toBe(first);
    const grants = tokenRequests(sandbox).map((b) => b.grant_type);
    expect(grants).toEqual(['client_credentials', 'client_credentials']);
    expect(tokenRequests(sandbox)[1]).toMatchObject({ store_id: sandbox.store.storeId, scopes: ['read_orders'] });
    expect(sandbox.counters.refreshes).toBe(0);
  });

  test('renewal runs the same grant: no scope filter when the login asked for none', async () => {
    const res = await opcli(dir, ['auth', 'login', '--client-credentials', '--store-id', sandbox.store.storeId]);
    expect(res.code).toBe(0);
    const { CredentialStore } = await import('../../src/config/credentials.js');
    const store = await CredentialStore.open(dir);
    await store.update('default', (cur) => ({ ...cur, token: cur.token && { ...cur.token, expiresAt: Date.now() - 1000 } }));
    expect((await opcli(dir, ['auth', 'token'])).code).toBe(0);
    const requests = tokenRequests(sandbox);
    expect(requests.map((b) => b.grant_type)).toEqual(['client_credentials', 'client_credentials']);
    expect(requests[0]).not.toHaveProperty('scopes');
    expect(requests[1]).not.toHaveProperty('scopes');
  });

  test('a store without the app installed is named as such', async () => {
    const res = await opcli(dir, ['auth', 'login', '--client-credentials', '--store-id', sandbox.otherStoreId]);
    expect(res.code).toBe(4);
    expect(res.stderr).toContain(`The app is not installed on store ${sandbox.otherStoreId}`);
    expect(stored()).toBeUndefined();
  });

  test('a blank or garbled --store-id is refused by name and never reaches the token endpoint (F7)', async () => {
    for (const storeId of ['', ' ', '\t', 'st\x1b[2J_1', 'st\x07_1', 'st\uFFFD_1']) {
      const res = await opcli(dir, ['auth', 'login', '--client-credentials', '--store-id', storeId]);
      expect(res.code, JSON.stringify(storeId)).toBe(2);
      expect(res.stderr).toMatch(/^Error: --store-id /m);
      expect(res.stderr).not.toContain('\x1b');
    }
    expect(tokenRequests(sandbox)).toHaveLength(0);
    expect(stored()).toBeUndefined();
  });

  test('--with-token stores a token from stdin; OPCLI_TOKEN overrides it and status says so', async () => {
    const issued = sandbox.issueTokens();
    secrets.add(issued.access_token);
    secrets.add(issued.refresh_token);
    const res = await opcli(dir, ['auth', 'login', '--with-token'], { stdin: `${issued.access_token}\n` });
    expect(res.code).toBe(0);
    expect(stored()).toMatchObject({ grant: 'token', accessToken: issued.access_token });
    const bad = await opcli(dir, ['auth', 'login', '--with-token'], { stdin: 'hello' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('svc_at_');
    const status = await opcli(dir, ['auth', 'status', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ source: 'store', grant: 'token', loggedIn: true, expiresAt: null });
    const other = sandbox.issueTokens();
    secrets.add(other.access_token);
    secrets.add(other.refresh_token);
    const env = { OPCLI_TOKEN: other.access_token };
    const envStatus = await opcli(dir, ['auth', 'status', '--json', '--check'], { env });
    expect(JSON.parse(envStatus.stdout)).toMatchObject({ source: 'env', loggedIn: true, accepted: true });
    const envToken = await opcli(dir, ['auth', 'token'], { env });
    expect(envToken.stdout).toBe(`${other.access_token}\n`);
    const warn = await opcli(dir, ['auth', 'login', '--client-credentials'], { env });
    expect(warn.stderr).toContain('Warning: OPCLI_TOKEN is set; it overrides the stored login');
    expect(warn.code).toBe(0);
  });
});

test('no output of this file contained a token, secret, code or verifier', async () => {
  expect(secrets.size).toBeGreaterThan(5);
  expect(leakedSecrets()).toEqual([]);
});
