import { createHash, randomBytes } from 'node:crypto';

/** A PKCE code verifier (RFC 7636 section 4.1): 32 random bytes, base64url, 43 characters. */
export function createVerifier(): string {
  return randomBytes(32).toString('base64url');
}

/** The S256 code challenge of a verifier: BASE64URL(SHA256(ASCII(verifier))). `plain` is never used. */
export function challengeS256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** An OAuth `state` value: 256 random bits (at least 128 are needed), base64url. */
export function createState(): string {
  return randomBytes(32).toString('base64url');
}
