/**
 * `giftcard setup --check` tells the spec's three provider messages apart on its probe lookup (a
 * made-up customer): "balance update failure" (or the customer not found) proves the token was
 * accepted and the store found; "API key not found" and "Store domain not found" fail the right
 * row with the right advice, in every body shape.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProviderErrorShape } from '../../src/sandbox/types.js';
import { type Fixture, fixture, giftcardSuite } from './fixture.js';

let fx: Fixture | undefined;
giftcardSuite();

const SHAPES: ProviderErrorShape[] = ['message', 'error', 'errors', 'text'];

/** The rows of `setup --check --json` as "check=result". */
function rows(stdout: string): string[] {
  return JSON.parse(stdout).checks.map((c: { check: string; result: string }) => `${c.check}=${c.result}`);
}

function detail(stdout: string, check: string): string {
  return JSON.parse(stdout).checks.find((c: { check: string }) => c.check === check).detail;
}

describe('the probe against the sandbox', () => {
  it('the sandbox answers a lookup of a customer it does not know as the spec words it: 404 "balance update failure"', async () => {
    fx = await fixture();
    const url = new URL(`${fx.sandbox.providerUrl}/v2/gift-cards/`);
    url.searchParams.set('shop_url', fx.sandbox.store.shopUrl);
    url.searchParams.set('customer_id', 'cust_nobody');
    const res = await fetch(url, { headers: { 'x-giftly-access-token': fx.sandbox.store.providerToken } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'balance update failure' });
    // A known customer without a card is still "no card"; the old answer for unknown ones is a setting.
    url.searchParams.set('customer_id', 'cust_1002');
    expect(await (await fetch(url, { headers: { 'x-giftly-access-token': fx.sandbox.store.providerToken } })).json()).toEqual({ error: 'gift card not found' });
    fx.sandbox.configure({ unknownCustomer: 'no-card' });
    url.searchParams.set('customer_id', 'cust_nobody');
    expect(await (await fetch(url, { headers: { 'x-giftly-access-token': fx.sandbox.store.providerToken } })).json()).toEqual({ error: 'gift card not found' });
  });

  it.each(SHAPES)('passes when the probe is answered "balance update failure" (%s body), and pays nothing', async (shape) => {
    fx = await fixture({ providerErrorShape: shape });
    const r = await fx.run(['giftcard', 'setup', '--check', '--json']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(rows(r.stdout).slice(0, 2)).toEqual(['credit API token=ok', 'store domain=ok']);
    expect(detail(r.stdout, 'credit API token')).toMatch(/the test lookup was answered "balance update failure", as expected for a made-up customer/);
    const probe = fx.sandbox.requests.filter((q) => q.path.startsWith('/provider'));
    expect(probe.map((q) => `${q.method} ${q.status} ${q.query.customer_id}`)).toEqual(['GET 404 opcli-setup-check']);
    expect(fx.sandbox.counters.creditsPosted).toEqual({ trigger: 0, creditApiIssue: 0, creditApiTopUp: 0, native: 0 });
  });

  it('passes when the sandbox is set to answer an unknown customer with "no card"', async () => {
    fx = await fixture({ unknownCustomer: 'no-card' });
    const r = await fx.run(['giftcard', 'setup', '--check']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^credit API token\tok\t/m);
    expect(r.stdout).toMatch(/^store domain\tok\t/m);
  });

  it.each(SHAPES)('"API key not found" (%s body) fails the token row with its advice; the store is not checked', async (shape) => {
    fx = await fixture({ providerErrorShape: shape });
    await fx.run(['config', 'set', 'provider-token', '--stdin'], { stdin: 'gly_wrong_token_0000' });
    const r = await fx.run(['giftcard', 'setup', '--check']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^credit API token\tfailed\tAPI key not found\. The credit API token is wrong, expired or revoked\. Create a new token/m);
    expect(r.stdout).toMatch(/^store domain\tnot checked\t/m);
    expect(r.stderr).toMatch(/1 provider check\(s\) failed: credit API token/);
    expect(r.stdout + r.stderr).not.toContain('gly_wrong_token_0000');
  });

  it.each(SHAPES)('"Store domain not found" (%s body) fails the store row with its advice; the token is ok', async (shape) => {
    fx = await fixture({ providerErrorShape: shape });
    await fx.run(['config', 'set', 'shop-url', 'not-this-shop.example']);
    const r = await fx.run(['giftcard', 'setup', '--check']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^credit API token\tok\t/m);
    expect(r.stdout).toMatch(
      /^store domain\tfailed\tStore domain not found\. The provider does not know this store: .*opcli giftcard setup --shop-url <domain>/m,
    );
  });
});

describe('the probe against a provider of our own', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  /** A provider that answers every request 404 with `body` (JSON unless `type` says otherwise). */
  async function provider(body: string, type = 'application/json'): Promise<string> {
    const s = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': type });
      res.end(body);
    });
    server = s;
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  }

  it.each([
    ['{"message":"Customer not found"}', 'application/json', true],
    ['{"errors":[{"message":"balance update failure"}]}', 'application/json', true],
    ['balance update failure', 'text/plain', true],
    ['<html><body><h1>404 Not Found</h1></body></html>', 'text/html', false],
    ['{"error":"not found"}', 'application/json', false],
  ])('a 404 saying %s: the check %s', async (body, type, passes) => {
    fx = await fixture({ unset: ['trigger-id', 'native-url'] });
    await fx.run(['config', 'set', 'provider-api-url', await provider(body, type)]);
    // The stored token belongs to the sandbox's provider URL: it is given again for this provider.
    await fx.run(['config', 'set', 'provider-token', '--stdin'], { stdin: fx.sandbox.store.providerToken });
    const r = await fx.run(['giftcard', 'setup', '--check']);
    if (passes) {
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^store domain\tok\t/m);
    } else {
      // A bare "not found" may be a wrong API address: it proves nothing about the token.
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/^credit API token\tfailed\tthe provider did not answer as expected/m);
    }
  });
});
