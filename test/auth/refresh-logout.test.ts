import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { CredentialStore } from '../../src/config/credentials.js';
import { type ManualClock, manualClock, type Sandbox } from '../../src/sandbox/index.js';
import { sandboxProfile } from '../helpers.js';
import { authSuite, leakedSecrets, opcli, secrets, tokenRequests } from './util.js';

let sandbox: Sandbox;
let clock: ManualClock;
let dir: string;
let issued: { accessToken?: string; refreshToken?: string };
authSuite((s) => ({ sandbox, dir, issued } = s), { sandbox: () => ({ clock: (clock = manualClock()) }) });

function stored(profile = 'default') {
  const file = JSON.parse(readFileSync(`${dir}/credentials.json`, 'utf8'));
  return file.profiles[profile]?.token as { accessToken: string; refreshToken?: string; expiresAt?: number; grant: string } | undefined;
}

async function expireStored(ms = -1000) {
  const store = await CredentialStore.open(dir);
  // As if the hour-long token had been obtained an hour before it expires.
  await store.update('default', (cur) => ({
    ...cur,
    token: cur.token && { ...cur.token, expiresAt: Date.now() + ms, obtainedAt: Date.now() + ms - 3600_000 },
  }));
}

describe('refresh', () => {
  test('a token expiring within 5 minutes is refreshed before use; the rotated pair replaces the old one', async () => {
    await expireStored(4 * 60_000);
    const res = await opcli(dir, ['--verbose', 'auth', 'status', '--check']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('token accepted');
    expect(sandbox.counters.refreshes).toBe(1);
    const token = stored();
    expect(token?.accessToken).not.toBe(issued.accessToken);
    expect(token?.refreshToken).not.toBe(issued.refreshToken);
    expect(token?.expiresAt).toBeGreaterThan(Date.now() + 3500_000);
    const orders = sandbox.requests.filter((r) => r.path === '/v1/orders');
    expect(orders.map((r) => r.headers.authorization)).toEqual([`Bearer ${token?.accessToken}`]);
    expect(tokenRequests(sandbox)).toEqual([
      { grant_type: 'refresh_token', client_id: sandbox.client.clientId, client_secret: sandbox.client.clientSecret, refresh_token: issued.refreshToken },
    ]);
  });

  test('an unreadable refresh answer is not retried with the old refresh token, which the server may have rotated out', async () => {
    await expireStored(60_000);
    // The server rotates the pair, then the answer arrives damaged.
    sandbox.setFaults([{ method: 'POST', path: '/v1/oauth/token', phase: 'after', status: 200, count: 1 }]);
    const first = await opcli(dir, ['auth', 'token']);
    expect(first.code).toBe(4);
    expect(first.stderr).toContain('is not sent again');
    expect(stored()?.refreshToken).toBeUndefined();
    const second = await opcli(dir, ['auth', 'token']);
    expect(second.code).toBe(4);
    expect(sandbox.counters.refreshes).toBe(1);
    expect(sandbox.counters.reuseDetections).toBe(0);
  });

  test('a token still valid for longer is used as it is', async () => {
    const res = await opcli(dir, ['auth', 'token']);
    expect(res.stdout).toBe(`${issued.accessToken}\n`);
    expect(sandbox.counters.refreshes).toBe(0);
  });

  test('a 401 invalid_token refreshes once and repeats the call', async () => {
    const short = sandbox.issueTokens({ accessTokenTtl: 1 });
    secrets.add(short.access_token);
    secrets.add(short.refresh_token);
    const store = await CredentialStore.open(dir);
    await store.update('default', (cur) => ({
      ...cur,
      token: {
        accessToken: short.access_token,
        refreshToken: short.refresh_token,
        expiresAt: Date.now() + 3600_000,
        scopes: [],
        grant: 'authorization_code',
        obtainedAt: Date.now(),
      },
    }));
    clock.advance(1000);
    const res = await opcli(dir, ['auth', 'status', '--check']);
    expect(res.code).toBe(0);
    expect(sandbox.counters.refreshes).toBe(1);
    const statuses = sandbox.requests.filter((r) => r.path === '/v1/orders').map((r) => r.status);
    expect(statuses).toEqual([401, 200]);
  });

  test('auth refresh forces one; the old refresh token is rotated out', async () => {
    const res = await opcli(dir, ['auth', 'refresh', '--json']);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ profile: 'default', hasRefreshToken: true, expired: false });
    expect(sandbox.counters.refreshes).toBe(1);
    expect(stored()?.refreshToken).not.toBe(issued.refreshToken);
    expect(sandbox.isAccessTokenValid(stored()?.accessToken as string)).toBe(true);
  });

  test('invalid_grant deletes the stored login (it still held the sent token) and asks for a login, exit 4', async () => {
    const store = await CredentialStore.open(dir);
    await store.update('default', (cur) => ({
      ...cur,
      token: cur.token && { ...cur.token, refreshToken: 'svc_rt_unknown_to_the_server', expiresAt: Date.now() - 1 },
    }));
    const res = await opcli(dir, ['auth', 'token']);
    expect(res.code).toBe(4);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain('has ended: the server refused the refresh token');
    expect(res.stderr).toContain('opcli auth login');
    expect(stored()).toBeUndefined();
    // The client secret stays.
    expect(store.read('default').clientSecret).toBe(sandbox.client.clientSecret);
  });

  test('a refresh whose answer was lost is not sent again: no reuse detection, a login is asked for', async () => {
    await expireStored();
    sandbox.setFaults([{ method: 'POST', path: '/v1/oauth/token', phase: 'after', status: 502 }]);
    const res = await opcli(dir, ['auth', 'token']);
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('was lost');
    expect(tokenRequests(sandbox)).toHaveLength(1);
    expect(sandbox.counters.refreshes).toBe(1);
    sandbox.setFaults([]);
    // The next command does not present the rotated-out token either.
    const again = await opcli(dir, ['auth', 'token']);
    expect(again.code).toBe(4);
    expect(tokenRequests(sandbox)).toHaveLength(1);
    expect(sandbox.counters.reuseDetections).toBe(0);
    expect(stored()?.refreshToken).toBeUndefined();
  });

  test('an unreachable server leaves the login intact (retry later)', async () => {
    await expireStored();
    sandbox.setFaults([{ method: 'POST', path: '/v1/oauth/token', phase: 'before', status: 429, retryAfter: 0 }]);
    const res = await opcli(dir, ['auth', 'token'], { http: { maxRetries: 1 } });
    expect(res.code).toBe(1);
    expect(stored()?.refreshToken).toBe(issued.refreshToken);
    expect(sandbox.counters.refreshes).toBe(0);
  });
});

describe('status', () => {
  test('shows grant, store, scopes, relative expiry, refresh token and source; never a secret', async () => {
    const res = await opcli(dir, ['auth', 'status']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('Token source\tcredential store');
    expect(res.stdout).toContain(`Store\t${sandbox.store.storeId}`);
    expect(res.stdout).toMatch(/Access token expires\tin (60 minutes|59 minutes)/);
    expect(res.stdout).toContain('Refresh token\theld');
    expect(res.stdout).toContain(`Scopes\t${sandbox.store.scopes.join(' ')}`);
    const json = JSON.parse((await opcli(dir, ['auth', 'status', '--json'])).stdout);
    expect(json).toMatchObject({
      profile: 'default',
      baseUrl: sandbox.url,
      source: 'store',
      loggedIn: true,
      grant: 'authorization_code',
      hasRefreshToken: true,
    });
    expect(json.expiresIn).toBeGreaterThan(3500);
  });

  test('--all lists every profile; a profile without a login exits 4', async () => {
    await sandboxProfile(sandbox, dir, { profile: 'staging', loggedIn: false });
    const all = await opcli(dir, ['auth', 'status', '--all', '--json']);
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout).map((s: { profile: string; loggedIn: boolean }) => [s.profile, s.loggedIn])).toEqual([
      ['default', true],
      ['staging', false],
    ]);
    const one = await opcli(dir, ['--profile', 'staging', 'auth', 'status']);
    expect(one.code).toBe(4);
    expect(one.stderr).toContain('Profile "staging" is not logged in');
  });
});

describe('logout', () => {
  test('revokes the refresh token, then the access token, and deletes them; the old tokens no longer work', async () => {
    const res = await opcli(dir, ['auth', 'logout', '--json']);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ refreshTokenRevoked: true, accessTokenRevoked: true, removed: true });
    const revokes = sandbox.requests.filter((r) => r.path === '/v1/oauth/revoke').map((r) => JSON.parse(r.body));
    expect(revokes).toEqual([
      { token: issued.refreshToken, client_id: sandbox.client.clientId, client_secret: sandbox.client.clientSecret, token_type_hint: 'refresh_token' },
      { token: issued.accessToken, client_id: sandbox.client.clientId, client_secret: sandbox.client.clientSecret, token_type_hint: 'access_token' },
    ]);
    expect(sandbox.counters.revocations).toBe(2);
    expect(stored()).toBeUndefined();
    expect(sandbox.isAccessTokenValid(issued.accessToken as string)).toBe(false);
    // The old access token is refused by the API, and the old refresh token by the token endpoint.
    const env = { OPCLI_TOKEN: issued.accessToken };
    const check = await opcli(dir, ['auth', 'status', '--check'], { env });
    expect(check.code).toBe(4);
    const { request } = await import('undici');
    const refresh = await request(`${sandbox.url}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'refresh_token',
        client_id: sandbox.client.clientId,
        client_secret: sandbox.client.clientSecret,
        refresh_token: issued.refreshToken,
      }),
    });
    expect(refresh.statusCode).toBe(400);
    expect(((await refresh.body.json()) as { error: string }).error).toBe('invalid_grant');
  });

  test('a failed revocation still deletes the tokens locally, with a warning', async () => {
    sandbox.setFaults([{ method: 'POST', path: '/v1/oauth/revoke', status: 503 }]);
    const res = await opcli(dir, ['auth', 'logout'], { http: { maxRetries: 0 } });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('Warning: the server did not revoke the refresh token');
    expect(res.stderr).toContain('Warning: the server did not revoke the access token');
    expect(stored()).toBeUndefined();
  });

  test('--all logs out every profile', async () => {
    const second = await sandboxProfile(sandbox, dir, { profile: 'staging' });
    secrets.add(second.accessToken as string);
    secrets.add(second.refreshToken as string);
    const res = await opcli(dir, ['auth', 'logout', '--all']);
    expect(res.code).toBe(0);
    expect(stored('default')).toBeUndefined();
    expect(stored('staging')).toBeUndefined();
    expect(sandbox.counters.revocations).toBe(4);
    expect(sandbox.isAccessTokenValid(second.accessToken as string)).toBe(false);
  });
});

test('no output of this file (including --verbose and errors) contained a token, secret, code or verifier', () => {
  expect(secrets.size).toBeGreaterThan(5);
  expect(leakedSecrets()).toEqual([]);
});
