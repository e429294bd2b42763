/**
 * Issue 27, item 1: the provider token belongs to the provider URL it was stored for. With
 * provider-api-url moved to server B (a loopback server that records everything and answers 401),
 * B receives nothing: exit 4, both origins named, `opcli giftcard setup` as the way on.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { aliceClaim, fixture, giftcardSuite, ledgerLines } from './fixture.js';

giftcardSuite();

let serverB: Server;
let received: { method: string; url: string; headers: IncomingMessage['headers'] }[];
let urlB: string;

beforeEach(async () => {
  received = [];
  serverB = createServer((req, res) => {
    received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Invalid API key' }));
    });
  });
  await new Promise<void>((resolve) => serverB.listen(0, '127.0.0.1', resolve));
  const address = serverB.address();
  urlB = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterEach(async () => {
  await new Promise<void>((resolve) => serverB.close(() => resolve()));
});

describe('the provider token belongs to its provider URL', () => {
  test('a moved provider-api-url gets neither the check nor an issuance, and is told why', async () => {
    const fx = await fixture();
    const a = new URL(fx.sandbox.url).origin;
    const set = await fx.run(['config', 'set', 'provider-api-url', `${urlB}/provider`]);
    expect(set.code).toBe(0);
    expect(set.stderr).toContain(`Warning: the gift card provider token of profile "default" was stored for ${a}; opcli will not send it to ${urlB}`);
    const stored = JSON.parse(readFileSync(`${fx.dir}/credentials.json`, 'utf8')).profiles.default;
    expect(stored.providerTokenOrigin).toBe(a);

    const check = await fx.run(['giftcard', 'setup', '--check']);
    expect(check.code).toBe(4);
    expect(check.stderr).toContain(`The gift card provider token was stored for ${a}, but provider-api-url is now ${urlB}`);
    expect(check.stderr).toContain('opcli giftcard setup');
    const issue = await fx.run(aliceClaim('C-origin'));
    expect(issue.code).toBe(4);
    expect(issue.stderr).toContain(`provider-api-url is now ${urlB}`);
    // Nothing was sent, so nothing may have been paid: the ledger says failed, never uncertain.
    expect(issue.stderr).not.toContain('may or may not');
    expect(
      ledgerLines(fx.dir)
        .filter((l) => l.type === 'outcome')
        .map((l) => l.status),
    ).not.toContain('uncertain');
    expect(received).toEqual([]);
    expect(fx.providerCalls()).toEqual([]);
  });

  test('a credit refused for the token origin, on the credit API path, is recorded failed: nothing was sent, nothing paid', async () => {
    const fx = await fixture({ fakeClock: true });
    expect((await fx.run(['config', 'set', 'provider-api-url', `${urlB}/provider`])).code).toBe(0);
    const issue = await fx.run([
      'giftcard',
      'issue',
      '--claim',
      'C-301',
      '--order',
      '3',
      '--amount',
      '5',
      '--email',
      'bob@example.com',
      '--name',
      'Bob',
      '--yes',
    ]);
    expect(issue.code).toBe(4);
    expect(issue.stderr).toContain(`provider-api-url is now ${urlB}`);
    expect(issue.stderr).not.toContain('may or may not');
    expect(issue.stderr).not.toContain('Recorded as uncertain');
    expect(ledgerLines(fx.dir).find((l) => l.type === 'outcome')).toMatchObject({ status: 'failed' });
    expect(received).toEqual([]);
  });

  test('`giftcard setup` with the new URL and its token binds that token there; the old token never goes there', async () => {
    const fx = await fixture();
    const fresh = 'giftly_token_for_server_b';
    const setup = await fx.run(['giftcard', 'setup', '--api-url', `${urlB}/provider`, '--token-stdin', '--no-check'], { stdin: fresh });
    expect(setup.code).toBe(0);
    expect(setup.stderr).not.toContain('Warning');
    expect(setup.stderr).not.toContain(fresh);
    const stored = JSON.parse(readFileSync(`${fx.dir}/credentials.json`, 'utf8')).profiles.default;
    expect(stored.providerTokenOrigin).toBe(urlB);
    await fx.run(['giftcard', 'setup', '--check']);
    const tokens = received.flatMap((r) => Object.entries(r.headers).filter(([name]) => name.endsWith('-access-token')));
    expect(tokens.length).toBeGreaterThan(0);
    for (const [, value] of tokens) expect(value).toBe(fresh);
    expect(JSON.stringify(received)).not.toContain(fx.sandbox.store.providerToken);
  });
});
