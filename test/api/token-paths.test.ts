/**
 * `opcli api` decides which endpoints get no bearer token on the path as a server reads it
 * (issue 27, item 6): a fragment is refused, dot segments (plain and percent-encoded), repeated
 * slashes, encoded letters and case do not smuggle the token to the token or session endpoints.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { endpointOf } from '../../src/commands/api/args.js';
import { runOpcli, tempConfigDir } from '../helpers.js';

interface Received {
  method: string;
  url: string;
  authorization?: string;
}

let server: Server;
let url: string;
const received: Received[] = [];
let config: ReturnType<typeof tempConfigDir>;

beforeAll(async () => {
  server = createServer((req, res) => {
    received.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization });
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"ok"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  config = tempConfigDir();
});
afterAll(async () => {
  config.cleanup();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  received.length = 0;
});

const TOKEN = 'svc_at_must_not_travel';
const api = (method: string, path: string) =>
  runOpcli(['api', method, path, '--data', '{}'], { env: { OPCLI_CONFIG_DIR: config.dir, OPCLI_BASE_URL: url, OPCLI_TOKEN: TOKEN } });

describe('opcli api: the endpoints that take no token, however the path is written', () => {
  test.each([
    ['/v1/./oauth/token', '/v1/oauth/token'],
    ['/v1/x/../oauth/token', '/v1/oauth/token'],
    ['/v1/%2e/oauth/token', '/v1/oauth/token'],
    ['/v1/x/%2E%2e/oauth/token', '/v1/oauth/token'],
    ['/v1//oauth///token', '/v1//oauth///token'],
    ['/V1/OAUTH/TOKEN', '/V1/OAUTH/TOKEN'],
    ['/v1/oauth/%74oken', '/v1/oauth/%74oken'],
    ['/v1/oauth/token/', '/v1/oauth/token/'],
    ['/v1/oauth/token;x=1', '/v1/oauth/token;x=1'],
    ['/v1/oauth/session/./verify', '/v1/oauth/session/verify'],
    ['/v1/oauth/revoke?x=1', '/v1/oauth/revoke?x=1'],
  ])('POST %s reaches the server as %s with no Authorization header', async (path, sent) => {
    const r = await api('POST', path);
    expect(r.code, r.stderr).toBe(0);
    expect(received).toEqual([{ method: 'POST', url: sent, authorization: undefined }]);
    expect(r.stderr).not.toContain(TOKEN);
  });

  test.each(['/v1/oauth/token#x', '/v1/oauth/session/verify#', '/v1/orders#top'])('a fragment (%s) is refused, exit 2, nothing sent', async (path) => {
    const r = await api('POST', path);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`Error: The path argument "${path}" holds a fragment (#…)`);
    expect(r.stderr).toContain('%23');
    expect(received).toEqual([]);
  });

  test('every other path carries the token, written any way', async () => {
    for (const path of ['/v1/orders', '/v1/./orders', '/v1/oauth/tokens', '/v1/oauth/token2']) {
      received.length = 0;
      const r = await api('POST', path);
      expect(r.code, r.stderr).toBe(0);
      expect(received[0]?.authorization).toBe(`Bearer ${TOKEN}`);
    }
  });

  test('the comparison form: dots, encodings, slashes, parameters and case folded until stable', () => {
    expect(endpointOf('/V1//oauth/./%74oken/')).toBe('/v1/oauth/token');
    expect(endpointOf('/v1/%252e/oauth/token')).toBe('/v1/oauth/token');
    expect(endpointOf('/v1/oauth/token?grant_type=x')).toBe('/v1/oauth/token');
    expect(endpointOf('/v1/oauth/%')).toBe('/v1/oauth/%');
    expect(endpointOf('/v1/orders/')).toBe('/v1/orders');
  });
});
