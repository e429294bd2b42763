import { describe, expect, test } from 'vitest';
import { codeFromRedirect, parsePastedRedirect, challengeS256, createState, createVerifier } from '../../src/oauth/callback.js';
import { parseFlags } from '../../src/commands/auth/index.js';

describe('PKCE', () => {
  test('S256 challenge of the RFC 7636 Appendix B verifier', () => {
    expect(challengeS256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  test('a verifier is 32 random bytes in base64url (43 characters), never twice the same', () => {
    const a = createVerifier();
    const b = createVerifier();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(a).not.toBe(b);
  });

  test('state carries at least 128 random bits', () => {
    const s = createState();
    expect(Buffer.from(s, 'base64url').length * 8).toBeGreaterThanOrEqual(128);
    expect(createState()).not.toBe(s);
  });
});

describe('redirect checks', () => {
  const at = (q: string) => new URL(`http://127.0.0.1:5000/callback?${q}`);
  test('the code comes back only with the very state', () => {
    expect(codeFromRedirect(at('code=abc&state=S1'), 'S1')).toBe('abc');
    expect(() => codeFromRedirect(at('code=abc&state=S2'), 'S1')).toThrow(/forgery/);
    expect(() => codeFromRedirect(at('code=abc'), 'S1')).toThrow(/no `state`.*forgery/);
    expect(() => codeFromRedirect(at('state=S1'), 'S1')).toThrow(/no authorization code/);
  });

  test('an error redirect is put in words, exit 4', () => {
    try {
      codeFromRedirect(at('error=access_denied&error_description=nope&state=S1'), 'S1');
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toBe('The authorization was refused: the merchant denied access (nope).');
      expect((error as { exitCode: number }).exitCode).toBe(4);
    }
  });

  test('a pasted address must be a URL to the callback path', () => {
    expect(parsePastedRedirect('  http://127.0.0.1:1/callback?code=a&state=b \n').searchParams.get('code')).toBe('a');
    expect(() => parsePastedRedirect('code=a')).toThrow(/not a URL/);
    expect(() => parsePastedRedirect('http://127.0.0.1:1/other?code=a')).toThrow(/not \/callback/);
  });
});

describe('flags', () => {
  test('durations, ports and combinations', () => {
    expect(parseFlags({ timeout: '90s' }).timeoutMs).toBe(90_000);
    expect(() => parseFlags({ timeout: '300' })).toThrow(/--timeout "300" has no unit/);
    expect(() => parseFlags({ timeout: '3000000s' })).toThrow(/at most 1d/);
    expect(parseFlags({ port: '8123', scopes: 'a,b a' })).toMatchObject({ port: 8123, scopes: ['a', 'b'], browser: true, timeoutMs: 300_000 });
    expect(() => parseFlags({ port: '70000' })).toThrow(/--port/);
    expect(() => parseFlags({ clientCredentials: true, withToken: true })).toThrow(/cannot be combined/);
    expect(() => parseFlags({ storeId: 'st_1' })).toThrow(/--store-id goes with --client-credentials/);
  });
});
