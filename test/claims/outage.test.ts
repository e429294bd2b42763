/**
 * The outage watch of a batch (OutageWatch in src/claims/pipeline.ts) driven directly: rows as workers that enter,
 * "send" and leave with an answer, a probe that says what the test wants. The batch-level tests
 * against real nginx are in gateway-outage.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { OutageWatch, type ProbeResult } from '../../src/claims/pipeline.js';
import { ApiError } from '../../src/core/errors.js';

const badGateway = () =>
  new ApiError({ status: 502, method: 'POST', url: 'https://api.test/v1/claims/offline', body: '', message: 'answered 502 Bad Gateway' });
const refusedRow = () => new ApiError({ status: 400, method: 'POST', url: 'https://api.test/v1/claims/offline', body: {}, message: 'refused (400)' });

/** Runs `rows` rows over `slots` workers; `answer(n)` is the n-th sent row's failure (undefined: filed). */
async function batch(watch: OutageWatch, rows: number, slots: number, answer: (n: number) => unknown): Promise<{ sent: number; notSent: number }> {
  let next = 0;
  let sent = 0;
  let notSent = 0;
  const worker = async () => {
    while (next < rows) {
      next++;
      if (!(await watch.enter())) {
        notSent++;
        continue;
      }
      const n = sent++;
      await new Promise((resolve) => setImmediate(resolve));
      watch.leave(answer(n));
    }
  };
  await Promise.all(Array.from({ length: slots }, worker));
  return { sent, notSent };
}

function watchWith(probe: () => ProbeResult, notices: string[] = [], waitMs?: number) {
  let now = 0;
  return new OutageWatch({
    probe: async () => probe(),
    waitMs,
    now: () => now,
    sleep: async (ms) => {
      now += ms;
    },
    signal: new AbortController().signal,
    notice: (text) => notices.push(text),
  });
}

describe('the outage watch', () => {
  it('a service down: the rows in flight meet it, then the batch stops; no row starts after the first failure', async () => {
    const watch = watchWith(() => ({ up: false, cause: 'bad-gateway', detail: '502' }));
    const { sent, notSent } = await batch(watch, 100, 8, (n) => (n >= 20 ? badGateway() : undefined));
    expect(watch.stopError?.message).toMatch(
      /^The service is down \(\d+ requests in a row failed\): the gateway in front of the service could not get an answer from it \(502 Bad Gateway\)/,
    );
    expect(sent).toBeLessThanOrEqual(20 + 8);
    expect(sent + notSent).toBe(100);
  });

  it('a probe that says "up" while the rows keep failing lets one row through, then stops: at most --concurrency + 1 failures', async () => {
    let probes = 0;
    const watch = watchWith(() => {
      probes++;
      return { up: true };
    });
    const { sent } = await batch(watch, 100, 8, () => badGateway());
    expect(probes).toBe(1);
    expect(sent).toBeLessThanOrEqual(8 + 1);
    expect(watch.stopError).toBeDefined();
  });

  it('one failure among answers: the probe and one row prove the service up, and every row is sent', async () => {
    const watch = watchWith(() => ({ up: true }));
    const { sent, notSent } = await batch(watch, 50, 4, (n) => (n === 10 ? badGateway() : n === 20 ? refusedRow() : undefined));
    expect(watch.stopError).toBeUndefined();
    expect(sent).toBe(50);
    expect(notSent).toBe(0);
  });

  it('--wait-for-service: waits, asking, and goes on when the service answers; says so once each way', async () => {
    const notices: string[] = [];
    let probes = 0;
    const watch = watchWith(() => (++probes < 4 ? { up: false, cause: 'bad-gateway', detail: '502' } : { up: true }), notices, 60_000);
    const { sent, notSent } = await batch(watch, 60, 4, (n) => (n >= 10 && n < 14 ? badGateway() : undefined));
    expect(watch.stopError).toBeUndefined();
    expect(notSent).toBe(0);
    expect(sent).toBe(60);
    expect(notices).toEqual([expect.stringMatching(/^The service looks down: .*Waiting up to 60 s/), 'The service is back; going on.\n']);
  });

  it('--wait-for-service that runs out stops, saying how long it waited', async () => {
    const watch = watchWith(() => ({ up: false, cause: 'refused', detail: 'ECONNREFUSED' }), [], 5_000);
    await batch(watch, 30, 4, (n) => (n >= 5 ? badGateway() : undefined));
    expect(watch.stopError?.message).toContain('and it did not come back within 5 s');
  });
});
