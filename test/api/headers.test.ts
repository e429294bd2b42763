/** `opcli api -H 'Name: value'`: sent as given, repeatable, refused where it would override opcli or inject a header, masked when secret. */
import { describe, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { profileSuite, runOpcli } from '../helpers.js';

let sandbox: Sandbox;
let env: Record<string, string>;
let accessToken: string | undefined;
profileSuite((s) => ({ sandbox, env, accessToken } = s), { sandbox: { orders: 12 } });

describe('opcli api -H', () => {
  test('sends each header, a repeated name joined, with the token of the profile', async () => {
    const r = await runOpcli(
      ['api', 'GET', '/v1/orders', '-q', 'size=2', '-H', 'X-Request-Id: 42', '--header', 'Accept-Language:fr', '-H', 'x-request-id: 43'],
      {
        env,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).edges).toHaveLength(2);
    const sent = sandbox.requests[0]?.headers ?? {};
    expect(sent['x-request-id']).toBe('42, 43');
    expect(sent['accept-language']).toBe('fr');
    expect(sent.authorization).toBe(`Bearer ${accessToken}`);
  });

  test('--paginate sends the headers with every page', async () => {
    const r = await runOpcli(['api', 'GET', '/v1/orders', '--paginate', '-q', 'size=5', '-H', 'X-Trace: t1'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(sandbox.requests.map((q) => q.headers['x-trace'])).toEqual(['t1', 't1', 't1']);
  });

  test.each([
    ['Authorization: Bearer svc_at_other', /--header cannot set Authorization: opcli sends the profile's bearer token/],
    ['authorization:Basic abc', /--header cannot set authorization/],
    ['Host: evil.example', /--header cannot set Host: the host comes from the profile's base URL/],
    ['Proxy-Authorization: Basic abc', /--header cannot set Proxy-Authorization/],
    ['Content-Length: 0', /--header cannot set Content-Length/],
    ['Transfer-Encoding: chunked', /--header cannot set Transfer-Encoding/],
    ['X-Id: 1\r\nAuthorization: Bearer x', /--header "X-Id" holds a control character \(a CR or LF would add a header of its own\); nothing was sent/],
    ['X-Id: a\nb', /holds a control character/],
    ['X-Id: a\u0000b', /holds a control character/],
    ['X Id: 1', /--header: "X Id" is not a header name/],
    ['no colon here', /--header expects 'Name: value', got "no colon here"/],
    [': value', /--header expects 'Name: value'/],
  ])('refuses %j with exit 2 and sends nothing', async (header, said) => {
    const r = await runOpcli(['api', 'GET', '/v1/orders', '-H', header], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(said);
    expect(sandbox.requests).toHaveLength(0);
  });

  test('--verbose shows the headers sent, a secret one masked, here and in errors', async () => {
    const secret = 'shop-key-5f1d2c9e7a';
    const r = await runOpcli(
      ['--verbose', 'api', 'GET', '/v1/orders', '-q', 'size=1', '-H', 'X-Request-Id: 42', '-H', `X-Shop-Key: ${secret}`, '-H', `X-Custom: ${secret}`],
      {
        env,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/> x-request-id: 42/);
    expect(r.stderr).toMatch(/> x-shop-key: \S/);
    expect(r.stderr).toMatch(/> x-custom: \S/);
    expect(r.stdout + r.stderr).not.toContain(secret);
    expect(sandbox.requests[0]?.headers['x-shop-key']).toBe(secret);
    const failed = await runOpcli(['--verbose', 'api', 'GET', '/v1/nowhere', '-H', `X-Api-Token: ${secret}`], { env });
    expect(failed.code).not.toBe(0);
    expect(failed.stdout + failed.stderr).not.toContain(secret);
  });
});
