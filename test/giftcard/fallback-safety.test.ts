/**
 * Review fixes of `giftcard issue`: a trigger credit that lands while the fallback is in flight, the
 * service token kept to the service's own host, an unreachable trigger, and polls bounded in time.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ChainEnv, type ChainProgress, type CreditRequest, planChain, runChain } from '../../src/giftcard/issuance.js';
import type { ProviderClient, ProviderSettings } from '../../src/giftcard/provider.js';
import type { GiftCard } from '../../src/schemas.js';
import { aliceClaim, type Fixture, fixture, giftcardSuite, ledgerLines } from './fixture.js';

let fx: Fixture | undefined;
const closers: (() => Promise<void>)[] = [];
giftcardSuite();
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

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

/** The loyalty card lookups the sandbox received. */
function lookups(sandbox: Fixture['sandbox']) {
  return sandbox.requests.filter((q) => q.method === 'GET' && q.path === '/provider/v2/gift-cards/');
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

/**
 * Moves the shared clock across a 1 s deadline that starts now: 999 ms (just short of it), then 1 ms
 * (at it). Returns the timers pending before, between and after, so a test can check that nothing
 * fired short of the deadline and exactly one timer (the deadline's) fired at it.
 */
function crossDeadline(clock: Fixture['clock']): number[] {
  const pending = [clock.pending];
  clock.advance(999);
  pending.push(clock.pending);
  clock.advance(1);
  pending.push(clock.pending);
  return pending;
}

describe('giftcard issue: a trigger credit that lands during the fallback', () => {
  it('reports a double credit at once when the trigger posts while the top-up is in flight', async () => {
    fx = await fixture({ triggerDelayMs: 2000, fakeClock: true });
    // The top-up reaches the provider 3 s late: the trigger (posted 2 s after its POST) credits first.
    fx.sandbox.setFaults([{ method: 'PUT', path: '/provider/v2/gift-cards/', phase: 'before', latencyMs: 3000, count: 1 }]);
    // opcli waits on the top-up's answer, not on a sleep: the test moves the clock past the delay.
    const clock = fx.clock;
    const stop = whenRequested(
      (q) => q.method === 'PUT',
      () => clock.advance(3000),
    );
    const r = await fx.run(aliceClaim('C-50', ['--trigger-wait', '1s', '--late-check', '1s']));
    stop();
    expect(r.code, r.stderr).toBe(3);
    expect(fx.sandbox.counters.creditsPosted).toMatchObject({ trigger: 1, creditApiTopUp: 1 });
    expect(fx.sandbox.loyaltyCard('cust_1001')?.balance).toBe(60);
    expect(r.stdout).toMatch(/^Balance\t60\.00 USD$/m);
    expect(r.stdout).toMatch(/^Warning\tpossible double credit \(see below\)$/m);
    // The warning is the last thing said, after the "Issued" line.
    const tail = r.stderr.trimEnd().split('\n').at(-1) ?? '';
    expect(tail).toMatch(/^WARNING: The customer may have been paid twice\. .*also added 25\.00 USD to loyalty card/);
    expect(r.stderr).not.toMatch(/saw no late trigger credit/);
    const outcome = ledgerLines(fx.dir).find((l) => l.type === 'outcome');
    // What the card should hold had only opcli credited it: 10.00 read before the top-up + 25.00.
    expect(outcome).toMatchObject({ status: 'issued', possibleDoubleCredit: true, balanceCents: 6000, watch: { expectedCents: 3500 } });
    const history = await fx.run(['giftcard', 'history']);
    expect(history.stdout).toMatch(/claim C-50\t25\.00 USD\talice@example\.com\tissued, POSSIBLE DOUBLE CREDIT\tcredit-api-top-up/);
  });

  it('on the new-card path, flags a new card whose answer already holds the trigger credit', async () => {
    // A provider whose issue answer comes after the trigger credited the new card (it became the
    // customer's loyalty card). The sandbox computes its answer before any later credit, so this
    // case runs the chain against an in-memory provider.
    const amount = 25;
    let card: GiftCard | null = null;
    const provider = {
      lookup: async () => card && { ...card },
      executeTrigger: async () => {},
      issue: async () => {
        card = { gift_card_id: 'gc_new', amount: 2 * amount, code: 'NEWCARD00001' };
        return { ...card };
      },
      topUp: async () => {
        throw new Error('no top-up expected: the customer had no card');
      },
    } as unknown as ProviderClient;
    const settings: ProviderSettings = {
      name: 'giftly',
      apiUrl: 'https://provider.example',
      token: 't',
      shopUrl: 'shop.example',
      triggerId: '3f1c2a4e-8d5b-4c1e-9f7a-2b6d8e0c1a3f',
      triggerUrl: 'https://hooks.example/execute',
    };
    const req: CreditRequest = {
      issuance: 'i-1',
      claimId: 'C-51',
      orderNumber: '1',
      bonus: false,
      amountCents: amount * 100,
      email: 'bob@example.com',
      name: 'Bob',
      customerId: 'cust_1002',
      currency: 'USD',
    };
    let clock = 0;
    const said: string[] = [];
    const env: ChainEnv = {
      client: provider,
      settings,
      timing: { triggerWaitMs: 1000, lateCheckMs: 1000, pollIntervalMs: 250 },
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
      say: (text) => said.push(text),
    };
    const progress: ChainProgress = { moneyMayHaveMoved: false, triggerPosted: false, notes: [] };
    const result = await runChain(req, planChain(settings, req, undefined), env, progress);
    expect(result.path).toBe('credit-api-issue');
    expect(result.possibleDoubleCredit).toBe(true);
    expect(result.warnings[0]).toMatch(/may have been paid twice\. .*also added 25\.00 USD to loyalty card gc_new/);
    expect(result.balanceCents).toBe(5000);
    expect(result.watch).toMatchObject({ cardId: 'gc_new', expectedCents: 2500 });
  });
});

describe('giftcard issue: the native gift card stays on the service host', () => {
  it("refuses a native-url on another host than the base URL's, before anything is sent or recorded", async () => {
    fx = await fixture({ unset: ['trigger-id', 'provider-token'] });
    const foreign = await foreignHost();
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
    expect(r.stdout).toMatch(/^Balance\t35\.00 USD$/m);
    expect(fx.sandbox.counters.creditsPosted).toEqual({ trigger: 0, creditApiIssue: 0, creditApiTopUp: 1, native: 0 });
    expect(fx.sandbox.loyaltyCard('cust_1001')?.balance).toBe(35);
    const outcome = ledgerLines(fx.dir).find((l) => l.type === 'outcome');
    expect(outcome).toMatchObject({ status: 'issued', path: 'credit-api-top-up', triggerPosted: false });
    expect(outcome?.watch).toBeUndefined();
  });
});

describe('giftcard issue: polls end by their deadline', () => {
  it('falls back after --trigger-wait even when a poll meets a 503 with Retry-After 8, without honouring the pause', async () => {
    fx = await fixture({ triggerDelayMs: null, fakeClock: true });
    // `after: 1` spares the lookup before the trigger; the first poll lookup meets the fault.
    fx.sandbox.setFaults([{ method: 'GET', path: '/provider/v2/gift-cards/', after: 1, count: 1, status: 503, retryAfter: 8 }]);
    const clock = fx.clock;
    const slept: number[] = [];
    const start = clock.now;
    const r = await fx.run(aliceClaim('C-54', ['--trigger-wait', '1s', '--late-check', '1s']), {
      sleep: async (ms: number) => {
        slept.push(ms);
        clock.now += ms;
      },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Waited 1 s for the trigger workflow to post the credit; it did not, so falling back/);
    // Every pause was a poll interval at most: the 8 s Retry-After was not waited for, and the
    // faulty lookup was not retried.
    expect(Math.max(...slept)).toBeLessThanOrEqual(250);
    expect(clock.now - start).toBeLessThanOrEqual(1000 + 1000 + 250);
    expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(1);
  });

  // A lookup that never answers (the sandbox holds it for a minute of the shared manual clock): were
  // the deadline not kept, nothing would end the wait and the test would time out. The test moves
  // the clock once the lookup hangs; opcli moves it only by its poll sleeps.
  it('falls back after --trigger-wait even when a poll lookup hangs', async () => {
    fx = await fixture({ triggerDelayMs: null, fakeClock: true });
    const sandbox = fx.sandbox;
    const clock = fx.clock;
    // `after: 1` spares the lookup before the trigger; the first poll lookup hangs.
    sandbox.setFaults([{ method: 'GET', path: '/provider/v2/gift-cards/', after: 1, count: 1, latencyMs: 60_000 }]);
    let pending: number[] = [];
    const stop = whenRequested(
      () => lookups(sandbox).length === 2,
      () => {
        // The lookup's deadline is a timer on the shared clock: just short of it nothing fires; at
        // it, that one timer fires and the request it ends clears its own overall deadline (a
        // second timer; the sandbox's minute-long hold stays pending).
        pending = crossDeadline(clock);
      },
    );
    const r = await fx.run(aliceClaim('C-56', ['--trigger-wait', '1s', '--late-check', '1s']));
    stop();
    expect(r.code, r.stderr).toBe(0);
    expect(pending).toEqual([pending[0], pending[0], (pending[0] ?? 0) - 2]);
    expect(r.stderr).toMatch(/Waited 1 s for the trigger workflow to post the credit; it did not, so falling back/);
    expect(r.stderr).toMatch(/A loyalty card lookup failed while polling: Looking up the loyalty card of cust_1001 did not answer within 1 s/);
    // The fallback's top-up went out exactly when the trigger wait ended: 1 s (of the clock) after the trigger.
    const trigger = sandbox.requests.find((q) => q.method === 'POST' && q.path.startsWith('/provider/v2/workflows/execute'));
    const topUp = sandbox.requests.find((q) => q.method === 'PUT');
    expect(topUp && trigger && topUp.at - trigger.at).toBe(1000);
    // Paid once, by the credit API; the hung lookup was not retried.
    expect(sandbox.counters.creditsPosted).toEqual({ trigger: 0, creditApiIssue: 0, creditApiTopUp: 1, native: 0 });
    expect(sandbox.loyaltyCard('cust_1001')?.balance).toBe(35);
    expect(r.stdout).toMatch(/^Balance\t35\.00 USD$/m);
    expect(ledgerLines(fx.dir).find((l) => l.type === 'outcome')).toMatchObject({ status: 'issued', path: 'credit-api-top-up', possibleDoubleCredit: false });
  });

  it('ends the late-credit watch by --late-check even when a lookup hangs', async () => {
    fx = await fixture({ triggerDelayMs: null, fakeClock: true });
    const sandbox = fx.sandbox;
    const clock = fx.clock;
    let watchHung = -1;
    let pending: number[] = [];
    // The top-up is held (1 ms of the clock) until the test has armed the fault: the next lookup,
    // the late watch's first, then hangs; once it has reached the sandbox, the test moves the
    // clock by --late-check.
    sandbox.setFaults([{ method: 'PUT', path: '/provider/v2/gift-cards/', phase: 'before', latencyMs: 1, count: 1 }]);
    const armed = whenRequested(
      (q) => q.method === 'PUT',
      () => {
        sandbox.setFaults([{ method: 'GET', path: '/provider/v2/gift-cards/', latencyMs: 60_000, count: 1 }]);
        clock.advance(1);
      },
    );
    const moved = whenRequested(
      () => {
        const put = sandbox.requests.findIndex((q) => q.method === 'PUT');
        return put >= 0 && sandbox.requests.slice(put).some((q) => q.method === 'GET');
      },
      () => {
        watchHung = clock.now;
        pending = crossDeadline(clock);
      },
    );
    const r = await fx.run(aliceClaim('C-55', ['--trigger-wait', '1s', '--late-check', '1s']));
    armed();
    moved();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Watched the loyalty card for 1 s after the fallback and saw no late trigger credit/);
    // The watch ended when its second of the clock had passed (its deadline, a timer on the shared
    // clock, fired then and not before), not a minute later with the hung answer.
    expect(clock.now - watchHung).toBe(1000);
    expect(pending).toEqual([pending[0], pending[0], (pending[0] ?? 0) - 2]);
    const watchLookups = sandbox.requests.slice(sandbox.requests.findIndex((q) => q.method === 'PUT')).filter((q) => q.method === 'GET');
    expect(watchLookups).toHaveLength(1);
    expect(sandbox.counters.creditsPosted).toEqual({ trigger: 0, creditApiIssue: 0, creditApiTopUp: 1, native: 0 });
    expect(sandbox.loyaltyCard('cust_1001')?.balance).toBe(35);
    expect(r.stdout).toMatch(/^Balance\t35\.00 USD$/m);
    expect(r.stdout).not.toMatch(/double credit/);
  });

  it.each([
    ['--trigger-wait', '0s'],
    ['--late-check', '0ms'],
    ['--trigger-wait', '500ms'],
    ['--late-check', '0.5s'],
  ])('refuses %s %s: below the 1 s minimum', async (flag, value) => {
    fx = await fixture();
    const r = await fx.run(aliceClaim('C-56', [flag, value]));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${flag} "${value}" is too short`);
    expect(r.stderr).toMatch(/at least 1s/);
    expect(fx.sandbox.requests).toHaveLength(0);
  });
});
