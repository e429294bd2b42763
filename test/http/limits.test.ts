/**
 * Hostile servers are bounded (issue 27, item 4): an answer may be only so large, read while it
 * streams, and an exchange may take only so long in all, however slowly its bytes keep coming.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { manualClock } from '../../src/sandbox/index.js';
import { BIN, runOpcli, tempConfigDir } from '../helpers.js';

interface Hostile {
  url: string;
  /** Method and path of each request received. */
  seen: string[];
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A loopback server in this test whose every answer is `answer`'s doing. */
async function hostile(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<Hostile> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => answer(req, res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** Writes 64 KiB of JSON-looking text after another for as long as the client reads. */
function endless(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, '{"edges":[');
  let open = true;
  res.on('close', () => {
    open = false;
  });
  const pump = () => {
    while (open && res.write(chunk)) {}
    if (open) res.once('drain', pump);
  };
  pump();
}

/** The larger of VmHWM and VmRSS of a process in MiB, or undefined once it is gone. */
function peakMiB(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return Math.max(kb('VmHWM'), kb('VmRSS')) / 1024;
  } catch {
    return undefined;
  }
}

const linux = process.platform === 'linux';

describe('an answer larger than its limit', () => {
  test.runIf(linux)('an endless body: the built binary stops at 64 MiB, stays small, and says which setting', async () => {
    const server = await hostile((_req, res) => endless(res));
    const { dir, cleanup } = tempConfigDir();
    const child = spawn(process.execPath, [BIN, 'orders', 'list', '--size', '5', '--json'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, OPCLI_CONFIG_DIR: dir, OPCLI_BASE_URL: server.url, OPCLI_TOKEN: 'svc_at_hostile' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    // Watched from outside while it runs: a run that keeps growing is stopped at 600 MiB (main
    // reached 6 GB in 15 s) so the test fails on the figure instead of taking the machine.
    let peak = 0;
    const watch = setInterval(() => {
      const now = child.pid === undefined ? undefined : peakMiB(child.pid);
      if (now !== undefined) peak = Math.max(peak, now);
      if (peak > 600) child.kill('SIGKILL');
    }, 10);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearInterval(watch);
    cleanup();
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(300);
    expect(code).toBe(1);
    expect(stdout).not.toContain('edges');
    expect(stderr).toContain(`GET ${server.url}/v1/orders answered with more than 64 MiB, the limit OPCLI_HTTP_MAX_BODY sets; reading stopped there`);
    expect(stderr).toContain('Raise OPCLI_HTTP_MAX_BODY');
    expect(stderr).not.toMatch(/unexpected|at .*\.js:\d+/i);
    // A GET is not asked again for an answer that would be as large again.
    expect(server.seen).toEqual(['GET /v1/orders?size=5']);
  });

  test('OPCLI_HTTP_MAX_BODY lowers the limit; a declared Content-Length over it fails before the body is read', async () => {
    const big = JSON.stringify({ pageInfo: { hasNextPage: false }, edges: [], pad: 'x'.repeat(5000) });
    const server = await hostile((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(big)) });
      res.end(big);
    });
    const r = await runOpcli(['orders', 'list', '--json'], { env: { OPCLI_BASE_URL: server.url, OPCLI_TOKEN: 'svc_at_hostile', OPCLI_HTTP_MAX_BODY: '4096' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('answered with more than 4 KiB, the limit OPCLI_HTTP_MAX_BODY sets');
    expect(server.seen).toHaveLength(1);
  });

  test('a token answer may be only 1 MiB (OPCLI_HTTP_MAX_SMALL_BODY), and a login stops there', async () => {
    const server = await hostile((_req, res) => endless(res));
    const { dir, cleanup } = tempConfigDir();
    try {
      const r = await runOpcli(['auth', 'login', '--client-credentials', '--store-id', 'store_1'], {
        env: { OPCLI_CONFIG_DIR: dir, OPCLI_BASE_URL: server.url, OPCLI_CLIENT_ID: 'svc_app_x', OPCLI_CLIENT_SECRET: 'svc_secret_hostile' },
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`POST ${server.url}/v1/oauth/token answered with more than 1 MiB, the limit OPCLI_HTTP_MAX_SMALL_BODY sets`);
      expect(r.stderr).toContain('the request may have been processed');
      expect(r.stderr).not.toContain('svc_secret_hostile');
      expect(server.seen).toEqual(['POST /v1/oauth/token']);
    } finally {
      cleanup();
    }
  });

  test('a POST cut off by the limit is uncertain: a claim is not resent', async () => {
    const server = await hostile((_req, res) => endless(res));
    const r = await runOpcli(['api', 'POST', '/v1/claims/offline', '--data', '{}'], {
      env: { OPCLI_BASE_URL: server.url, OPCLI_TOKEN: 'svc_at_hostile', OPCLI_HTTP_MAX_BODY: '1048576' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('answered with more than 1 MiB, the limit OPCLI_HTTP_MAX_BODY sets; reading stopped there; the request may have been processed');
    expect(server.seen).toEqual(['POST /v1/claims/offline']);
  });
});

describe('an answer that never ends', () => {
  /**
   * A server sending one byte every 5 s of the test's clock, forever: the idle timeout never fires,
   * the overall deadline (OPCLI_HTTP_DEADLINE, on the run's timers) does.
   */
  async function drip(argv: string[], env: Record<string, string>) {
    const clock = manualClock(1_000_000);
    const server = await hostile((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      const tick = () => {
        if (res.destroyed) return;
        res.write(' ');
        clock.setTimeout(tick, 5000);
      };
      clock.setTimeout(tick, 5000);
    });
    let settled = false;
    const run = runOpcli(argv, { env: { OPCLI_BASE_URL: server.url, OPCLI_TOKEN: 'svc_at_hostile', ...env }, timers: clock }).finally(() => {
      settled = true;
    });
    const tick = () => new Promise((r) => setTimeout(r, 2));
    while (server.seen.length === 0 && !settled) await tick();
    // Virtual time only: each step lets the byte it caused arrive before the next.
    let steps = 0;
    while (!settled && steps < 200) {
      clock.advance(5000);
      steps++;
      await tick();
    }
    return { r: await run, server, steps };
  }

  test('a GET fails at the deadline (default 120 s), naming it and its setting, and is not asked again', async () => {
    const { r, server, steps } = await drip(['orders', 'list', '--json'], {});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`GET ${server.url}/v1/orders did not finish within 120 s, the deadline OPCLI_HTTP_DEADLINE sets`);
    expect(r.stderr).toContain('raise OPCLI_HTTP_DEADLINE');
    expect(r.stdout).not.toContain('[ ');
    expect(server.seen).toHaveLength(1);
    // 24 steps of 5 s reach 120 s; a few more for the bytes in flight.
    expect(steps).toBeGreaterThanOrEqual(24);
    expect(steps).toBeLessThan(40);
  });

  test('OPCLI_HTTP_DEADLINE sets it; a POST that reaches it is uncertain and not resent', async () => {
    const { r, server, steps } = await drip(['api', 'POST', '/v1/claims/offline', '--data', '{}'], { OPCLI_HTTP_DEADLINE: '30000' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('did not finish within 30 s, the deadline OPCLI_HTTP_DEADLINE sets; the request may have been processed');
    expect(server.seen).toEqual(['POST /v1/claims/offline']);
    expect(steps).toBeLessThan(15);
  });
});

describe('the settings of the limits', () => {
  test.each([
    ['OPCLI_HTTP_DEADLINE', 'soon'],
    ['OPCLI_HTTP_DEADLINE', '0'],
    ['OPCLI_HTTP_DEADLINE', '99999999999'],
    ['OPCLI_HTTP_MAX_BODY', '64MB'],
    ['OPCLI_HTTP_MAX_BODY', '-1'],
    ['OPCLI_HTTP_MAX_SMALL_BODY', '1e6'],
    ['OPCLI_HTTP_MAX_SMALL_BODY', '0'],
  ])('%s=%s is refused before anything is sent (exit 2)', async (name, value) => {
    const server = await hostile((_req, res) => res.end('{}'));
    const r = await runOpcli(['orders', 'list'], { env: { OPCLI_BASE_URL: server.url, OPCLI_TOKEN: 'svc_at_hostile', [name]: value } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^Error: ${name}`, 'm'));
    expect(server.seen).toEqual([]);
  });
});
