import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { profileSuite, runOpcli, sandboxProfile } from '../helpers.js';

let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;
let accessToken: string | undefined;
profileSuite((s) => ({ sandbox, dir, env, accessToken } = s), { sandbox: { orders: 45 } });

describe('opcli api', () => {
  test('GET with --query prints the JSON answer, authenticated', async () => {
    const r = await runOpcli(['api', 'GET', '/v1/orders', '--query', 'size=3', '-q', 'buttonNum=2'], { env });
    expect(r.code).toBe(0);
    const page = JSON.parse(r.stdout);
    expect(page.edges).toHaveLength(3);
    expect(page.totalCount).toBe(45);
    expect(page.pageCursors.around).toHaveLength(2);
    expect(sandbox.requests[0]?.query).toEqual({ size: '3', buttonNum: '2' });
    expect(sandbox.requests[0]?.headers.authorization).toBe(`Bearer ${accessToken}`);
    // The token never reaches the output.
    expect(r.stdout + r.stderr).not.toContain(accessToken as string);
  });

  test('--paginate merges the edges of every page, in order', async () => {
    const r = await runOpcli(['api', 'GET', '/v1/orders', '--paginate', '--query', 'size=10'], { env });
    expect(r.code).toBe(0);
    const merged = JSON.parse(r.stdout);
    expect(merged.edges.map((e: { node: { sourceOrderId: string } }) => e.node.sourceOrderId)).toEqual(
      Array.from({ length: 45 }, (_, i) => `ord_${String(i + 1).padStart(6, '0')}`),
    );
    expect(merged.pageInfo.hasNextPage).toBe(false);
    expect(sandbox.requests).toHaveLength(5);
  });

  test('--paginate --jsonl streams one node per line', async () => {
    const r = await runOpcli(['api', 'GET', '/v1/orders?size=20', '--paginate', '--jsonl'], { env });
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(45);
    expect(JSON.parse(lines[44] as string).sourceOrderId).toBe('ord_000045');
    expect(sandbox.requests.map((q) => q.query.size)).toEqual(['20', '20', '20']);
  });

  test('--data inline, @file and - for standard input', async () => {
    const body = { sourceOrderNumber: '#9', currency: 'USD' };
    const inline = await runOpcli(['api', 'PUT', '/v1/orders/ord_000001', '--data', JSON.stringify(body)], { env });
    expect(inline.code).toBe(0);
    expect(JSON.parse(inline.stdout)).toEqual({ status: 'ok' });
    const file = join(dir, 'o.json');
    writeFileSync(file, JSON.stringify({ ...body, total: 2 }));
    expect((await runOpcli(['api', 'PUT', '/v1/orders/ord_000002', '--data', `@${file}`], { env })).code).toBe(0);
    expect((await runOpcli(['api', 'put', '/v1/orders/ord_000003', '-d', '-'], { env, stdin: JSON.stringify({ ...body, total: 3 }) })).code).toBe(0);
    expect(sandbox.requests.map((q) => [q.method, q.path, JSON.parse(q.body).total])).toEqual([
      ['PUT', '/v1/orders/ord_000001', undefined],
      ['PUT', '/v1/orders/ord_000002', 2],
      ['PUT', '/v1/orders/ord_000003', 3],
    ]);
  });

  test('a non-2xx answer prints its body and exits by the error mapping', async () => {
    const missing = await runOpcli(['api', 'PUT', '/v1/orders/ord_999999', '--data', '{"sourceOrderNumber":"#1","currency":"USD"}'], { env });
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout).error).toBe('not_found');
    expect(missing.stderr).toContain('404');

    const refused = await runOpcli(['api', 'PUT', '/v1/orders/ord_000001', '--data', '{"currency":"USD"}'], { env });
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout).errors[0].path).toBe('sourceOrderNumber');

    const unknown = await runOpcli(['api', 'GET', '/v1/nothing-here'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('404');
  });

  test('a missing scope is a 403 naming it, exit 4', async () => {
    await sandboxProfile(sandbox, dir, { scopes: ['read_orders'] });
    const r = await runOpcli(['api', 'POST', '/v2/products/p1/children', '--data', '{}'], { env });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('read_store');
    expect(JSON.parse(r.stdout).required_scope).toBe('read_store');
  });

  test('the session verify endpoint gets no Authorization header', async () => {
    const token = sandbox.mintSessionToken();
    const r = await runOpcli(['api', 'POST', '/v1/oauth/session/verify', '--data', JSON.stringify({ session_token: token })], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).storeId).toBe(sandbox.store.storeId);
    expect(sandbox.requests[0]?.headers.authorization).toBeUndefined();
  });

  test('the token endpoints get no Authorization header however the path is written; others do', async () => {
    for (const path of ['/v1/oauth/token', '/v1/oauth/revoke/', '/v1/oauth/session/verify?probe=1', '/v1/orders/?size=1']) {
      await runOpcli(['api', 'POST', path, '--data', '{}'], { env });
    }
    expect(sandbox.requests.map((q) => [q.path, q.headers.authorization === `Bearer ${accessToken}`])).toEqual([
      ['/v1/oauth/token', false],
      ['/v1/oauth/revoke/', false],
      ['/v1/oauth/session/verify', false],
      ['/v1/orders/', true],
    ]);
    expect(sandbox.requests.slice(0, 3).every((q) => q.headers.authorization === undefined)).toBe(true);
  });

  test('bad arguments are usage errors and send nothing', async () => {
    for (const argv of [
      ['api', 'FETCH', '/v1/orders'],
      ['api', 'GET', 'http://example.com/v1/orders'],
      ['api', 'GET', '/v1/orders', '--query', 'size'],
      ['api', 'PUT', '/v1/orders/x', '--data', '{not json'],
      ['api', 'POST', '/v1/claims/offline', '--paginate'],
      ['api', 'GET', '/v1/orders', '--jsonl'],
    ]) {
      const r = await runOpcli(argv, { env });
      expect(r.code, argv.join(' ')).toBe(2);
    }
    expect(sandbox.requests).toHaveLength(0);
  });
});

describe('opcli api: the path stays below the base URL (F9)', () => {
  test('an empty, blank, garbled, full or protocol-relative path is refused by name, and nothing is sent', async () => {
    for (const [path, why] of [
      ['', /The path argument is empty/],
      [' ', /The path argument is blank/],
      ['/v1/orders\x1b[2J', /The path argument holds a control character/],
      ['/v1/orders\r', /The path argument holds a control character/],
      ['/v1/\uFFFDorders', /The path argument holds U\+FFFD/],
      ['//evil.example/v1/orders', /starts like a URL of another host/],
      ['/\\evil.example/v1/orders', /starts like a URL of another host/],
      ['\\\\evil.example/v1/orders', /starts like a URL of another host/],
      ['https://evil.example/v1/orders', /is a URL, not a path/],
      ['HTTP://evil.example/v1/orders', /is a URL, not a path/],
      ['evil.example:443/v1/orders', /is a URL, not a path/],
      ['v1 orders', /holds a space/],
    ] as const) {
      for (const method of ['GET', 'POST']) {
        const r = await runOpcli(['api', method, path, ...(method === 'POST' ? ['--data', '{}'] : [])], { env });
        expect(r.code, `${method} ${JSON.stringify(path)}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toMatch(/^Error: The path argument /m);
        expect(r.stderr).toMatch(why);
        expect(r.stderr).not.toContain('\x1b');
      }
    }
    expect(sandbox.requests).toHaveLength(0);
  });

  test('a path that climbs out of a base URL with a path (/../, %2e%2e) is refused before the token is sent', async () => {
    const prefixed = { ...env, OPCLI_BASE_URL: `${sandbox.url}/merchant` };
    for (const path of ['/../v1/orders', '/v1/../../v1/orders', '/%2e%2e/v1/orders', '/%2E%2E/v1/orders?size=1']) {
      const r = await runOpcli(['api', 'GET', path], { env: prefixed });
      expect(r.code, `${path}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`outside the profile's base URL ${sandbox.url}/merchant/`);
    }
    expect(sandbox.requests).toHaveLength(0);
    // Inside the prefix the request goes out, to the prefix (the sandbox has no such route).
    const inside = await runOpcli(['api', 'GET', '/v1/orders'], { env: prefixed });
    expect(inside.code).toBe(1);
    expect(sandbox.requests.map((q) => q.path)).toEqual(['/merchant/v1/orders']);
    // Without a prefix, a path that normalises to itself is fine, and a relative one gets its slash.
    sandbox.resetLog();
    const plain = await runOpcli(['api', 'GET', 'v1/orders', '--query', 'size=1'], { env });
    expect(plain.code, plain.stderr).toBe(0);
    expect(sandbox.requests.map((q) => q.path)).toEqual(['/v1/orders']);
  });
});

describe('opcli api --include', () => {
  test('the head of each answer goes to stderr: a success, every page, an error (with its body on stdout) and a redirect', async () => {
    const heads = (stderr: string) => stderr.split('\n\n').filter((b) => b.startsWith('HTTP '));
    const ok = await runOpcli(['api', 'GET', '/v1/orders', '--query', 'size=1', '-i'], { env });
    expect(ok.code).toBe(0);
    expect(ok.stderr).toMatch(/^HTTP 200\n(.+\n)*content-type: application\/json.*\n(.+\n)*\n$/);
    expect(heads(ok.stderr)).toHaveLength(1);
    expect(JSON.parse(ok.stdout).edges).toHaveLength(1);

    const pages = await runOpcli(['api', 'GET', '/v1/orders', '--paginate', '--jsonl', '--query', 'size=20', '--include'], { env });
    expect(pages.code).toBe(0);
    expect(heads(pages.stderr)).toHaveLength(3);
    expect(pages.stdout.trim().split('\n')).toHaveLength(45);

    const missing = await runOpcli(['api', 'GET', '/v1/nothing-here', '--include'], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^HTTP 404\n(.+\n)*\nError: /);
    expect(missing.stdout).not.toBe('');

    const { scriptedServer } = await import('../orders/scripted.js');
    const server = await scriptedServer([{ status: 302, body: '', headers: { location: '/v9/x' } }]);
    try {
      const moved = await runOpcli(['api', 'GET', '/v1/moved', '--include'], { env: { ...env, OPCLI_BASE_URL: server.url, OPCLI_TOKEN: 'svc_at_scripted' } });
      expect(moved.code).toBe(1);
      expect(moved.stderr).toMatch(/^HTTP 302\n(.+\n)*location: \/v9\/x\n(.+\n)*\nError: GET \/v1\/moved answered 302/);
      expect(moved.stdout).toBe('');
    } finally {
      await server.close();
    }
  });
});

describe('opcli api: a redirect is not success', () => {
  test.each([
    [301, { location: 'https://elsewhere.example/v1/orders' }, 'answered 301 (a redirect to https://elsewhere.example/v1/orders)'],
    [302, {}, 'answered 302 (a redirect, no Location header)'],
    [307, { location: '/v2/orders' }, 'answered 307 (a redirect to /v2/orders)'],
  ])('%i: exit 1 with the status and the Location', async (status, headers, message) => {
    const { scriptedServer } = await import('../orders/scripted.js');
    const server = await scriptedServer([{ status, body: '', headers }]);
    try {
      const r = await runOpcli(['api', 'GET', '/v1/orders'], { env: { ...env, OPCLI_BASE_URL: server.url, OPCLI_TOKEN: 'svc_at_scripted' } });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`Error: GET /v1/orders ${message}, not a success;`);
      expect(r.stderr).toContain('does not follow redirects');
      expect(r.stdout).toBe('');
      expect(server.seen).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  test('--paginate stops at a redirect too, with exit 1', async () => {
    const { scriptedServer } = await import('../orders/scripted.js');
    const server = await scriptedServer([{ status: 308, body: '', headers: { location: '/v9/x' } }]);
    try {
      const r = await runOpcli(['api', 'GET', '/v1/orders', '--paginate'], { env: { ...env, OPCLI_BASE_URL: server.url, OPCLI_TOKEN: 'svc_at_scripted' } });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('answered 308 (a redirect to /v9/x)');
      expect(r.stdout).toBe('');
    } finally {
      await server.close();
    }
  });
});
