import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { profileSuite, runOpcli } from '../helpers.js';

let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

const RELOAD = 'the session token is expired or was already used: ask the merchant to reload the app';
const verifies = () => sandbox.requests.filter((r) => r.path === '/v1/oauth/session/verify');

profileSuite(
  (s) => {
    ({ sandbox, dir } = s);
    // Only a base URL: no profile, no login.
    env = { ...s.env, OPCLI_BASE_URL: s.sandbox.url };
  },
  { sandbox: { orders: 1 }, profile: 'none' },
);

describe('session verify', () => {
  test('a valid token prints the session context, with no Authorization header and no login', async () => {
    const token = sandbox.mintSessionToken();
    const r = await runOpcli(['session', 'verify', token], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Merchant\tMorgan Merchant <merchant@example.com>');
    expect(r.stdout).toContain(`Store\t${sandbox.store.storeId}`);
    expect(r.stdout).toContain(`Installation\t${sandbox.store.installationId}`);
    expect(r.stdout).toContain('Scopes\tread_orders');
    expect(verifies()).toHaveLength(1);
    expect(verifies()[0]?.headers.authorization).toBeUndefined();
    expect(JSON.parse(verifies()[0]?.body ?? '')).toEqual({ session_token: token });
    // The token is a credential: it never shows on stderr.
    expect(r.stderr).not.toContain(token);
  });

  test('--stdin --json prints the context as JSON', async () => {
    const r = await runOpcli(['session', 'verify', '--stdin', '--json'], { env, stdin: `${sandbox.mintSessionToken()}\n` });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      userId: 'user_1001',
      email: 'merchant@example.com',
      firstName: 'Morgan',
      lastName: 'Merchant',
      storeId: sandbox.store.storeId,
      installationId: sandbox.store.installationId,
      applicationId: sandbox.store.applicationId,
      clientId: sandbox.client.clientId,
      scopes: sandbox.store.scopes,
    });
  });

  test('a reused token exits 1 with the reload advice', async () => {
    const token = sandbox.mintSessionToken();
    expect((await runOpcli(['session', 'verify', token], { env })).code).toBe(0);
    const r = await runOpcli(['session', 'verify', token], { env });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.toLowerCase()).toContain(RELOAD);
    expect(r.stderr).toContain('already used');
  });

  test('an expired token exits 1 with the reload advice', async () => {
    const r = await runOpcli(['session', 'verify', sandbox.mintSessionToken({ expiresInSeconds: -5 })], { env });
    expect(r.code).toBe(1);
    expect(r.stderr.toLowerCase()).toContain(RELOAD);
    expect(r.stderr).toContain('expired');
  });

  test('a forged token exits 1 with the reload advice', async () => {
    const [h, p] = sandbox.mintSessionToken().split('.');
    const r = await runOpcli(['session', 'verify', `${h}.${p}.${'A'.repeat(43)}`], { env });
    expect(r.code).toBe(1);
    expect(r.stderr.toLowerCase()).toContain(RELOAD);
    expect(r.stderr).toContain('signature');
  });

  test('no token, or both an argument and --stdin, is a usage error; nothing is sent', async () => {
    expect((await runOpcli(['session', 'verify'], { env })).code).toBe(2);
    expect((await runOpcli(['session', 'verify', 'x', '--stdin'], { env })).code).toBe(2);
    expect((await runOpcli(['session', 'verify', '--stdin'], { env, stdin: '  \n' })).code).toBe(2);
    expect(verifies()).toHaveLength(0);
  });
});

describe('session verify: rate limit', () => {
  test('--wait waits for Retry-After and then verifies', async () => {
    sandbox.setFaults([{ method: 'POST', path: '/v1/oauth/session/verify', status: 429, retryAfter: 1, count: 1 }]);
    try {
      const started = Date.now();
      const r = await runOpcli(['session', 'verify', '--wait', '--json', sandbox.mintSessionToken()], { env });
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).storeId).toBe(sandbox.store.storeId);
      expect(verifies().map((v) => v.status)).toEqual([429, 200]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(r.stderr).toContain('waiting 1s');
    } finally {
      sandbox.setFaults([]);
    }
  });

  let limited: Sandbox;
  beforeAll(async () => {
    limited = await startSandbox({ orders: 1, sessionVerifyPerMinute: 2 });
  });
  afterAll(async () => {
    await limited.close();
  });

  test('a 429 says when to try again; --wait waits once for Retry-After', async () => {
    const lenv = { OPCLI_CONFIG_DIR: dir, OPCLI_BASE_URL: limited.url };
    for (let i = 0; i < 2; i++) expect((await runOpcli(['session', 'verify', limited.mintSessionToken()], { env: lenv })).code).toBe(0);

    const r = await runOpcli(['session', 'verify', limited.mintSessionToken()], { env: lenv });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/rate limited \(30 per minute per IP address\): try again in \d+s/);
    expect(r.stderr).toContain('--wait');

    // With --wait: one sleep of the Retry-After the server sent, then exactly one more request.
    const slept: number[] = [];
    const before = limited.requests.length;
    const w = await runOpcli(['session', 'verify', '--wait', limited.mintSessionToken()], {
      env: lenv,
      sleep: async (ms) => {
        slept.push(ms);
      },
    });
    expect(slept).toHaveLength(1);
    expect(slept[0]).toBeGreaterThan(1000);
    expect(slept[0]).toBeLessThanOrEqual(60_000);
    expect(limited.requests.length - before).toBe(2);
    expect(w.stderr).toContain('waiting');
    // The sandbox's window has not passed (the sleep was not real), so it is still limited.
    expect(w.code).toBe(1);
    expect(w.stderr).toContain('Still limited after waiting once');
  });
});

describe('session verify: a token that cannot be a session token is refused before it is sent', () => {
  test.each([
    ['not a JWT', 'abc123', /not a JWT \(three base64url parts joined by dots\); nothing was sent/],
    ['the whole App URL', 'https://app.example/?session_token=a.b.c', /not a JWT/],
    ['two parts', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0', /not a JWT/],
    ['a control character', 'eyJh\x1bbGci.eyJz.sig', /holds a control character; nothing was sent/],
    ['bytes that were not UTF-8', 'eyJh\uFFFD.eyJz.sig', /holds U\+FFFD/],
  ])('%s: exit 2, nothing sent, the token not echoed', async (_name, token, message) => {
    const r = await runOpcli(['session', 'verify', token], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toContain(token);
    expect(verifies()).toHaveLength(0);
  });

  test('a real token with the newline a pipe adds still verifies', async () => {
    const r = await runOpcli(['session', 'verify', '--stdin'], { env, stdin: `${sandbox.mintSessionToken()}\n` });
    expect(r.code).toBe(0);
    expect(verifies()).toHaveLength(1);
  });
});
