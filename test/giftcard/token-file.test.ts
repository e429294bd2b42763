/** Issue 27, smaller findings: the provider's credit API token from a file (`giftcard setup --token-from-file`). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixture, giftcardSuite } from './fixture.js';

giftcardSuite();

describe('giftcard setup --token-from-file', () => {
  it('stores the token the file holds, and the check then uses it against the provider', async () => {
    const fx = await fixture();
    const file = join(fx.dir, 'giftly-token');
    // The sandbox's own token, so the check that follows passes with the stored value.
    writeFileSync(file, `${fx.sandbox.store.providerToken}\n`, { mode: 0o600 });
    await fx.run(['config', 'unset', 'provider-token']);
    const r = await fx.run(['giftcard', 'setup', '--token-from-file', file, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Saved provider-token for profile "default".');
    expect(JSON.parse(r.stdout).ok).toBe(true);
    const sent = fx.sandbox.requests.filter((q) => q.path.startsWith('/provider')).map((q) => q.headers['x-giftly-access-token']);
    expect(sent.length).toBeGreaterThan(0);
    expect(new Set(sent)).toEqual(new Set([fx.sandbox.store.providerToken]));
  });

  it('with --token-stdin too, or a missing file: exit 2 naming the flags, nothing saved or sent', async () => {
    const fx = await fixture();
    const both = await fx.run(['giftcard', 'setup', '--token-stdin', '--token-from-file', join(fx.dir, 'x'), '--no-check'], { stdin: 'gly_abc_123456' });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--token-stdin and --token-from-file were both given');
    const missing = await fx.run(['giftcard', 'setup', '--token-from-file', join(fx.dir, 'nope'), '--no-check']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--token-from-file ${join(fx.dir, 'nope')} does not exist.`);
    expect(fx.sandbox.requests).toHaveLength(0);
  });
});
