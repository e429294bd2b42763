/**
 * A batch behind a real nginx meeting an outage of the service (issue 29): the upstream switched
 * off (nginx answers 502) or frozen (504), nginx's rate limiter answering 503, and nginx closing
 * idle keep-alive connections. What the user sees (exit code, stderr, results) and what the
 * sandbox received.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { manualClock, type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { type RunOptions, runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';
import { missingInfra, type Nginx, type NginxOptions, startNginx, startUpstreamSwitch, type UpstreamSwitch } from '../infra/index.js';
import { claimBodies, writeRows } from './fixtures.js';

const missing = missingInfra('nginx');

interface Result {
  line: number;
  status: string;
  error?: string;
}

/** The row number a claim body carries (`row i` in item.details). */
function rowOf(body: string): number {
  return Number(/"details":"row (\d+)"/.exec(body)?.[1]);
}

describe.skipIf(missing)('a batch behind nginx when the service goes down', () => {
  let sandbox: Sandbox;
  let relay: UpstreamSwitch;
  let gateway: Nginx | undefined;
  let cfg: { dir: string; cleanup: () => void };
  let token: string;

  beforeAll(async () => {
    sandbox = await startSandbox();
    relay = await startUpstreamSwitch(sandbox.url);
  });
  afterAll(async () => {
    await relay?.close();
    await sandbox?.close();
  });
  beforeEach(async () => {
    cfg = tempConfigDir();
    // The profile names the sandbox's store; the run goes to nginx with a token for it.
    await sandboxProfile(sandbox, cfg.dir, { loggedIn: false });
    token = sandbox.issueTokens().access_token;
  });
  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
    await relay.up();
    cfg.cleanup();
  });

  async function start(options: Partial<NginxOptions> = {}): Promise<Nginx> {
    gateway = await startNginx({ upstream: relay.url, ...options });
    return gateway;
  }
  function run(argv: string[], options: RunOptions = {}) {
    return runOpcli(argv, { ...options, env: { OPCLI_CONFIG_DIR: cfg.dir, OPCLI_BASE_URL: gateway?.url, OPCLI_TOKEN: token, ...options.env } });
  }
  const results = (stdout: string): Result[] =>
    stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .filter((l) => !l.startsWith('{"summary"'))
      .map((l) => JSON.parse(l) as Result);
  const byStatus = (rs: Result[]) => {
    const counts: Record<string, number> = {};
    for (const r of rs) counts[r.status] = (counts[r.status] ?? 0) + 1;
    return counts;
  };
  /** Switches the relay off once `n` claims reached the sandbox. */
  function downAfter(n: number): () => void {
    const timer = setInterval(() => {
      if (claimBodies(sandbox).length >= n) {
        clearInterval(timer);
        void relay.down();
      }
    }, 1);
    return () => clearInterval(timer);
  }

  it('2,000 rows through an outage (502): stops at once, at most --concurrency uncertain, the rest not sent, one line, exit 1; a rerun files the rest once', async () => {
    await start();
    const path = join(cfg.dir, 'claims.csv');
    writeRows(path, 2000);
    const before = claimBodies(sandbox).length;
    const stop = downAfter(before + 300);
    const first = await run(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '16']);
    stop();
    const rs = results(first.stdout);
    const counts = byStatus(rs);
    const uncertain = rs.filter((r) => r.status === 'uncertain');
    const reached = new Set(claimBodies(sandbox).slice(before).map(rowOf));
    console.log(
      `outage 502: ${rs.length} rows read of 2000; filed ${counts.filed ?? 0}, uncertain ${uncertain.length} (${uncertain.filter((r) => reached.has(r.line - 1)).length} of them reached the sandbox), not_sent ${counts.not_sent ?? 0}`,
    );

    expect(first.code).toBe(1);
    expect(uncertain.length).toBeLessThanOrEqual(16);
    expect((counts.filed ?? 0) + uncertain.length + (counts.not_sent ?? 0)).toBe(rs.length);
    // One line says what happened and that rerunning is safe; the per-row lines of one cause are folded.
    const outageLines = first.stderr.split('\n').filter((l) => l.includes('The service is down'));
    expect(outageLines).toHaveLength(1);
    expect(outageLines[0]).toContain('502 Bad Gateway');
    expect(outageLines[0]).toContain('Rerunning the same command is safe');
    expect(first.stderr).not.toMatch(/nginx\/|Bad Gateway 502/);
    // Every filed row reached the sandbox; no not_sent row did.
    for (const r of rs) {
      if (r.status === 'filed') expect(reached.has(r.line - 1)).toBe(true);
      if (r.status === 'not_sent') expect(reached.has(r.line - 1)).toBe(false);
    }

    await relay.up();
    const second = await run(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '16']);
    expect(second.code).toBe(uncertain.length > 0 ? 3 : 0);
    const all = claimBodies(sandbox).slice(before).map(rowOf);
    const times = new Map<number, number>();
    for (const n of all) times.set(n, (times.get(n) ?? 0) + 1);
    const uncertainRows = new Set(uncertain.map((r) => r.line - 1));
    for (let i = 1; i <= 2000; i++) {
      // Every claim reached the sandbox exactly once, but the uncertain ones (not resent without --retry-uncertain).
      if (uncertainRows.has(i)) expect(times.get(i) ?? 0).toBeLessThanOrEqual(1);
      else expect(times.get(i)).toBe(1);
    }
  });

  it('with 502 named as "not processed" by the profile, the outage leaves no row uncertain', async () => {
    await start();
    expect((await run(['config', 'set', 'not-processed-statuses', '429,502'])).code).toBe(0);
    const path = join(cfg.dir, 'claims.csv');
    writeRows(path, 400);
    const before = claimBodies(sandbox).length;
    const stop = downAfter(before + 100);
    const res = await run(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '16']);
    stop();
    const counts = byStatus(results(res.stdout));
    console.log(
      `outage 502 with not-processed-statuses 429,502: filed ${counts.filed ?? 0}, uncertain ${counts.uncertain ?? 0}, not_sent ${counts.not_sent ?? 0}`,
    );
    expect(res.code).toBe(1);
    expect(counts.uncertain ?? 0).toBe(0);
    expect(counts.not_sent ?? 0).toBeGreaterThan(0);
  });

  it('--wait-for-service waits for the service, asking with a GET, and goes on when it is back', async () => {
    await start();
    const path = join(cfg.dir, 'claims.csv');
    writeRows(path, 300);
    const before = claimBodies(sandbox).length;
    const stop = downAfter(before + 50);
    // The wait runs on a manual clock: the service comes back once 3 s of it have passed.
    const clock = manualClock();
    let downSince: number | undefined;
    const sleep = async (ms: number) => {
      clock.advance(ms);
      if (relay.mode() === 'down') {
        downSince ??= clock.now() - ms;
        if (clock.now() - downSince >= 3_000) await relay.up();
      }
    };
    const res = await run(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '8', '--wait-for-service', '1m'], { timers: clock, sleep });
    stop();
    const rs = results(res.stdout);
    const counts = byStatus(rs);
    console.log(`--wait-for-service: filed ${counts.filed ?? 0}, uncertain ${counts.uncertain ?? 0}, not_sent ${counts.not_sent ?? 0}`);
    expect(res.stderr).toContain('The service looks down');
    expect(res.stderr).toContain('The service is back; going on.');
    expect(rs).toHaveLength(300);
    expect(counts.not_sent ?? 0).toBe(0);
    expect(counts.uncertain ?? 0).toBeLessThanOrEqual(8);
    expect(res.code).toBe((counts.uncertain ?? 0) > 0 ? 3 : 0);
    // The probes were GETs of one order.
    const log = gateway?.accessLog() ?? [];
    expect(log.some((e) => e.method === 'GET' && e.uri === '/v1/orders?size=1')).toBe(true);
  });

  it('a frozen service (504) is told apart in words: the gateway gave up, the service may still create the claims', async () => {
    await start({ proxyReadTimeout: '1s' });
    const path = join(cfg.dir, 'claims.csv');
    writeRows(path, 60);
    const before = claimBodies(sandbox).length;
    const timer = setInterval(() => {
      if (claimBodies(sandbox).length >= before + 10) {
        clearInterval(timer);
        void relay.freeze();
      }
    }, 1);
    const res = await run(['claims', 'file', '--from', path, '--concurrency', '4']);
    clearInterval(timer);
    const summary = /Filed (\d+) claims; .* (\d+) uncertain, (\d+) not sent/.exec(res.stderr);
    const counts = { filed: Number(summary?.[1]), uncertain: Number(summary?.[2]), not_sent: Number(summary?.[3]) };
    console.log(`frozen 504: filed ${counts.filed}, uncertain ${counts.uncertain}, not_sent ${counts.not_sent}`);
    expect(res.code).toBe(1);
    // The rows of one cause take one line each cause, with a count.
    const lines = res.stderr.split('\n');
    expect(lines.filter((l) => /^line \d+: not sent: /.test(l))).toHaveLength(1);
    expect(lines.filter((l) => /^line \d+: uncertain: /.test(l)).length).toBeLessThanOrEqual(1);
    expect(
      lines.some((l) => /^\d+ more lines not sent for the same cause \(the batch stopped before this row was sent: the service is down\): lines /.test(l)),
    ).toBe(counts.not_sent > 1);
    const line = lines.find((l) => l.includes('The service is down')) ?? '';
    expect(line).toContain('gave up waiting for it (504 Gateway Timeout)');
    expect(line).toContain('may still process');
    expect(line).not.toContain('502');
    expect(counts.uncertain ?? 0).toBeLessThanOrEqual(4);
  });
});

describe.skipIf(missing)("nginx's rate limit answering 503, and idle keep-alive connections", () => {
  let sandbox: Sandbox;
  let gateway: Nginx | undefined;
  let cfg: { dir: string; cleanup: () => void };

  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(async () => {
    await sandbox?.close();
  });
  beforeEach(async () => {
    cfg = tempConfigDir();
    await sandboxProfile(sandbox, cfg.dir, { loggedIn: false });
  });
  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
    cfg.cleanup();
  });
  function run(argv: string[]) {
    return runOpcli(argv, { env: { OPCLI_CONFIG_DIR: cfg.dir, OPCLI_BASE_URL: gateway?.url, OPCLI_TOKEN: sandbox.issueTokens().access_token } });
  }

  it('limit_req with its default status 503 and the profile naming 503 as "not processed": no row uncertain', async () => {
    gateway = await startNginx({ upstream: sandbox.url, limitReq: { rate: '40r/s', burst: 4, nodelay: true } });
    expect((await run(['config', 'set', 'not-processed-statuses', '429,503'])).code).toBe(0);
    const path = join(cfg.dir, 'claims.csv');
    writeRows(path, 40);
    const res = await run(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '16']);
    const rs = res.stdout
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('{"summary"'))
      .map((l) => JSON.parse(l) as Result);
    const refused = (gateway.accessLog() ?? []).filter((e) => e.status === 503).length;
    console.log(`limit_req 503: ${refused} requests refused by nginx; ${rs.filter((r) => r.status === 'uncertain').length} rows uncertain`);
    expect(refused).toBeGreaterThan(0);
    expect(rs.filter((r) => r.status === 'uncertain')).toEqual([]);
    expect(res.stderr).not.toContain('uncertain:');
  });

  it('keepalive_timeout 1s and a batch paced at 1/s: no POST goes on a connection idle that long, no row uncertain', async () => {
    gateway = await startNginx({ upstream: sandbox.url, keepaliveTimeout: '1s' });
    const path = join(cfg.dir, 'claims.csv');
    writeRows(path, 4);
    const res = await run(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '1', '--rate', '1/s']);
    expect(res.code).toBe(0);
    const posts = (await gateway.waitForAccessLog(4)).filter((e) => e.method === 'POST');
    expect(posts).toHaveLength(4);
    // Each POST is the first request of its connection: none was written on one nginx was closing.
    expect(posts.map((e) => e.connectionRequests)).toEqual([1, 1, 1, 1]);
  });
});
