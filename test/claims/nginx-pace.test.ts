/**
 * End to end behind real nginx: `limit_req rate=40r/s` without burst (nginx's default, a strict
 * leaky bucket that refuses any request closer than 25 ms to the last one it let through) answering
 * 429, in front of the sandbox. A batch of a few hundred rows files every row exactly once (the
 * sandbox received each once) and only a small fraction of the requests is refused. No speed is
 * asserted: the machine is loaded and shared.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';
import { missingInfra, type Nginx, startNginx } from '../infra/index.js';
import { duplicates, results, rowOf, summaryLine, writeRows } from './fixtures.js';

const missing = missingInfra('nginx');
const ROWS = 300;

describe.skipIf(missing)('claims file --from behind nginx limit_req 40r/s, no burst, 429', () => {
  let sandbox: Sandbox;
  let gateway: Nginx;
  let config: { dir: string; cleanup: () => void };

  beforeAll(async () => {
    sandbox = await startSandbox();
    gateway = await startNginx({ upstream: sandbox.url, limitReq: { rate: '40r/s', status: 429 } });
    config = tempConfigDir();
    await sandboxProfile(sandbox, config.dir, { loggedIn: false });
  });
  afterAll(async () => {
    await gateway?.stop();
    await sandbox?.close();
    config?.cleanup();
  });

  it('files every row once; the sandbox receives each once; refusals are a small fraction; the summary counts them', { timeout: 120_000 }, async () => {
    const path = join(config.dir, 'claims.csv');
    writeRows(path, ROWS);
    // Credentials are bound to the origin they were issued for: the gateway is the base URL here,
    // so the run takes its token from OPCLI_TOKEN.
    const { access_token: token } = sandbox.issueTokens();
    const res = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], {
      env: { OPCLI_CONFIG_DIR: config.dir, OPCLI_BASE_URL: gateway.url, OPCLI_TOKEN: token },
    });
    expect(res.code, res.stderr).toBe(0);
    expect(results(res.stdout).map((r) => r.status)).toEqual(Array(ROWS).fill('filed'));

    // What reached the sandbox: each row once, every one created once.
    const posts = sandbox.requests.filter((r) => r.method === 'POST' && r.path === '/v1/claims/offline');
    expect(posts.map((r) => rowOf(r.body)).sort((a, b) => a - b)).toEqual(Array.from({ length: ROWS }, (_, i) => i + 1));
    expect(sandbox.claims).toHaveLength(ROWS);
    expect(duplicates(sandbox.claims.map((c) => c.raw))).toEqual([]);

    // What nginx decided: the refused are few, and the summary counts each request and refusal.
    await gateway.waitForAccessLog(ROWS, (e) => e.method === 'POST' && e.status !== 429);
    const log = gateway.accessLog().filter((e) => e.method === 'POST');

    const refused = log.filter((e) => e.status === 429).length;
    expect(log.filter((e) => e.status === 201 || e.status === 200)).toHaveLength(ROWS);
    // A bound on behaviour, not on speed: the pacing's own figures (about 1 % refused) are the
    // bench's, on a quiet machine. Inside a parallel test run on two cores, nginx sees requests late
    // or bunched by tens of milliseconds and refuses a few more (17 of 320 in one CI run); a batch
    // that does not pace at all has most of its requests refused by a bucket without burst.
    expect(refused).toBeLessThanOrEqual(Math.ceil(0.2 * log.length));
    const summary = summaryLine(res.stdout) as Record<string, number>;
    expect(summary).toMatchObject({ rows: ROWS, filed: ROWS, requests: log.length, rateLimited: refused });
    expect(summary.learntRate).toBeGreaterThan(0);
  });
});
