/**
 * A gateway's 502 after a POST (issue 29): nginx answers 502 alike when it could not connect to the
 * service (nothing was forwarded) and when the service closed the connection after reading the
 * request (it may have acted on it), so a client cannot tell the two apart. A batch meeting it leaves
 * at most --concurrency rows uncertain, and each says in words what the 502 means, how to check, and
 * how to name a gateway that answers 502 only before forwarding.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { writeRows } from '../claims/fixtures.js';
import { runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';
import { deadPort, missingInfra, type Nginx, startNginx } from '../infra/index.js';

const missing = missingInfra('nginx');

/** A service that reads each request in full and closes the connection without answering: it "lost" every request it read. */
interface LostService {
  url: string;
  /** The bodies of the POSTs it read. */
  posts: string[];
  close(): Promise<void>;
}

async function startLostService(): Promise<LostService> {
  const posts: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      if (head.startsWith('POST ')) posts.push(buffered.subarray(end + 4, end + 4 + length).toString('utf8'));
      socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    posts,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The row number a claim body carries (`row i` in item.details). */
function rowOf(body: string): number {
  return Number(/"details":"row (\d+)"/.exec(body)?.[1]);
}

describe.skipIf(missing)("a gateway's 502 after a POST", () => {
  let sandbox: Sandbox;
  let lost: LostService;
  let gateway: Nginx | undefined;
  let cfg: { dir: string; cleanup: () => void };

  beforeAll(async () => {
    sandbox = await startSandbox();
    lost = await startLostService();
  });
  afterAll(async () => {
    await lost?.close();
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

  it('nginx answers the same 502 whether the service refused the connection or read the request and closed it', async () => {
    gateway = await startNginx({ upstream: lost.url });
    const agent = new Agent();
    const post = async () => {
      const res = await request(`${gateway?.url}/v1/claims/offline`, {
        method: 'POST',
        body: '{"a":1}',
        headers: { 'content-type': 'application/json' },
        dispatcher: agent,
      });
      return { status: res.statusCode, type: res.headers['content-type'], body: await res.body.text() };
    };
    const before = lost.posts.length;
    const afterReading = await post();
    expect(lost.posts.length).toBe(before + 1);
    await gateway.reconfigure({ upstream: `http://127.0.0.1:${await deadPort()}` });
    const refused = await post();
    await agent.close();
    expect(afterReading.status).toBe(502);
    expect(refused).toEqual(afterReading);
  });

  it('a batch meeting it stops with at most --concurrency rows uncertain, each saying what the 502 means and how to check', async () => {
    gateway = await startNginx({ upstream: lost.url });
    const path = join(cfg.dir, 'claims.csv');
    writeRows(path, 200);
    const before = lost.posts.length;
    const env = { OPCLI_CONFIG_DIR: cfg.dir, OPCLI_BASE_URL: gateway.url, OPCLI_TOKEN: sandbox.issueTokens().access_token };
    const res = await runOpcli(['claims', 'file', '--from', path, '--concurrency', '4'], { env });
    const message =
      'POST /v1/claims/offline failed: the server answered 502 Bad Gateway. The gateway in front of the service could not reach it or lost it mid-request: ' +
      "the claim was probably not filed, but may have been; before sending it again, look for it in the merchant dashboard (the order-protection app's claims, by the customer's e-mail and the item): " +
      'the API cannot look a claim up. `opcli claims history` shows when opcli sent it. ' +
      "If your gateway answers 502 only before it forwards a request, add 502 to the profile's not-processed-statuses.";

    expect(res.code).toBe(1);
    const uncertain = Number(/, (\d+) uncertain, \d+ not sent/.exec(res.stderr)?.[1]);
    expect(uncertain).toBeGreaterThanOrEqual(1);
    expect(uncertain).toBeLessThanOrEqual(4);
    // stderr: the first row in full, the others of the same cause folded into one line with the same words.
    const lines = res.stderr.split('\n');
    const first = lines.filter((l) => /^line \d+: uncertain: /.test(l));
    expect(first).toHaveLength(1);
    const firstLine = Number(/^line (\d+)/.exec(first[0] ?? '')?.[1]);
    expect(first[0]).toBe(`line ${firstLine}: uncertain: ${message}`);
    const folded = lines.find((l) => l.startsWith(`${uncertain - 1} more lines uncertain for the same cause (${message}): lines `));
    if (uncertain > 1) expect(folded).toBeDefined();
    const others = folded ? [...(folded.split('): lines ')[1] ?? '').matchAll(/\d+/g)].map((m) => Number(m[0])) : [];
    // Here every uncertain row's request did reach the service (it read it, then lost it).
    const reached = new Set(lost.posts.slice(before).map(rowOf));
    for (const line of [firstLine, ...others]) expect(reached.has(line - 1)).toBe(true);
    expect(lines.filter((l) => l.includes('The service is down'))).toHaveLength(1);
  });

  it('with --jsonl, each uncertain row carries the same words in its error', async () => {
    gateway = await startNginx({ upstream: lost.url });
    const path = join(cfg.dir, 'claims.csv');
    writeRows(path, 50);
    const env = { OPCLI_CONFIG_DIR: cfg.dir, OPCLI_BASE_URL: gateway.url, OPCLI_TOKEN: sandbox.issueTokens().access_token };
    const res = await runOpcli(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '4'], { env });
    const rows = res.stdout
      .trim()
      .split('\n')
      .filter((l) => l && !l.startsWith('{"summary"'))
      .map((l) => JSON.parse(l) as { line: number; status: string; error?: string });
    const uncertain = rows.filter((r) => r.status === 'uncertain');
    expect(res.code).toBe(1);
    expect(uncertain.length).toBeGreaterThanOrEqual(1);
    expect(uncertain.length).toBeLessThanOrEqual(4);
    for (const r of uncertain) {
      expect(r.error).toContain('could not reach it or lost it mid-request: the claim was probably not filed, but may have been');
      expect(r.error).toContain('`opcli claims history`');
      expect(r.error).toContain('not-processed-statuses');
    }
  });
});
