/** Endpoint 3: session tokens (HS256 JWTs, 60 s, single use) and their verification, rate limited per IP. */
import { randomUUID } from 'node:crypto';
import { SessionVerifyRequest } from '../schemas.js';
import type { Ctx, Reply } from './http.js';
import { json, readBody, retryAfterSeconds } from './http.js';
import { signJwt, verifyJwt } from './jwt.js';
import { MERCHANT } from './seed.js';
import type { SandboxState } from './state.js';

const WINDOW_MS = 60_000;

/** Mints a session token for the seeded merchant and store, as the dashboard would. */
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

function invalid(description: string): Reply {
  return json(401, { error: 'invalid_session_token', error_description: description });
}

/** Sliding window: null when the IP may verify now, else the 429 answer. */
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
  if (!result.ok) {
    return invalid(
      result.reason === 'bad_signature'
        ? 'the session token signature is invalid'
        : result.reason === 'unsupported_alg'
          ? 'the session token must be signed with HS256'
          : 'the session token is malformed (expected a JWT)',
    );
  }
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
