/**
 * Issue 38 row 12 and issue 39 row 7: `opcli api PATH` as gh's (the method optional), JSON nested
 * 100,000 deep in --data and in answers, numbers more precise than a number holds, header names
 * JavaScript objects carry, and secrets typed as arguments.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { profileSuite, runOpcli, tempConfigDir } from '../helpers.js';

let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;
profileSuite((s) => ({ sandbox, dir, env } = s), { sandbox: { orders: 3 } });

const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const ORDER = { sourceOrderNumber: '#9', currency: 'USD' };

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

/** A loopback server of this test answering every request `status` and `body`; `raw` holds each request's raw header lines. */
async function localServer(status: number, body: string): Promise<{ url: string; raw: string[][] }> {
  const raw: string[][] = [];
  const server = createServer((req, res) => {
    raw.push(req.rawHeaders);
    req.resume();
    req.on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end(body));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, raw };
}

/** Runs opcli against a local server with a token from the environment. */
async function runAgainst(url: string, argv: string[]) {
  const cfg = tempConfigDir();
  try {
    return await runOpcli(argv, { env: { OPCLI_CONFIG_DIR: cfg.dir, OPCLI_BASE_URL: url, OPCLI_TOKEN: 'svc_at_lowinputs0123456789' }, sleep: async () => {} });
  } finally {
    cfg.cleanup();
  }
}

describe('opcli api PATH: the method is optional, as in gh api (issue 39 row 7)', () => {
  test('a path alone is a GET', async () => {
    const r = await runOpcli(['api', '/v1/orders', '--query', 'size=2'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).edges).toHaveLength(2);
    expect(sandbox.requests.map((q) => [q.method, q.path])).toEqual([['GET', '/v1/orders']]);
  });

  test('--data without a method is a POST; -X and a method argument choose another', async () => {
    const posted = await runOpcli(['api', '/v1/oauth/session/verify', '--data', '-'], { env, stdin: '{"session_token":"x"}' });
    expect(posted.stderr).not.toMatch(/missing required argument/);
    const put = await runOpcli(['api', '-X', 'put', '/v1/orders/ord_000001', '--data', JSON.stringify(ORDER)], { env });
    expect(put.code, put.stderr).toBe(0);
    const named = await runOpcli(['api', 'PUT', '/v1/orders/ord_000002', '--data', JSON.stringify(ORDER)], { env });
    expect(named.code, named.stderr).toBe(0);
    expect(sandbox.requests.map((q) => [q.method, q.path])).toEqual([
      ['POST', '/v1/oauth/session/verify'],
      ['PUT', '/v1/orders/ord_000001'],
      ['PUT', '/v1/orders/ord_000002'],
    ]);
  });

  test('two different methods, or a method that is not one, are usage errors and send nothing', async () => {
    const twice = await runOpcli(['api', 'GET', '/v1/orders', '-X', 'DELETE'], { env });
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/Two methods were given: GET as an argument and DELETE with --method/);
    const unknown = await runOpcli(['api', 'FETCH', '/v1/orders'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown method "FETCH"/);
    const paths = await runOpcli(['api', '/v1/orders', '/v1/orders/ord_000001'], { env });
    expect(paths.code).toBe(2);
    expect(paths.stderr).toMatch(/opcli api takes one path, after a method or alone; "\/v1\/orders" and "\/v1\/orders\/ord_000001" were given/);
    expect(sandbox.requests).toHaveLength(0);
  });
});

describe('JSON nested deeper than opcli reads (issue 38 row 12)', () => {
  test.each([
    ['inline', ['api', 'POST', '/v1/orders', '--data', nested(100_000)]],
    ['on standard input', ['api', 'PUT', '/v1/orders/ord_000001', '--data', '-']],
    ['to orders update', ['orders', 'update', 'ord_000001', '--data', '-']],
  ])('--data %s: a usage error naming the limit, nothing sent', async (_, argv) => {
    const r = await runOpcli(argv, { env, stdin: `[${nested(100_000)}]` });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/nests arrays and objects more than 100 levels deep, the most opcli reads; nothing was sent/);
    expect(r.stderr).not.toMatch(/stack|connection/i);
    expect(sandbox.requests.filter((q) => q.method !== 'GET')).toHaveLength(0);
  });

  test('100 levels are sent; 101 are not', async () => {
    const deepest = `[${'['.repeat(99)}${']'.repeat(99)}]`;
    const ok = await runOpcli(['api', 'POST', '/v1/claims/offline', '--data', deepest], { env });
    expect(ok.stderr).not.toMatch(/levels deep/);
    expect(sandbox.requests.map((q) => q.body)).toEqual([deepest]);
    const over = await runOpcli(['api', 'POST', '/v1/claims/offline', '--data', `[${deepest}]`], { env });
    expect(over.code).toBe(2);
    expect(sandbox.requests).toHaveLength(1);
  });
});

describe('an answer nested 100,000 deep', () => {
  test.each([
    [200, ['api', 'GET', '/v1/orders'], 0],
    [200, ['--verbose', 'api', 'GET', '/v1/orders'], 0],
    [422, ['api', 'POST', '/v1/claims/offline', '--data', '{}'], 2],
    [500, ['api', 'GET', '/v1/orders'], 1],
  ])('answered %d to %j: printed as it came, no crash', async (status, argv, code) => {
    const server = await localServer(status, nested(100_000));
    const r = await runAgainst(server.url, argv as string[]);
    expect(r.code, r.stderr.slice(0, 500)).toBe(code);
    expect(r.stdout).toBe(`${nested(100_000)}\n`);
    expect(r.stderr).not.toMatch(/stack size|unexpected failure|connection was lost/);
  });
});

describe('a number more precise than a number holds is refused, not rounded (issue 38 row 12)', () => {
  test('a field flag names the flag and what it would become', async () => {
    const r = await runOpcli(['orders', 'update', 'ord_000001', '--total', '19.999999999999999999', '--dry-run'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /--total "19.999999999999999999" has more digits than a number holds exactly \(at most 15 significant digits\), and would be sent as 20/,
    );
    expect(r.stdout).toBe('');
    const fine = await runOpcli(['orders', 'update', 'ord_000001', '--total', '19.99', '--dry-run', '--json'], { env });
    expect(fine.code, fine.stderr).toBe(0);
    expect(JSON.parse(fine.stdout).body.total).toBe(19.99);
  });

  test.each([
    ['orders update', ['orders', 'update', 'ord_000001', '--data', '-']],
    ['api', ['api', 'PUT', '/v1/orders/ord_000001', '--data', '-']],
  ])('--data of %s names the number', async (_, argv) => {
    const r = await runOpcli(argv, { env, stdin: '{"sourceOrderNumber":"#9 19.999999999999999999","currency":"USD","total":19.999999999999999999}' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /standard input holds the number 19.999999999999999999, which has more digits than a number holds exactly .* would be sent as 20; nothing was sent/,
    );
    expect(sandbox.requests.filter((q) => q.method === 'PUT')).toHaveLength(0);
  });
});

describe('-H names that JavaScript objects carry are headers like any other', () => {
  test.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])('-H "%s: x" is sent', async (name) => {
    const server = await localServer(200, '{}');
    const r = await runAgainst(server.url, ['api', 'GET', '/v1/orders', '-H', `${name}: x`, '-H', `${name}: y`]);
    expect(r.code, r.stderr).toBe(0);
    const sent = server.raw[0] ?? [];
    expect(sent[sent.indexOf(name.toLowerCase()) + 1]).toBe('x, y');
  });
});

describe('secrets typed as arguments are warned about, masked (issue 38 row 12)', () => {
  const SECRET = 'k3y-5ecret-0123456789';
  const warning = /Warning: .* given as an argument is visible to other users in `ps` and stays in your shell history/;

  test.each([
    ['a credential header', ['-H', `X-Api-Key: ${SECRET}`], /the x-api-key header given as an argument .* next time use `-H @FILE`/],
    ['a *-Token header', ['-H', `X-Shop-Token: ${SECRET}`], /the x-shop-token header/],
    ['a Cookie', ['-H', `Cookie: sid=${SECRET}`], /the cookie header/],
    ['--query access_token', ['--query', `access_token=${SECRET}`], /the access_token query parameter given as an argument/],
    ['inline --data', ['--data', JSON.stringify({ ...ORDER, meta: { password: SECRET } })], /"password" in --data given as an argument .* `--data @FILE`/],
  ])('%s: sent, warned about on stderr, never printed', async (_, flags, said) => {
    const where = flags.includes('--data') ? ['PUT', '/v1/orders/ord_000001'] : ['GET', '/v1/orders'];
    const r = await runOpcli(['--verbose', 'api', ...where, ...flags], { env });
    expect(sandbox.requests).toHaveLength(1);
    expect(r.stderr).toMatch(warning);
    expect(r.stderr).toMatch(said);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(JSON.stringify(sandbox.requests[0])).toContain(SECRET);
  });

  test('no warning for the same secrets from files, nor for headers and keys that are not secrets', async () => {
    const headers = join(dir, 'headers.txt');
    writeFileSync(headers, `X-Api-Key: ${SECRET}\n\nX-Request-Id: 7\n`, { mode: 0o600 });
    const body = join(dir, 'body.json');
    writeFileSync(body, JSON.stringify({ ...ORDER, meta: { password: SECRET } }));
    const r = await runOpcli(['api', 'PUT', '/v1/orders/ord_000001', '-H', `@${headers}`, '--data', `@${body}`, '-H', 'Idempotency-Key: 42', '-q', 'size=1'], {
      env,
    });
    expect(r.stderr).not.toMatch(/Warning/);
    expect(sandbox.requests[0]?.headers['x-api-key']).toBe(SECRET);
    expect(sandbox.requests[0]?.headers['x-request-id']).toBe('7');
  });
});
