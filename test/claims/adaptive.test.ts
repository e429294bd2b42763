/**
 * A batch against a server with a rate limit it cannot know in advance: it backs off on 429 (with
 * and without Retry-After, and with rate-limit headers), never exceeds --concurrency or --rate, and
 * never resends a POST whose fate is unknown. No speed is asserted: only what was sent and shown.
 *
 * The runs are in virtual time: opcli's clock and sleeps and the sandbox's clock (its rate-limit
 * bucket, latency, request times) are one clock that jumps to the next timer once the process is
 * quiet, so a one-second Retry-After costs no real second and every time asserted is the sandbox's.
 * The faults test (429, 503, 500, dropped and timed-out requests) runs here for the same reason.
 */
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { type RunOptions, type RunResult, runBinary, runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';
import { virtualTime } from '../virtual-time.js';
import { claimBodies, duplicates, batchByLine, results, rowOf, summaryLine, writeRows, claimsSuite } from './fixtures.js';

let sandbox: Sandbox;
let dir: string;
const time = virtualTime();
afterAll(() => time.stop());
const { created, env } = claimsSuite((s) => ({ sandbox, dir } = s), {
  reset: (s) => s.configure({ rateLimit: null, latencyMs: 0 }),
  sandbox: () => ({ clock: time.clock }),
});

/** opcli in-process on the file's virtual clock. */
const run = (argv: string[], options: RunOptions = {}): Promise<RunResult> => runOpcli(argv, { now: time.now, sleep: time.sleep, ...options });

/** The claim requests the sandbox received, in arrival order. */
const claimRequests = () => sandbox.requests.filter((r) => r.method === 'POST' && r.path === '/v1/claims/offline');

/** The --json summary (the last JSON document on stdout). */
function summaryOf(stdout: string): Record<string, number> {
  return JSON.parse(stdout);
}

/** Every row was filed exactly once: each body reached the server once with an answer other than 429. */
function expectEachRowFiledOnce(rows: number): void {
  const accepted = claimRequests().filter((r) => r.status !== 429);
  expect(accepted.map((r) => rowOf(r.body)).sort((a, b) => a - b)).toEqual(Array.from({ length: rows }, (_, i) => i + 1));
  expect(created()).toHaveLength(rows);
  expect(duplicates(created().map((c) => c.raw))).toEqual([]);
}

/**
 * A loopback proxy in front of the sandbox that counts the requests it holds open at once: what the
 * server sees as in flight, whatever the client believes.
 */
async function countingProxy(target: string): Promise<{ url: string; maxInFlight: () => number; close: () => Promise<void> }> {
  const upstream = new URL(target);
  let inFlight = 0;
  let max = 0;
  const server: Server = createServer((req, res) => {
    inFlight++;
    max = Math.max(max, inFlight);
    const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      answer.on('end', () => {
        inFlight--;
      });
    });
    forward.on('error', () => {
      inFlight--;
      res.destroy();
    });
    req.pipe(forward);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    maxInFlight: () => max,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('claims file --from against a rate-limited server', () => {
  it('a 429 with Retry-After holds that row for that long, not the others; each row is filed once; no line per 429; the summary counts rows, requests and 429s apart', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 30);
    sandbox.configure({ rateLimit: { perSecond: 20, burst: 4, retryAfter: true }, latencyMs: 20 });
    const res = await run(['claims', 'file', '--from', path, '--json', '--concurrency', '8'], { env: env() });
    expect(res.code).toBe(0);
    expectEachRowFiledOnce(30);
    const requests = claimRequests();
    const refused = requests.filter((r) => r.status === 429);
    // The burst of 4 is spent at once, so the server refused at least once.
    expect(refused.length).toBeGreaterThan(0);
    // After each 429 (Retry-After: 1) the refused row is asked again only once the second has passed
    // (issue 44: the others go on at the lower pace, not held for a second each time).
    for (const r of refused) {
      const again = requests.find((x) => x.at > r.at && rowOf(x.body) === rowOf(r.body));
      expect((again?.at ?? 0) - r.at).toBeGreaterThanOrEqual(1000);
    }
    const summary = summaryOf(res.stdout);
    expect(summary).toMatchObject({ rows: 30, filed: 30, sent: 30, requests: requests.length, rateLimited: refused.length });
    expect(res.stderr).toContain(`30 rows in `);
    expect(res.stderr).toContain(`${requests.length} requests, ${refused.length} of them answered 429 or 503`);
    expect(res.stderr).not.toMatch(/retrying in|answered 429;/);
  });

  it('without Retry-After it backs off on its own and settles under the limit instead of hammering it', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 60);
    sandbox.configure({ rateLimit: { perSecond: 40, burst: 4, retryAfter: false }, latencyMs: 10 });
    const res = await run(['claims', 'file', '--from', path, '--json', '--concurrency', '16'], { env: env() });
    expect(res.code).toBe(0);
    expectEachRowFiledOnce(60);
    const requests = claimRequests();
    expect(requests.some((r) => r.status === 429)).toBe(true);
    expect(requests.find((r) => r.status === 429)?.headers).toBeDefined();
    // 16 workers retrying at once without backing off would be refused far more often than accepted.
    expect(requests.filter((r) => r.status === 429).length).toBeLessThan(30);
    expect(summaryOf(res.stdout).rateLimited).toBe(requests.filter((r) => r.status === 429).length);
  });

  it.each(['ietf', 'x'] as const)('reads the %s rate-limit headers: slows down as the budget runs out, files each row once', async (headers) => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 24);
    sandbox.configure({ rateLimit: { perSecond: 40, burst: 8, retryAfter: true, headers }, latencyMs: 10 });
    const res = await run(['claims', 'file', '--from', path, '--json', '--concurrency', '16'], { env: env() });
    expect(res.code).toBe(0);
    expectEachRowFiledOnce(24);
    const summary = summaryOf(res.stdout);
    expect(summary.requests).toBe(claimRequests().length);
    expect(summary.rateLimited).toBe(claimRequests().filter((r) => r.status === 429).length);
    // The headers announce the budget: fewer refusals than rows (a blind client at 16 in flight gets most of them refused).
    expect(summary.rateLimited).toBeLessThan(12);
  });

  it('never holds more requests open at the server than --concurrency', async () => {
    const proxy = await countingProxy(sandbox.url);
    try {
      const path = join(dir, 'claims.csv');
      writeRows(path, 40);
      sandbox.configure({ latencyMs: 30 });
      // The stored login belongs to the sandbox's origin and is never sent to the proxy's: the run passes the token itself.
      const token = JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8')).profiles.default.token.accessToken as string;
      const res = await run(['claims', 'file', '--from', path, '--json', '--concurrency', '3'], {
        env: env({ OPCLI_BASE_URL: proxy.url, OPCLI_TOKEN: token }),
      });
      expect(res.code).toBe(0);
      expectEachRowFiledOnce(40);
      expect(proxy.maxInFlight()).toBeLessThanOrEqual(3);
      // The bound was reached (the count can fail): 40 slow requests three at a time.
      expect(proxy.maxInFlight()).toBe(3);
    } finally {
      await proxy.close();
    }
  });

  it('never starts requests faster than --rate, from the first one', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 21);
    const res = await run(['claims', 'file', '--from', path, '--json', '--rate', '40/s'], { env: env() });
    expect(res.code).toBe(0);
    expectEachRowFiledOnce(21);
    const at = claimRequests().map((r) => r.at);
    // 21 starts paced 25 ms apart: from the second (the first may pay for the connection) to the
    // last, 19 gaps of 25 ms, less a little for timer rounding. A stalled loop only widens this.
    expect((at.at(-1) ?? 0) - (at[1] ?? 0)).toBeGreaterThanOrEqual(19 * 25 - 40);
    // No 500 ms window holds more than its share (20) plus the few permits that may fire together after a stall.
    for (const t of at) expect(at.filter((x) => x >= t && x < t + 500).length).toBeLessThanOrEqual(24);
  });

  it('refuses a --rate that is not a rate, and --rate without --from, sending nothing (exit 2)', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 2);
    for (const rate of ['fast', '0/s', '-5/s', '1e3/s']) {
      const res = await run(['claims', 'file', '--from', path, '--rate', rate], { env: env() });
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`--rate "${rate}" is not a rate`);
    }
    const single = await run(['claims', 'file', '--rate', '5/s', '--customer-email', 'a@example.com'], { env: env() });
    expect(single.code).toBe(2);
    expect(single.stderr).toContain('--rate');
    expect(claimRequests()).toEqual([]);
  });

  it('under the limiter a POST whose fate is unknown (503, a dropped connection) is never sent again, and 429s are', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 40);
    sandbox.configure({ rateLimit: { perSecond: 40, burst: 4, retryAfter: false }, latencyMs: 5 });
    sandbox.setFaults([
      { method: 'POST', path: '/v1/claims/offline', status: 503, after: 10, count: 2 },
      { method: 'POST', path: '/v1/claims/offline', phase: 'after', drop: true, after: 20, count: 2 },
    ]);
    const res = await run(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '8'], { env: env() });
    expect(res.code).toBe(3);
    const rows = results(res.stdout);
    const uncertain = rows.filter((r) => r.status === 'uncertain').map((r) => r.line - 1);
    expect(uncertain).toHaveLength(4);
    expect(rows.filter((r) => r.status === 'filed')).toHaveLength(36);
    // Each row reached the server once with an answer other than 429: the uncertain ones were not repeated.
    const accepted = claimRequests()
      .filter((r) => r.status !== 429)
      .map((r) => rowOf(r.body));
    expect(duplicates(accepted.map(String))).toEqual([]);
    expect(accepted.sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(duplicates(created().map((c) => c.raw))).toEqual([]);
  });

  it('Ctrl-C while rows wait out a rate-limit pause: they are not sent and journaled not_sent, never uncertain', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 40);
    // Two requests a second, Retry-After 1 s: most rows wait for the limiter when the user stops.
    sandbox.configure({ rateLimit: { perSecond: 2, burst: 2, retryAfter: true } });
    const controller = new AbortController();
    const timer = setInterval(() => {
      if (claimRequests().some((r) => r.status === 429)) controller.abort(Object.assign(new Error('Interrupted'), { name: 'AbortError' }));
    }, 5);
    const res = await run(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '4'], { env: env(), signal: controller.signal });
    clearInterval(timer);
    expect(res.code).toBe(130);
    const rows = results(res.stdout);
    expect(rows.filter((r) => r.status === 'uncertain')).toEqual([]);
    const notSent = rows.filter((r) => r.status === 'not_sent');
    expect(notSent.length).toBeGreaterThan(0);
    // Rows not sent never reached the server but refused: nothing was created for them.
    const createdRows = new Set(created().map((c) => rowOf(c.raw)));
    for (const r of notSent) expect(createdRows.has(r.line - 1)).toBe(false);
    expect(rows.filter((r) => r.status === 'filed')).toHaveLength(created().length);

    sandbox.configure({ rateLimit: null });
    const rerun = await run(['claims', 'file', '--from', path, '--jsonl'], { env: env() });
    expect(rerun.code).toBe(0);
    expect(created()).toHaveLength(40);
    expect(duplicates(created().map((c) => c.raw))).toEqual([]);
  });

  it('the summary gives requests, refusals and the learnt rate; --jsonl carries them on its last line', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 80);
    // A bucket of one: any two requests closer than 50 ms, the second is refused (nginx without burst).
    sandbox.configure({ rateLimit: { perSecond: 20, burst: 1, retryAfter: false }, latencyMs: 10 });
    const res = await run(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '16'], { env: env() });
    expect(res.code, res.stderr).toBe(0);
    expectEachRowFiledOnce(80);
    const rows = results(res.stdout);
    expect(rows).toHaveLength(80);
    const summary = summaryLine(res.stdout) as Record<string, number>;
    const refused = claimRequests().filter((r) => r.status === 429).length;
    expect(summary).toMatchObject({ rows: 80, filed: 80, sent: 80, requests: claimRequests().length, rateLimited: refused });
    expect(refused).toBeGreaterThan(0);
    // Learnt from the refusals alone (no header says it): near the server's 20/s, never above --concurrency's reach.
    expect(summary.learntRate).toBeGreaterThan(10);
    expect(summary.learntRate).toBeLessThan(25);
    expect(res.stderr).toContain(
      `${claimRequests().length} requests, ${refused} of them answered 429 or 503 (over the server's limit); paced at ${Math.round(summary.learntRate ?? 0)}/s, the rate the server allows as learnt`,
    );
  });

  it('on a terminal one status line shows rows/s, requests in flight and the rate the server allows, and no line per 429', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 30);
    sandbox.configure({ rateLimit: { perSecond: 15, burst: 3, retryAfter: true }, latencyMs: 10 });
    // The line is redrawn on a real 200 ms timer, and virtual time may finish the run before one
    // fires: hold the clock once, while a request waits at the server, until the next redraw.
    let redraws = 0;
    let held = false;
    time.onQuiet(async () => {
      if (held || !claimRequests().some((r) => r.status === 0)) return;
      held = true;
      const seen = redraws;
      while (redraws === seen) await new Promise((resolve) => setTimeout(resolve, 10));
    });
    const res = await run(['claims', 'file', '--from', path, '--concurrency', '8'], {
      env: env(),
      tty: true,
      onStderr: (text) => {
        if (text.startsWith('\r\u001b[2K')) redraws++;
      },
    }).finally(() => time.onQuiet(undefined));
    expect(held).toBe(true);
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/rows\/s · \d+ in flight/);
    expect(res.stderr).toMatch(/server allows ~[\d.]+\/s/);
    expect(res.stderr).not.toMatch(/429;|retrying in/);
    // Redrawn in place: one line, no newline per update.
    const statusLines = res.stderr.split('\n').filter((l) => l.includes('in flight'));
    expect(statusLines).toHaveLength(1);
    // Each redraw fits an 80-column terminal (a wrapped line cannot be redrawn in place).
    for (const drawn of (statusLines[0] ?? '').split('\r\u001b[2K')) expect(drawn.length, drawn).toBeLessThan(80);
  });

  it('the built binary in real time against a real-time server: backs off on 429s without Retry-After, files each row once, counts the 429s', async () => {
    // The one run on the wall clock, as a user has it: small and under a higher limit, so it is quick.
    // 10/s: the slow start begins at 20/s (no blind burst), so a server faster than that may refuse nothing.
    const live = await startSandbox({ rateLimit: { perSecond: 10, burst: 4, retryAfter: false }, latencyMs: 5 });
    const folder = tempConfigDir();
    try {
      await sandboxProfile(live, folder.dir);
      const path = join(folder.dir, 'claims.csv');
      writeRows(path, 30);
      const res = await runBinary(['claims', 'file', '--from', path, '--json', '--concurrency', '8'], { env: { OPCLI_CONFIG_DIR: folder.dir } });
      expect(res.code, res.stderr).toBe(0);
      const requests = live.requests.filter((r) => r.method === 'POST' && r.path === '/v1/claims/offline');
      const refused = requests.filter((r) => r.status === 429);
      expect(refused.length).toBeGreaterThan(0);
      const accepted = requests.filter((r) => r.status !== 429).map((r) => rowOf(r.body));
      expect(accepted.sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      expect(duplicates(live.claims.map((c) => c.raw))).toEqual([]);
      expect(summaryOf(res.stdout)).toMatchObject({ rows: 30, filed: 30, sent: 30, requests: requests.length, rateLimited: refused.length });
      expect(res.stderr).not.toMatch(/retrying in|answered 429;/);
    } finally {
      await live.close();
      folder.cleanup();
    }
  });
});
describe('faults during a batch', () => {
  it('429 with Retry-After slows the whole batch; 503, 500 and dropped connections leave rows uncertain; nothing is lost or filed twice', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 60);
    sandbox.setFaults([
      { method: 'POST', path: '/v1/claims/offline', status: 429, retryAfter: 1, after: 10, count: 2 },
      // A 503 and a timeout each close the outage gate until a probe and one row let through say
      // the service is back: each comes alone, far from its twin, so the row let through never
      // meets the second (that would stop the batch, exit 1, however the requests interleave).
      { method: 'POST', path: '/v1/claims/offline', status: 503, after: 15, count: 1 },
      { method: 'POST', path: '/v1/claims/offline', status: 503, after: 40, count: 1 },
      { method: 'POST', path: '/v1/claims/offline', phase: 'after', status: 500, after: 20, count: 2 },
      { method: 'POST', path: '/v1/claims/offline', phase: 'after', drop: true, after: 25, count: 2 },
      { method: 'POST', path: '/v1/claims/offline', phase: 'after', latencyMs: 1500, after: 30, count: 1 },
      { method: 'POST', path: '/v1/claims/offline', phase: 'after', latencyMs: 1500, after: 50, count: 1 },
    ]);
    // opcli's timeout runs on real timers, the sandbox's latency on the virtual clock: an answer held
    // for its latency stays held (the clock stands) until opcli has given up on it and journaled the
    // row, so the answer comes after the timeout however loaded the machine.
    const journal = `${path}.journal.jsonl`;
    const awaitingTimeout = () => {
      const held = claimRequests().filter((r) => r.status === 0);
      if (held.length === 0) return false;
      const lines = batchByLine(journal);
      return held.some((r) => lines.get(rowOf(r.body) + 1)?.status === 'sending');
    };
    time.onQuiet(async () => {
      while (awaitingTimeout()) await new Promise((resolve) => setTimeout(resolve, 5));
    });
    const started = time.now();
    const res = await run(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '4'], { env: env(), http: { timeoutMs: 250 } }).finally(() =>
      time.onQuiet(undefined),
    );
    const elapsed = time.now() - started;
    expect(res.code, res.stderr).toBe(3);
    const rows = results(res.stdout);
    // Every row ends filed, rejected or uncertain, once.
    expect(rows.map((r) => r.line)).toEqual(Array.from({ length: 60 }, (_, i) => i + 2));
    for (const r of rows) expect(['filed', 'rejected', 'uncertain']).toContain(r.status);
    const uncertain = rows.filter((r) => r.status === 'uncertain');
    // 2 × 503, 2 × 500 after handling, 2 dropped, 2 timed out.
    expect(uncertain).toHaveLength(8);
    expect(rows.filter((r) => r.status === 'filed')).toHaveLength(52);
    // The 429 paused every worker for the Retry-After second, and the refused requests were retried.
    expect(elapsed).toBeGreaterThanOrEqual(1000);
    const statuses = claimRequests().map((r) => r.status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    // Filed rows are at the sandbox, and no claim was created twice.
    const ids = new Set(created().map((c) => c.sourceOrderId));
    for (const r of rows.filter((x) => x.status === 'filed')) expect(ids.has(r.sourceOrderId as string)).toBe(true);
    expect(duplicates(created().map((c) => c.raw))).toEqual([]);
    expect(created()).toHaveLength(52 + 6);

    // A rerun sends nothing: the uncertain rows are reported, not resent.
    sandbox.setFaults([]);
    const before = claimBodies(sandbox).length;
    const rerun = await run(['claims', 'file', '--from', path, '--jsonl'], { env: env() });
    expect(rerun.code).toBe(3);
    expect(claimBodies(sandbox)).toHaveLength(before);
    expect(rerun.stderr).toContain('Uncertain from an earlier run');
    expect(
      results(rerun.stdout)
        .filter((r) => r.status === 'uncertain')
        .map((r) => r.line),
    ).toEqual(uncertain.map((r) => r.line));

    // --retry-uncertain sends exactly those rows again, on purpose.
    const retry = await run(['claims', 'file', '--from', path, '--jsonl', '--retry-uncertain'], { env: env() });
    expect(retry.code).toBe(0);
    const resent = claimBodies(sandbox)
      .slice(before)
      .map(rowOf)
      .sort((a, b) => a - b);
    expect(resent).toEqual(uncertain.map((r) => r.line - 1));
    expect(
      results(retry.stdout)
        .filter((r) => !r.earlier)
        .map((r) => r.status),
    ).toEqual(Array(8).fill('filed'));
  });
});
