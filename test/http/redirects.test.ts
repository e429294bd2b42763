/**
 * A 3xx is named the same way by every command (issue 27, item 8; issue 29's redirect row): the
 * status and the Location, made safe for a terminal; never followed, never read as a body. For a
 * POST a 307/308 means "not processed", another 3xx "may have been processed".
 */
import { writeFileSync } from 'node:fs';
import { createServer as createRawServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { writeRows } from '../claims/fixtures.js';
import { runOpcli, tempConfigDir } from '../helpers.js';
import { type Answer, scriptedServer } from '../orders/scripted.js';

let config: ReturnType<typeof tempConfigDir>;
beforeEach(() => {
  config = tempConfigDir();
});
afterEach(() => config.cleanup());

/** A redirect answer; with no `location`, to the second server of `against`. */
const moved = (status: number, location?: string): Answer => ({ status, body: '<html>moved</html>', headers: location ? { location } : {} });

/** Runs opcli against a server answering every request with `answer`; a second server stands at the Location. */
async function against(answer: Answer, argv: string[], env: Record<string, string> = {}) {
  const target = await scriptedServer([]);
  const server = await scriptedServer(
    Array.from({ length: 10 }, () => ({ ...answer, headers: { location: answer.headers?.location ?? `${target.url}/v1/x` } })),
  );
  try {
    const r = await runOpcli(argv, {
      env: { OPCLI_CONFIG_DIR: config.dir, OPCLI_BASE_URL: server.url, OPCLI_TOKEN: 'svc_at_redirected', ...env },
    });
    return { ...r, seen: server.seen, followed: target.seen };
  } finally {
    await server.close();
    await target.close();
  }
}

describe('a redirect, by every command', () => {
  test.each([301, 302, 307, 308])('orders list, %i: the status and Location, exit 1, one request, not followed', async (status) => {
    const r = await against(moved(status), ['orders', 'list']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `Error: GET /v1/orders answered ${status} \\(a redirect to http://127\\.0\\.0\\.1:\\d+/v1/x\\), not a success; opcli does not follow redirects\\.`,
      ),
    );
    expect(r.stderr).toContain('opcli config get base-url');
    // Never read as a body ("Unexpected answer …").
    expect(r.stderr).not.toContain('Unexpected answer');
    expect(r.stdout).not.toContain('moved');
    expect(r.seen).toHaveLength(1);
    expect(r.followed).toEqual([]);
  });

  test('a Location with a right-to-left override and C1 controls reaches the terminal escaped', async () => {
    // Written raw: Node's own server refuses such a header, a hostile gateway does not.
    const raw: Server = createRawServer((socket) => {
      socket.once('data', () => {
        const location = Buffer.concat([Buffer.from('https://evil.example/'), Buffer.from('\u202egnp.exe\u009b2J', 'utf8')]);
        socket.end(Buffer.concat([Buffer.from('HTTP/1.1 302 Found\r\nlocation: '), location, Buffer.from('\r\ncontent-length: 0\r\n\r\n')]));
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    try {
      const port = (raw.address() as { port: number }).port;
      const r = await runOpcli(['orders', 'list'], {
        env: { OPCLI_CONFIG_DIR: config.dir, OPCLI_BASE_URL: `http://127.0.0.1:${port}`, OPCLI_TOKEN: 'svc_at_redirected' },
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('GET /v1/orders answered 302 (a redirect to https://evil.example/');
      expect(r.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    } finally {
      await new Promise((r) => raw.close(r));
    }
  });

  test('opcli api: a 307 to a POST is named "not processed", and its body is not printed as the answer', async () => {
    const r = await against(moved(307), ['api', 'POST', '/v1/claims/offline', '--data', '{}', '--include']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^HTTP 307\n/);
    expect(r.stderr).toContain('Error: POST /v1/claims/offline answered 307 (a redirect to');
    expect(r.stderr).toContain('The request was not processed.');
    expect(r.stdout).toBe('');
    expect(r.seen).toHaveLength(1);
    expect(r.followed).toEqual([]);
  });

  test('orders update --replace: a 308 to its PUT is named, and the order target never hears of it', async () => {
    const r = await against(moved(308), ['orders', 'update', 'ord_1', '--tax', '3', '--source-order-number', '#1', '--currency', 'USD', '--replace']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Error: PUT \/v1\/orders\/ord_1 answered 308 \(a redirect to http:\/\/127\.0\.0\.1:\d+\/v1\/x\), not a success/);
    expect(r.seen.map((s) => s.method)).toEqual(['PUT']);
    expect(r.followed).toEqual([]);
  });

  test.each([
    [307, 'The request was not processed.'],
    [308, 'The request was not processed.'],
    [302, 'The request may have been processed.'],
    [301, 'The request may have been processed.'],
  ])('variants create, %i: %s', async (status, fate) => {
    const file = join(config.dir, 'variant.json');
    writeFileSync(file, JSON.stringify({ status: 'ACTIVE', name: 'Mug', price: 1, inventoryQuantity: 1, productType: 'SIMPLE' }));
    const r = await against(moved(status), ['variants', 'create', 'prod_1', '--data', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`POST /v2/products/prod_1/children answered ${status} (a redirect to`);
    expect(r.stderr).toContain(fate);
    expect(r.seen).toHaveLength(1);
    expect(r.followed).toEqual([]);
  });

  test.each([
    [307, 'not_sent'],
    [302, 'uncertain'],
  ])('claims file --from, %i: the batch stops at the first redirect; the row that met it is %s', async (status, fate) => {
    const input = join(config.dir, 'claims.csv');
    writeRows(input, 5);
    expect((await runOpcli(['config', 'set', 'store-id', 'store_1'], { env: { OPCLI_CONFIG_DIR: config.dir } })).code).toBe(0);
    const r = await against(moved(status), ['claims', 'file', '--from', input, '--concurrency', '1', '--jsonl']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`POST /v1/claims/offline answered ${status} (a redirect to`);
    // Every row would meet the same redirect: one request, not five.
    expect(r.seen).toHaveLength(1);
    expect(r.followed).toEqual([]);
    const rows = r.stdout
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('{"summary"'))
      .map((l) => JSON.parse(l));
    // The row that met it, then rows already read, left unsent; the rest of the file is not read.
    expect(rows[0]).toMatchObject({ line: 2, status: fate });
    expect(rows.slice(1).every((row) => row.status === 'not_sent')).toBe(true);
    expect(r.stderr).toContain('1 request');
  });

  test('the token endpoint: a 307 is named as a redirect, not as a refused login, and the secret goes nowhere else', async () => {
    const r = await against(moved(307), ['auth', 'login', '--client-credentials', '--store-id', 'store_1'], {
      OPCLI_TOKEN: '',
      OPCLI_CLIENT_ID: 'svc_app_x',
      OPCLI_CLIENT_SECRET: 'svc_secret_redirected',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('POST /v1/oauth/token answered 307 (a redirect to');
    expect(r.stderr).toContain('The request was not processed.');
    expect(r.stderr).not.toContain('svc_secret_redirected');
    expect(r.seen).toHaveLength(1);
    expect(r.followed).toEqual([]);
  });
});
