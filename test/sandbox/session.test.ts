import { createHmac } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { admin, call, sandboxSuite } from './client.js';

let sb: Sandbox;
sandboxSuite((s) => ({ sb } = s));

const verify = (session_token: unknown, headers?: Record<string, string>) => call(`${sb.url}/v1/oauth/session/verify`, { json: { session_token }, headers });

function decode(part: string) {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
}

describe('session tokens', () => {
  test('a minted token is an HS256 JWT for the seeded store, valid 60 s', () => {
    const [head, body] = sb.mintSessionToken().split('.') as [string, string];
    expect(decode(head)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const claims = decode(body);
    expect(claims.exp - claims.iat).toBe(60);
    expect(claims.jti).toEqual(expect.any(String));
    expect(claims.aud).toBe(sb.client.clientId);
    expect(claims.store_id).toBe(sb.store.storeId);
  });

  test('a valid token verifies without any Authorization header, once', async () => {
    const token = sb.mintSessionToken();
    const ok = await verify(token);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      userId: 'user_1001',
      email: 'merchant@example.com',
      firstName: 'Morgan',
      lastName: 'Merchant',
      storeId: sb.store.storeId,
      installationId: sb.store.installationId,
      applicationId: sb.store.applicationId,
      clientId: sb.client.clientId,
      scopes: sb.store.scopes,
    });
    const again = await verify(token);
    expect(again.status).toBe(401);
    expect(again.body).toEqual({ error: 'invalid_session_token', error_description: expect.stringContaining('already used') });
    expect(sb.counters.sessionVerifications).toBe(2);
  });

  test('an Authorization header, even a bogus one, is not required nor refused', async () => {
    const res = await verify(sb.mintSessionToken(), { authorization: 'Bearer whatever' });
    expect(res.status).toBe(200);
  });

  test('expired, forged, malformed and alg=none tokens are 401 invalid_session_token', async () => {
    const expired = await verify(sb.mintSessionToken({ expiresInSeconds: -1 }));
    expect(expired.status).toBe(401);
    expect(expired.body.error_description).toContain('expired');

    const [head, body] = sb.mintSessionToken().split('.') as [string, string];
    const forgedSig = createHmac('sha256', 'not-the-secret').update(`${head}.${body}`).digest('base64url');
    const forged = await verify(`${head}.${body}.${forgedSig}`);
    expect(forged.status).toBe(401);
    expect(forged.body.error_description).toContain('signature');

    const claims = decode(body);
    const tampered = Buffer.from(JSON.stringify({ ...claims, store_id: 'store_2002' })).toString('base64url');
    const sig = sb.mintSessionToken().split('.')[2];
    expect((await verify(`${head}.${tampered}.${sig}`)).status).toBe(401);

    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${body}.`;
    const noneRes = await verify(none);
    expect(noneRes.status).toBe(401);
    expect(noneRes.body.error).toBe('invalid_session_token');

    for (const bad of ['abc', 'a.b.c', '...']) {
      const res = await verify(bad);
      expect(res.status, bad).toBe(401);
      expect(res.body.error).toBe('invalid_session_token');
    }
  });

  test('a missing session_token is a 400 naming the field', async () => {
    const res = await call(`${sb.url}/v1/oauth/session/verify`, { json: {} });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: 'session_token' })]);
  });

  test('31st verification within a minute is 429 with Retry-After', async () => {
    for (let i = 0; i < 30; i++) {
      const res = await verify('x.y.z');
      expect(res.status).toBe(401);
    }
    const limited = await verify(sb.mintSessionToken());
    expect(limited.status).toBe(429);
    const wait = Number(limited.headers['retry-after']);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(limited.body.error).toBe('rate_limited');
    expect(sb.counters.sessionVerifications).toBe(31);
  });

  test('the admin endpoint mints tokens that verify', async () => {
    const minted = await admin(sb, '/__admin/session-tokens', { method: 'POST' });
    expect(minted.status).toBe(200);
    expect((await verify(minted.body.session_token)).status).toBe(200);
    const expired = await admin(sb, '/__admin/session-tokens', { json: { expiresInSeconds: -5 } });
    expect((await verify(expired.body.session_token)).status).toBe(401);
  });
});
