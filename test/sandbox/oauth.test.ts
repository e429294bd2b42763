import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, test, vi } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { call, clientFields, consent, sandboxSuite } from './client.js';

let sb: Sandbox;
sandboxSuite((s) => ({ sb } = s));

const verifier = () => randomBytes(32).toString('base64url');
const challengeOf = (v: string) => createHash('sha256').update(v).digest('base64url');
const REDIRECT = 'http://127.0.0.1:53682/callback';

function authQuery(extra: Record<string, string> = {}) {
  return {
    response_type: 'code',
    client_id: sb.client.clientId,
    redirect_uri: REDIRECT,
    scope: 'read_orders read_claims',
    state: 'st-123',
    ...extra,
  };
}

async function token(body: Record<string, unknown>, headers?: Record<string, string>) {
  return call(`${sb.url}/v1/oauth/token`, { json: { ...clientFields(sb), ...body }, headers });
}

async function login(scope = 'read_orders read_claims') {
  const v = verifier();
  const url = await consent(sb, authQuery({ scope, code_challenge: challengeOf(v), code_challenge_method: 'S256' }));
  const code = url.searchParams.get('code') as string;
  return token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: v });
}

describe('consent page', () => {
  test('shows the app, the store, the scopes and Approve / Deny buttons, without external resources', async () => {
    const page = await call(`${sb.authorizeUrl}?${new URLSearchParams(authQuery())}`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain(sb.store.storeId);
    expect(page.text).toContain('<code>read_orders</code>');
    expect(page.text).toContain('<code>read_claims</code>');
    expect(page.text).toMatch(/<button[^>]*value="approve"[^>]*>Approve<\/button>/);
    expect(page.text).toMatch(/<button[^>]*value="deny"[^>]*>Deny<\/button>/);
    expect(page.text).toContain('action="/v1/oauth/authorize/decision"');
    expect(page.text).not.toMatch(/<(script|link|img)\b/);
  });

  test('approve redirects with a code and the state; deny with access_denied and the state', async () => {
    const ok = await consent(sb, authQuery());
    expect(`${ok.origin}${ok.pathname}`).toBe(REDIRECT);
    expect(ok.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(ok.searchParams.get('state')).toBe('st-123');
    const denied = await consent(sb, authQuery({ state: 'st-9' }), 'deny');
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('error_description')).toBeTruthy();
    expect(denied.searchParams.get('state')).toBe('st-9');
    expect(denied.searchParams.has('code')).toBe(false);
  });

  test('a pending request is answered once', async () => {
    const page = await call(`${sb.authorizeUrl}?${new URLSearchParams(authQuery())}`);
    const id = /name="request_id" value="([^"]+)"/.exec(page.text)?.[1] as string;
    const form = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' } };
    const body = new URLSearchParams({ request_id: id, decision: 'approve' }).toString();
    expect((await call(`${sb.url}/v1/oauth/authorize/decision`, { ...form, body })).status).toBe(302);
    const again = await call(`${sb.url}/v1/oauth/authorize/decision`, { ...form, body });
    expect(again.status).toBe(400);
    expect(again.headers.location).toBeUndefined();
  });

  test('any loopback port is accepted, but host, path or scheme mismatches show an error page and never redirect', async () => {
    for (const uri of ['http://127.0.0.1/callback', 'http://127.0.0.1:1/callback', 'http://127.0.0.1:65000/callback']) {
      const page = await call(`${sb.authorizeUrl}?${new URLSearchParams(authQuery({ redirect_uri: uri }))}`);
      expect(page.status, uri).toBe(200);
    }
    for (const uri of [
      'http://localhost:8080/callback',
      'http://127.0.0.1:8080/other',
      'https://127.0.0.1:8080/callback',
      'http://127.0.0.1:8080/callback?x=1',
      'http://evil.example/callback',
      'not a url',
    ]) {
      const page = await call(`${sb.authorizeUrl}?${new URLSearchParams(authQuery({ redirect_uri: uri }))}`);
      expect(page.status, uri).toBe(400);
      expect(page.headers.location, uri).toBeUndefined();
      expect(page.text).toContain('not registered');
    }
  });

  test('an unknown client gets an error page', async () => {
    const page = await call(`${sb.authorizeUrl}?${new URLSearchParams(authQuery({ client_id: 'svc_app_nobody' }))}`);
    expect(page.status).toBe(400);
    expect(page.text).toContain('Unknown client');
    expect(page.headers.location).toBeUndefined();
  });

  test('plain PKCE, a bad response_type and unknown scopes are sent back to the app as errors', async () => {
    const plain = await call(`${sb.authorizeUrl}?${new URLSearchParams(authQuery({ code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }))}`);
    expect(plain.status).toBe(302);
    const p = new URL(plain.headers.location as string);
    expect(p.searchParams.get('error')).toBe('invalid_request');
    expect(p.searchParams.get('error_description')).toContain('S256');
    expect(p.searchParams.get('state')).toBe('st-123');
    const noMethod = await call(`${sb.authorizeUrl}?${new URLSearchParams(authQuery({ code_challenge: 'a'.repeat(43) }))}`);
    expect(new URL(noMethod.headers.location as string).searchParams.get('error')).toBe('invalid_request');
    const rt = await call(`${sb.authorizeUrl}?${new URLSearchParams(authQuery({ response_type: 'token' }))}`);
    expect(new URL(rt.headers.location as string).searchParams.get('error')).toBe('unsupported_response_type');
    const scope = await call(`${sb.authorizeUrl}?${new URLSearchParams(authQuery({ scope: 'read_orders admin' }))}`);
    expect(new URL(scope.headers.location as string).searchParams.get('error')).toBe('invalid_scope');
  });

  test('autoApprove redirects with a code at once, from the option and from configure()', async () => {
    sb.configure({ autoApprove: true });
    const res = await call(`${sb.authorizeUrl}?${new URLSearchParams(authQuery())}`);
    expect(res.status).toBe(302);
    expect(new URL(res.headers.location as string).searchParams.get('code')).toBeTruthy();
    const other = await startSandbox({ autoApprove: true });
    try {
      const q = new URLSearchParams({ ...authQuery(), client_id: other.client.clientId });
      const r = await call(`${other.authorizeUrl}?${q}`);
      expect(r.status).toBe(302);
    } finally {
      await other.close();
    }
  });
});

describe('token endpoint: authorization_code', () => {
  test('PKCE with the right verifier gives a token pair with the granted scopes', async () => {
    const res = await login();
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.access_token).toMatch(/^svc_at_/);
    expect(res.body.refresh_token).toMatch(/^svc_rt_/);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'read_orders read_claims' });
    expect(sb.isAccessTokenValid(res.body.access_token)).toBe(true);
    expect(sb.counters.tokensIssued).toBe(1);
  });

  test('a wrong or missing verifier is refused, and the code is spent', async () => {
    const v = verifier();
    const url = await consent(sb, authQuery({ code_challenge: challengeOf(v), code_challenge_method: 'S256' }));
    const code = url.searchParams.get('code') as string;
    const wrong = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier() });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    expect(wrong.body.error_description).toContain('code_verifier');
    const url2 = await consent(sb, authQuery({ code_challenge: challengeOf(v), code_challenge_method: 'S256' }));
    const missing = await token({ grant_type: 'authorization_code', code: url2.searchParams.get('code'), redirect_uri: REDIRECT });
    expect(missing.status).toBe(400);
    expect(missing.body.error_description).toContain('code_verifier is required');
    expect(sb.counters.tokensIssued).toBe(0);
  });

  test('a verifier without a challenge at authorization is refused (no PKCE downgrade)', async () => {
    const url = await consent(sb, authQuery());
    const res = await token({
      grant_type: 'authorization_code',
      code: url.searchParams.get('code'),
      redirect_uri: REDIRECT,
      code_verifier: verifier(),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  test('a code is single use, and its replay revokes what the first exchange issued', async () => {
    const url = await consent(sb, authQuery());
    const code = url.searchParams.get('code') as string;
    const first = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
    expect(first.status).toBe(200);
    const second = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
    expect(second.status).toBe(400);
    expect(second.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('already used') });
    expect(sb.isAccessTokenValid(first.body.access_token)).toBe(false);
  });

  test('the redirect_uri of the exchange must equal the one of the authorization, port included', async () => {
    const url = await consent(sb, authQuery());
    const res = await token({
      grant_type: 'authorization_code',
      code: url.searchParams.get('code'),
      redirect_uri: 'http://127.0.0.1:9999/callback',
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  test('an unknown code and an expired code are refused', async () => {
    const unknown = await token({ grant_type: 'authorization_code', code: 'nope', redirect_uri: REDIRECT });
    expect(unknown.body).toMatchObject({ error: 'invalid_grant', error_description: 'unknown authorization code' });
    const url = await consent(sb, authQuery());
    const realNow = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(realNow + 61_000);
    try {
      const expired = await token({ grant_type: 'authorization_code', code: url.searchParams.get('code'), redirect_uri: REDIRECT });
      expect(expired.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('expired') });
    } finally {
      clock.mockRestore();
    }
  });
});

describe('token endpoint: request shape', () => {
  test('refuses a form-encoded body', async () => {
    const res = await call(`${sb.url}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', ...clientFields(sb), store_id: sb.store.storeId }).toString(),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.error_description).toContain('application/json');
    expect(sb.counters.tokensIssued).toBe(0);
  });

  test('refuses any Authorization header, even with a valid body', async () => {
    const basic = Buffer.from(`${sb.client.clientId}:${sb.client.clientSecret}`).toString('base64');
    const res = await token({ grant_type: 'client_credentials', store_id: sb.store.storeId }, { authorization: `Basic ${basic}` });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.error_description).toContain('Authorization');
  });

  test('names the failing field, refuses unknown grant types and invalid JSON', async () => {
    const missing = await token({ grant_type: 'client_credentials' });
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toContainEqual(expect.objectContaining({ path: 'store_id' }));
    const grant = await token({ grant_type: 'password' });
    expect(grant.body.error).toBe('unsupported_grant_type');
    const bad = await call(`${sb.url}/v1/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_request');
  });

  test('a wrong client secret is 401 invalid_client', async () => {
    const res = await call(`${sb.url}/v1/oauth/token`, {
      json: { grant_type: 'client_credentials', client_id: sb.client.clientId, client_secret: 'svc_secret_wrong', store_id: sb.store.storeId },
    });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });
});

describe('token endpoint: client_credentials', () => {
  test('an installed store gets every granted scope and no refresh token', async () => {
    const res = await token({ grant_type: 'client_credentials', store_id: sb.store.storeId });
    expect(res.status).toBe(200);
    expect(res.body.refresh_token).toBeUndefined();
    expect(res.body.scope.split(' ').sort()).toEqual([...sb.store.scopes].sort());
    const orders = await call(`${sb.url}/v1/orders?size=1`, { token: res.body.access_token });
    expect(orders.status).toBe(200);
  });

  test('the scopes array filters, and an ungranted scope is invalid_scope', async () => {
    const res = await token({ grant_type: 'client_credentials', store_id: sb.store.storeId, scopes: ['read_claims'] });
    expect(res.body.scope).toBe('read_claims');
    const put = await call(`${sb.url}/v1/orders/ord_000001`, {
      method: 'PUT',
      token: res.body.access_token,
      json: { sourceOrderNumber: '#1', currency: 'USD' },
    });
    expect(put.status).toBe(403);
    const bad = await token({ grant_type: 'client_credentials', store_id: sb.store.storeId, scopes: ['read_orders', 'admin'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_scope');
  });

  test('a store without the app installed is refused with invalid_grant', async () => {
    const res = await token({ grant_type: 'client_credentials', store_id: sb.otherStoreId });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_grant', error_description: `the app is not installed on store ${sb.otherStoreId}` });
    expect(sb.counters.tokensIssued).toBe(0);
  });
});

describe('token endpoint: refresh_token', () => {
  test('rotates: a new pair each time, the old refresh token rotated out', async () => {
    const first = await login();
    const r1 = await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    expect(r1.status).toBe(200);
    expect(r1.body.access_token).not.toBe(first.body.access_token);
    expect(r1.body.refresh_token).not.toBe(first.body.refresh_token);
    expect(r1.body.scope).toBe('read_orders read_claims');
    const r2 = await token({ grant_type: 'refresh_token', refresh_token: r1.body.refresh_token });
    expect(r2.status).toBe(200);
    expect(sb.counters.refreshes).toBe(2);
    expect(sb.isAccessTokenValid(r2.body.access_token)).toBe(true);
  });

  test('reuse of a rotated-out refresh token revokes the whole family (RFC 9700)', async () => {
    const first = await login();
    const r1 = await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    const r2 = await token({ grant_type: 'refresh_token', refresh_token: r1.body.refresh_token });
    const other = sb.issueTokens();
    const reuse = await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    expect(reuse.body.error_description).toContain('reuse');
    expect(sb.counters.reuseDetections).toBe(1);
    for (const t of [first.body.access_token, r1.body.access_token, r2.body.access_token]) expect(sb.isAccessTokenValid(t)).toBe(false);
    const latest = await token({ grant_type: 'refresh_token', refresh_token: r2.body.refresh_token });
    expect(latest.status).toBe(400);
    expect(sb.isAccessTokenValid(other.access_token)).toBe(true);
    const orders = await call(`${sb.url}/v1/orders`, { token: r2.body.access_token });
    expect(orders.status).toBe(401);
  });

  test('an unknown refresh token is invalid_grant', async () => {
    const res = await token({ grant_type: 'refresh_token', refresh_token: 'svc_rt_nope' });
    expect(res.body).toMatchObject({ error: 'invalid_grant' });
    expect(sb.counters.refreshes).toBe(0);
  });
});

describe('revoke endpoint', () => {
  test('revoking an access token ends it; the refresh token still works', async () => {
    const pair = sb.issueTokens();
    const res = await call(`${sb.url}/v1/oauth/revoke`, {
      json: { token: pair.access_token, ...clientFields(sb), token_type_hint: 'access_token' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect(sb.isAccessTokenValid(pair.access_token)).toBe(false);
    expect(sb.counters.revocations).toBe(1);
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token });
    expect(refreshed.status).toBe(200);
  });

  test('revoking a refresh token ends it and the access tokens issued with it', async () => {
    const pair = sb.issueTokens();
    const res = await call(`${sb.url}/v1/oauth/revoke`, { json: { token: pair.refresh_token, ...clientFields(sb) } });
    expect(res.status).toBe(200);
    expect(sb.isAccessTokenValid(pair.access_token)).toBe(false);
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token });
    expect(refreshed.body.error).toBe('invalid_grant');
  });

  test('checks client credentials and the body', async () => {
    const pair = sb.issueTokens();
    const wrong = await call(`${sb.url}/v1/oauth/revoke`, {
      json: { token: pair.access_token, client_id: sb.client.clientId, client_secret: 'x' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    expect(sb.isAccessTokenValid(pair.access_token)).toBe(true);
    const bad = await call(`${sb.url}/v1/oauth/revoke`, { json: { ...clientFields(sb), token_type_hint: 'id_token' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['token', 'token_type_hint']);
    expect(sb.counters.revocations).toBe(0);
  });
});
