/**
 * What a person sees when the service is behind a gateway that fails, or cannot be reached (issue
 * 29): nginx's HTML pages as one line, nothing on stdout when nothing was fetched, the documented
 * number of requests for a refused page, clean punctuation, and a request that failed before it was
 * written counted as not sent (never uncertain). A 421 means "not processed".
 */
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { writeRows } from '../claims/fixtures.js';
import { type RunOptions, runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';
import { deadPort, missingInfra, type Nginx, startNginx, startUpstreamSwitch, type UpstreamSwitch } from '../infra/index.js';

/** Retries happen at once: the backoff is not what these tests are about. */
const noWait = async () => {};

describe('a service that cannot be reached, or answers 421', () => {
  let sandbox: Sandbox;
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
  afterEach(() => {
    sandbox.setFaults([]);
    cfg.cleanup();
  });
  const run = (argv: string[], baseUrl: string, options: RunOptions = {}) =>
    runOpcli(argv, { sleep: noWait, ...options, env: { OPCLI_CONFIG_DIR: cfg.dir, OPCLI_BASE_URL: baseUrl, OPCLI_TOKEN: sandbox.issueTokens().access_token } });

  it('orders list --json with the service unreachable prints nothing on stdout (not "[]"), exit 1', async () => {
    const url = `http://127.0.0.1:${await deadPort()}`;
    for (const format of ['--json', '--jsonl', '--csv']) {
      const res = await run(['orders', 'list', format], url);
      expect(res.code).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr).toContain('could not connect (ECONNREFUSED)');
    }
  });

  it('a connection closed before the request was written (a TLS handshake cut short): the rows are not sent, never uncertain; the batch stops in one line, exit 1', async () => {
    // Accepts, then closes every connection before the TLS handshake is done: nothing of the request left.
    const server: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const path = join(cfg.dir, 'claims.csv');
      writeRows(path, 3);
      const res = await run(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '1'], `https://127.0.0.1:${port}`);
      const rows = res.stdout
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('{"summary"'))
        .map((l) => JSON.parse(l) as { status: string; error?: string });
      expect(rows.map((r) => r.status)).toEqual(['not_sent', 'not_sent', 'not_sent']);
      expect(rows[0]?.error).toContain('was not sent: the connection failed before the request was written');
      expect(res.code).toBe(1);
      // No request reached the service: one line, whatever the batch's size (test/claims/unreachable.test.ts).
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
      expect(res.stderr).toContain('the service cannot be reached');
      expect(res.stderr).toContain('nothing was sent, rerunning is safe');
    } finally {
      server.close();
    }
  });

  it('a 421 (Misdirected Request) to a claim is "not processed": the row is not sent, and a rerun files it', async () => {
    sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', status: 421, phase: 'before' }]);
    const path = join(cfg.dir, 'claims.csv');
    writeRows(path, 2);
    const first = await run(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '1'], sandbox.url);
    expect(
      first.stdout
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('{"summary"'))
        .map((l) => JSON.parse(l).status),
    ).toEqual(['not_sent', 'not_sent']);
    expect(first.code).toBe(3);
    sandbox.setFaults([]);
    const second = await run(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '1'], sandbox.url);
    expect(
      second.stdout
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('{"summary"'))
        .map((l) => JSON.parse(l).status),
    ).toEqual(['filed', 'filed']);
  });

  it("a page answered 500 tried again says so in one clean sentence (no '.;')", async () => {
    sandbox.setFaults([{ method: 'GET', path: '/v1/orders', status: 500, phase: 'before' }]);
    const res = await run(['orders', 'list', '--json'], sandbox.url);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('; trying this page again');
    expect(res.stderr).not.toMatch(/\.;/);
    expect(res.stdout).toBe('');
  });
});

const missing = missingInfra('nginx');

describe.skipIf(missing)("nginx's error pages", () => {
  let sandbox: Sandbox;
  let relay: UpstreamSwitch;
  let gateway: Nginx | undefined;
  let cfg: { dir: string; cleanup: () => void };
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
    await sandboxProfile(sandbox, cfg.dir, { loggedIn: false });
  });
  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
    await relay.up();
    cfg.cleanup();
  });
  const run = (argv: string[], env: Record<string, string> = {}) =>
    runOpcli(argv, {
      sleep: noWait,
      env: { OPCLI_CONFIG_DIR: cfg.dir, OPCLI_BASE_URL: gateway?.url, OPCLI_TOKEN: sandbox.issueTokens().access_token, ...env },
    });

  it("a 502 page becomes one line: the page's title once, no server signature; nothing on stdout", async () => {
    gateway = await startNginx({ upstream: relay.url });
    await relay.down();
    const res = await run(['orders', 'list', '--json'], { OPCLI_HTTP_RETRIES: '0' });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain('GET /v1/orders failed: the server answered 502 Bad Gateway."');
    expect(res.stderr).not.toContain('nginx/');
    expect(res.stderr.match(/Bad Gateway/g)).toHaveLength(1);
  });

  it('a page refused with 429 takes 1 + OPCLI_HTTP_RETRIES requests, as documented, and its message is clean', async () => {
    gateway = await startNginx({ upstream: sandbox.url, limitReq: { rate: '1r/m', status: 429 } });
    // The first request of the minute passes; the listing's page is then refused every time.
    expect((await run(['orders', 'list', '--json', '--size', '1'])).code).toBe(0);
    const res = await run(['orders', 'list', '--json', '--size', '1'], { OPCLI_HTTP_RETRIES: '4' });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    const refused = (await gateway.waitForAccessLog(6)).filter((e) => e.status === 429);
    expect(refused).toHaveLength(5);
    expect(res.stderr).not.toMatch(/\.;|\.\./);
    expect(res.stderr).toContain('GET /v1/orders was rate limited (429).');
  });
});
