import { randomUUID, createHmac, timingSafeEqual } from 'node:crypto';
import { SessionVerifyRequest } from '../schemas.js';
import { type Ctx, type Reply, json, readBody } from './http.js';
import { retryAfterSeconds } from './rate-limit.js';
import { MERCHANT } from './seed.js';
import type { SandboxState } from './state.js';

/** Endpoint 3: session tokens (HS256 JWTs, 60 s, single use) and their verification, rate limited per IP. */

const WINDOW_MS = 60_000;

/** As the dashboard would, for the seeded merchant and store. */
export function mintSessionToken(state: SandboxState, issuer: string, expiresInSeconds = 60): string {
  const now = Math.floor(state.now() / 1000);
  return signJwt(
    {
      iss: issuer,
      dest: state.store.shopUrl,
      aud: state.client.clientId,
      sub: MERCHANT.userId,
      store_id: state.store.storeId,
      installation_id: state.store.installationId,
      iat: now,
      nbf: now,
      exp: now + expiresInSeconds,
      jti: randomUUID(),
    },
    state.sessionSecret,
  );
}

const JWT_PROBLEMS = {
  bad_signature: 'the session token signature is invalid',
  unsupported_alg: 'the session token must be signed with HS256',
  malformed: 'the session token is malformed (expected a JWT)',
} as const;

function invalid(description: string): Reply {
  return json(401, { error: 'invalid_session_token', error_description: description });
}

/** A sliding window: null when the IP may verify now, else the 429. */
function rateLimit(state: SandboxState, ip: string): Reply | null {
  const now = state.now();
  const hits = (state.sessionHits.get(ip) ?? []).filter((t) => t > now - WINDOW_MS);
  state.sessionHits.set(ip, hits);
  if (hits.length >= state.settings.sessionVerifyPerMinute) {
    const wait = retryAfterSeconds((hits[0] ?? now) + WINDOW_MS - now);
    return json(
      429,
      {
        error: 'rate_limited',
        message: `at most ${state.settings.sessionVerifyPerMinute} session verifications per minute per IP address; retry in ${wait} s`,
      },
      { 'retry-after': String(wait) },
    );
  }
  hits.push(now);
  return null;
}

/** POST /v1/oauth/session/verify. No Authorization header is needed. */
export function verifySession(state: SandboxState, ctx: Ctx): Reply {
  state.counters.sessionVerifications++;
  const limited = rateLimit(state, ctx.ip);
  if (limited) return limited;
  const body = readBody(ctx, SessionVerifyRequest, 'session verify request');
  if (!body.ok) return body.reply;
  const result = verifyJwt(body.data.session_token, state.sessionSecret);
  if (!result.ok) return invalid(JWT_PROBLEMS[result.reason]);
  const claims = result.payload;
  const now = state.now();
  if (typeof claims.exp !== 'number' || claims.exp * 1000 <= now) {
    return invalid('the session token has expired; ask the merchant to reload the app');
  }
  if (claims.aud !== state.client.clientId) return invalid('the session token was issued for another app');
  if (typeof claims.jti !== 'string') return invalid('the session token has no jti');
  for (const [jti, exp] of state.usedJtis) if (exp <= now) state.usedJtis.delete(jti);
  if (state.usedJtis.has(claims.jti)) return invalid('the session token was already used; session tokens are single use');
  state.usedJtis.set(claims.jti, claims.exp * 1000);
  return json(200, {
    userId: MERCHANT.userId,
    email: MERCHANT.email,
    firstName: MERCHANT.firstName,
    lastName: MERCHANT.lastName,
    storeId: state.store.storeId,
    installationId: state.store.installationId,
    applicationId: state.store.applicationId,
    clientId: state.client.clientId,
    scopes: [...state.store.scopes],
  });
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

export function signJwt(payload: Record<string, unknown>, secret: Buffer): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  const signature = createHmac('sha256', secret).update(`${HEADER}.${body}`).digest('base64url');
  return `${HEADER}.${body}.${signature}`;
}

export type JwtResult = { ok: true; payload: Record<string, unknown> } | { ok: false; reason: 'malformed' | 'bad_signature' | 'unsupported_alg' };

/** The structure, the algorithm and the signature of an HS256 JWT; claims are the caller's to check. */
export function verifyJwt(token: string, secret: Buffer): JwtResult {
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, reason: 'malformed' };
  const [head, body, signature] = parts as [string, string, string];
  const header = decodeJson(head);
  const payload = decodeJson(body);
  if (!header || !payload) return { ok: false, reason: 'malformed' };
  // Only HS256: a token declaring `none` or another algorithm is refused before any signature check.
  if (header.alg !== 'HS256') return { ok: false, reason: 'unsupported_alg' };
  const expected = createHmac('sha256', secret).update(`${head}.${body}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad_signature' };
  return { ok: true, payload };
}

function decodeJson(part: string): Record<string, unknown> | null {
  if (!/^[A-Za-z0-9_-]+$/.test(part)) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
