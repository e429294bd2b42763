import { describe, expect, it } from 'vitest';
import { needsRefresh } from '../../src/oauth/token-source.js';
import type { StoredToken } from '../../src/config/credentials.js';

const NOW = 1_000_000_000;
const token = (lifetimeMs: number, leftMs: number): StoredToken => ({
  accessToken: 'svc_at_x',
  expiresAt: NOW + leftMs,
  obtainedAt: NOW + leftMs - lifetimeMs,
  scopes: [],
  grant: 'authorization_code',
});

describe('when a stored token is refreshed before use', () => {
  it('an hour-long token: within its last 5 minutes, not before', () => {
    expect(needsRefresh(token(3600_000, 5 * 60_000), NOW)).toBe(true);
    expect(needsRefresh(token(3600_000, 5 * 60_000 + 1000), NOW)).toBe(false);
  });
  it('a token that lives 2 minutes: in its second half, so a fresh one is not refreshed on every request', () => {
    expect(needsRefresh(token(120_000, 120_000), NOW)).toBe(false);
    expect(needsRefresh(token(120_000, 61_000), NOW)).toBe(false);
    expect(needsRefresh(token(120_000, 60_000), NOW)).toBe(true);
  });
  it('an expired token always, a token of unknown expiry never', () => {
    expect(needsRefresh(token(3600_000, -1), NOW)).toBe(true);
    expect(needsRefresh({ ...token(3600_000, 0), expiresAt: undefined }, NOW)).toBe(false);
  });
});
