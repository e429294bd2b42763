/**
 * Review fixes of `giftcard issue`: a trigger credit that lands while the fallback is in flight, the
 * service token kept to the service's own host, an unreachable trigger, and polls bounded in time.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ChainEnv, type ChainProgress, type CreditRequest, planChain, runChain } from '../../src/giftcard/chain.js';
import type { ProviderClient, ProviderSettings } from '../../src/giftcard/provider.js';
import type { GiftCard } from '../../src/schemas.js';
import { aliceClaim, type Fixture, fixture } from './fixture.js';

let fx: Fixture | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  if (fx) {
    const token = fx.sandbox.store.providerToken;
    for (const text of fx.captured) expect(text).not.toContain(token);
    await fx.close();
  }
  fx = undefined;
});

function ledgerLines(dir: string): Record<string, unknown>[] {
  return readFileSync(join(dir, 'giftcard-ledger.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

/** A local HTTP server that records what reaches it: a host that is not the service's. */
async function foreignHost(): Promise<{ url: string; seen: { method?: string; url?: string; headers: IncomingHttpHeaders }[] }> {
  const seen: { method?: string; url?: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method, url: req.url, headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ gift_card_id: 'gc_foreign', amount: 25, code: 'FOREIGN0001' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** A loopback port nothing listens on (connections are refused). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Calls `then` once the sandbox has recorded a request matching `match`. */
function whenRequested(match: (q: { method: string; path: string }) => boolean, then: () => void): () => void {
  const timer = setInterval(() => {
    if (fx?.sandbox.requests.some(match)) {
      clearInterval(timer);
      then();
    }
  }, 5);
  return () => clearInterval(timer);
}

describe('giftcard issue: the native gift card stays on the service host', () => {
  it("refuses a native-url on another host than the base URL's, before anything is sent or recorded", async () => {
    fx = await fixture();
    const foreign = await foreignHost();
    await fx.unset('trigger-id', 'provider-token');
    const set = await fx.run(['config', 'set', 'native-url', `${foreign.url}/storefront`]);
    expect(set.code, set.stderr).toBe(0);
    const r = await fx.run(aliceClaim('C-52'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/native-url/);
    expect(r.stderr).toContain(foreign.url);
    expect(r.stderr).toContain(fx.sandbox.url);
    expect(r.stderr).toMatch(/opcli config set native-url/);
    expect(foreign.seen).toEqual([]);
    expect(fx.sandbox.counters.creditsPosted.native).toBe(0);
    expect(() => readFileSync(join(fx?.dir ?? '', 'giftcard-ledger.jsonl'))).toThrow();
    const dry = await fx.run([...aliceClaim('C-52'), '--dry-run']);
    expect(dry.code).toBe(2);
  });

  it('setup --check flags a native-url on another host', async () => {
    fx = await fixture();
    const foreign = await foreignHost();
    await fx.run(['config', 'set', 'native-url', `${foreign.url}/storefront`]);
    const r = await fx.run(['giftcard', 'setup', '--check', '--json']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.ok).toBe(false);
    const native = doc.checks.find((c: { check: string }) => c.check === 'native gift card');
    expect(native.result).toBe('failed');
    expect(native.detail).toContain(foreign.url);
    expect(foreign.seen).toEqual([]);
  });
});

describe('giftcard issue: an unreachable trigger', () => {
  it('falls back to the credit API when the trigger POST provably never left', async () => {
    fx = await fixture({ triggerDelayMs: 0 });
    const port = await closedPort();
    await fx.run(['config', 'set', 'trigger-url', `http://127.0.0.1:${port}/execute`]);
    const r = await fx.run(aliceClaim('C-53'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/The trigger workflow could not be reached .*ECONNREFUSED.*; falling back to the credit API/);
    expect(r.stdout).toMatch(/^Path\tthe credit API, added to the customer's loyalty card$/m);
    expect(r.stdout).toMatch(/^Balance\t35\.00$/m);
    expect(fx.sandbox.counters.creditsPosted).toEqual({ trigger: 0, creditApiIssue: 0, creditApiTopUp: 1, native: 0 });
    expect(fx.sandbox.loyaltyCard('cust_1001')?.balance).toBe(35);
    const outcome = ledgerLines(fx.dir).find((l) => l.type === 'outcome');
    expect(outcome).toMatchObject({ status: 'issued', path: 'credit-api-top-up', triggerPosted: false });
    expect(outcome?.watch).toBeUndefined();
  });
});
