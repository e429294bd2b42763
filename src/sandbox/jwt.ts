/** HS256 JSON Web Tokens, signed and verified with node:crypto only. */
import { createHmac, timingSafeEqual } from 'node:crypto';

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

/** Signs a payload as a compact HS256 JWT. */
export function signJwt(payload: Record<string, unknown>, secret: Buffer): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  const signature = createHmac('sha256', secret).update(`${HEADER}.${body}`).digest('base64url');
  return `${HEADER}.${body}.${signature}`;
}

export type JwtResult = { ok: true; payload: Record<string, unknown> } | { ok: false; reason: 'malformed' | 'bad_signature' | 'unsupported_alg' };

/** Checks the structure, the algorithm and the signature of a JWT; claims are the caller's to check. */
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
