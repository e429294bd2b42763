/**
 * Paths that must never collide, journals that cannot be read, outcomes that say what happened
 * (store mismatch, a request that never left) and Ctrl-C twice.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { LOCK_WAIT_MS } from '../../src/claims/record.js';
import { acquireFileLock } from '../../src/config/lock.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';
import { virtualTime, virtualUntil } from '../virtual-time.js';
import { COLUMNS, claimBodies, duplicates, results, row, rowOf, writeCsv, writeRows, claimsSuite, journalOf } from './fixtures.js';

let sandbox: Sandbox;
let dir: string;
const { created, env } = claimsSuite((s) => ({ sandbox, dir } = s));

/** The record of claims' path in the config folder, made by a batch of no rows (nothing sent). */
async function recordOf(): Promise<string> {
  const empty = join(dir, 'empty.csv');
  writeRows(empty, 0);
  expect((await runOpcli(['claims', 'file', '--from', empty], { env: env() })).code).toBe(0);
  const [name] = readdirSync(dir).filter((n) => /^claims-record-[0-9a-f]+\.jsonl$/.test(n));
  return join(dir, name as string);
}

describe('paths that must never collide', () => {
  it('--out, --journal and the input being one file (by any name) is exit 2, nothing sent, nothing overwritten', async () => {
    const input = join(dir, 'claims.csv');
    writeRows(input, 3);
    const journal = join(dir, 'j.jsonl');
    // A journal an earlier version left under that name (this version writes none): never overwritten either.
    writeFileSync(journal, '', { mode: 0o600 });
    const first = await runOpcli(['claims', 'file', '--from', input, '--journal', journal], { env: env() });
    expect(first.code).toBe(0);
    const inputText = readFileSync(input, 'utf8');
    const journalText = readFileSync(journal, 'utf8');
    symlinkSync(journal, join(dir, 'link-to-journal.jsonl'));
    symlinkSync(input, join(dir, 'link-to-input.csv'));
    const cases: [string[], string][] = [
      [['--journal', journal, '--out', journal], `--out ${journal} is the same file as --journal ${journal}`],
      [['--journal', journal, '--out', join(dir, 'link-to-journal.jsonl')], 'is the same file as --journal'],
      [['--journal', input], `--journal ${input} is the same file as --from`],
      [['--journal', journal, '--out', input], `--out ${input} is the same file as --from`],
      [['--journal', journal, '--out', join(dir, 'link-to-input.csv')], 'is the same file as --from'],
    ];
    for (const [flags, message] of cases) {
      const res = await runOpcli(['claims', 'file', '--from', input, ...flags], { env: env() });
      expect(res.code, flags.join(' ')).toBe(2);
      expect(res.stderr).toContain(message);
      expect(res.stderr).toContain('nothing was sent or written');
    }
    expect(readFileSync(input, 'utf8')).toBe(inputText);
    expect(readFileSync(journal, 'utf8')).toBe(journalText);
    expect(claimBodies(sandbox)).toHaveLength(3);
  });

  it('a missing folder for --journal or --out is a usage error naming the folder', async () => {
    const input = join(dir, 'claims.csv');
    writeRows(input, 2);
    const res = await runOpcli(['claims', 'file', '--from', input, '--journal', 'no/such/dir/j.jsonl'], { env: env(), cwd: dir });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`--journal no/such/dir/j.jsonl: the folder ${join(dir, 'no/such/dir')} does not exist.`);
    const out = await runOpcli(['claims', 'file', '--from', input, '--out', join(dir, 'nope', 'out.csv')], { env: env() });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('the folder');
    expect(claimBodies(sandbox)).toHaveLength(0);
  });

  it('a journal named through a link is refused; two concurrent runs through different names of one input file each row once', async () => {
    const input = join(dir, 'claims.csv');
    writeRows(input, 120);
    mkdirSync(join(dir, 'other'));
    const journal = join(dir, 'j.jsonl');
    writeFileSync(journal, '', { mode: 0o600 });
    symlinkSync(journal, join(dir, 'other', 'j.jsonl'));
    sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', latencyMs: 5 }]);
    // Links are never followed for the files opcli writes (docs/guides/batch-claims.md): one name, one lock.
    const linked = await runOpcli(['claims', 'file', '--from', input, '--journal', join(dir, 'other', 'j.jsonl')], { env: env() });
    expect(linked.code).toBe(2);
    expect(linked.stderr).toContain(`The journal ${join(dir, 'other', 'j.jsonl')} is a symbolic link (to ${journal})`);
    expect(claimBodies(sandbox)).toHaveLength(0);
    const [a, b] = await Promise.all([
      runOpcli(['claims', 'file', '--from', input, '--journal', journal, '--lock-wait', '1m'], { env: env() }),
      runOpcli(['claims', 'file', '--from', input, '--journal', journal, '--lock-wait', '1m'], { env: env() }),
    ]);
    expect([a.code, b.code].sort()).toEqual([0, 0]);
    expect(created()).toHaveLength(120);
    expect(duplicates(claimBodies(sandbox))).toEqual([]);

    // The default journal sits beside the input's real file: a symlinked input name shares it.
    const input2 = join(dir, 'second.csv');
    writeCsv(
      input2,
      Array.from({ length: 60 }, (_, i) => row(500 + i)),
    );
    symlinkSync(input2, join(dir, 'other', 'second.csv'));
    const [c, d] = await Promise.all([
      runOpcli(['claims', 'file', '--from', input2], { env: env() }),
      runOpcli(['claims', 'file', '--from', join(dir, 'other', 'second.csv')], { env: env() }),
    ]);
    expect([c.code, d.code]).toEqual([0, 0]);
    expect(created()).toHaveLength(180);
    expect(duplicates(claimBodies(sandbox))).toEqual([]);
  }, 30_000);
});

describe("a run whose record's lock another run takes", () => {
  it('stops sending at once: rows waiting for the limiter are not_sent, nothing is sent twice, exit 1 naming the record', async () => {
    const input = join(dir, 'claims.csv');
    writeRows(input, 200);
    const record = await recordOf();
    const lock = `${record.slice(0, -'.jsonl'.length)}.lock`;
    // Paced on virtual time so that rows wait for the limiter when the lock is taken: the clock stands
    // while the test takes it, until the run has seen (on its own timer) that the lock is gone.
    const time = virtualTime();
    let sentAtTake = -1;
    let settled = false;
    time.onQuiet(async () => {
      if (sentAtTake >= 0 || created().length < 10) return;
      // Another run takes the lock (as a broken clock or a stalled reclaim could let it): a new owner record.
      renameSync(lock, `${lock}.aside`);
      mkdirSync(lock);
      writeFileSync(join(lock, 'owner'), JSON.stringify({ pid: process.pid, host: hostname(), token: 'another-run' }));
      sentAtTake = claimBodies(sandbox).length;
      for (let i = 0; i < 200 && !settled; i++) await new Promise((r) => setTimeout(r, 5));
    });
    const running = runOpcli(['claims', 'file', '--from', input, '--rate', '20/s', '--concurrency', '4', '--jsonl'], {
      env: env(),
      now: time.now,
      sleep: time.sleep,
    }).finally(() => {
      settled = true;
      time.onQuiet(undefined);
      time.stop();
    });
    const res = await running;
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`The lock on the record of claims ${record} was taken by another run; this run stopped sending.`);
    const bodies = claimBodies(sandbox);
    expect(duplicates(bodies)).toEqual([]);
    // Far from all 200 rows went: the run stopped, and rows it had prepared were reported not_sent and not received.
    expect(bodies.length).toBeLessThan(200);
    expect(bodies.length).toBeGreaterThanOrEqual(sentAtTake);
    const rows = results(res.stdout);
    const notSent = rows.filter((r) => r.status === 'not_sent');
    expect(notSent.length).toBeGreaterThan(0);
    const received = new Set(bodies.map(rowOf));
    for (const r of notSent) expect(received.has(r.line - 1)).toBe(false);
    // The run did not remove the lock that is not its own.
    expect(readFileSync(join(lock, 'owner'), 'utf8')).toContain('another-run');
  }, 30_000);
});

describe("--lock-wait (another run holds the record's lock)", () => {
  it('0s refuses at once, a duration waits for the other run and then files every row, and a bare number is exit 2; nothing is sent while refused', async () => {
    const input = join(dir, 'claims.csv');
    writeRows(input, 5);
    const record = await recordOf();
    // Another live run (this process) holds the record's lock: a batch's one lock (no journal is written).
    const other = await acquireFileLock(dirname(record), basename(record).slice(0, -'.jsonl'.length));
    let released = false;
    try {
      const refused = await runOpcli(['claims', 'file', '--from', input, '--lock-wait', '0s'], { env: env() });
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain('Another opcli run is filing claims for this store');
      expect(refused.stderr).toContain('nothing was sent');
      expect(refused.stderr).toContain('--lock-wait waits longer');
      expect(claimBodies(sandbox)).toHaveLength(0);

      // Any other duration is waited for, all of it and no longer, on the run's clock (virtual time:
      // 2 s, less than the default 5 s, so the flag is what decides).
      const shortClock = virtualTime();
      const shortStart = shortClock.now();
      const shortWait = await runOpcli(['claims', 'file', '--from', input, '--lock-wait', '2s'], { env: env(), timers: shortClock.clock }).finally(() =>
        shortClock.stop(),
      );
      const waited = shortClock.now() - shortStart;
      expect(shortWait.code).toBe(3);
      expect(shortWait.stderr).toContain('Another opcli run is filing claims for this store');
      expect(waited).toBeGreaterThanOrEqual(2_000);
      expect(waited).toBeLessThan(LOCK_WAIT_MS);
      expect(claimBodies(sandbox)).toHaveLength(0);

      const bare = await runOpcli(['claims', 'file', '--from', input, '--lock-wait', '5'], { env: env() });
      expect(bare.code).toBe(2);
      expect(bare.stderr).toContain('--lock-wait "5" has no unit');
      const single = await runOpcli(['claims', 'file', '--lock-wait', '1s', '--issue-type', 'DAMAGED'], { env: env() });
      expect(single.code).toBe(2);
      expect(single.stderr).toContain('--lock-wait only apply to a batch (--from FILE).');
      expect(claimBodies(sandbox)).toHaveLength(0);

      // A run willing to wait starts while the lock is held, and goes on once the other run lets go. On
      // virtual time: the other run lets go once the waiting one has waited past the default wait (so
      // only --lock-wait kept it waiting), when it is quiet: what it sent by then is what it sent while refused.
      const time = virtualTime();
      const start = time.now();
      let sentWhileHeld = -1;
      time.onQuiet(() => {
        if (released || time.now() - start <= LOCK_WAIT_MS) return;
        sentWhileHeld = claimBodies(sandbox).length;
        other.release();
        released = true;
      });
      const timers = virtualUntil(time, () => released);
      const res = await runOpcli(['claims', 'file', '--from', input, '--lock-wait', '10m', '--jsonl'], { env: env(), timers }).finally(() => {
        time.onQuiet(undefined);
        time.stop();
      });
      expect(released).toBe(true);
      expect(sentWhileHeld).toBe(0);
      expect(res.code).toBe(0);
      expect(results(res.stdout).map((r) => r.status)).toEqual(Array(5).fill('filed'));
      expect(claimBodies(sandbox).map(rowOf).sort()).toEqual([1, 2, 3, 4, 5]);
    } finally {
      if (!released) other.release();
    }
  });
});

describe('journals that cannot be read', () => {
  it('a journal of 0.1.0 is recognised and refused (exit 2) with what to do; nothing is sent', async () => {
    const input = join(dir, 'claims.csv');
    writeRows(input, 3);
    const journal = `${input}.journal.jsonl`;
    writeFileSync(
      journal,
      `${JSON.stringify({ key: 'a'.repeat(32), line: 2, status: 'sending', at: '2026-11-20T10:00:00Z' })}\n${JSON.stringify({ key: 'a'.repeat(32), line: 2, status: 'filed', sourceOrderId: 'ord_1', at: '2026-11-20T10:00:01Z' })}\n`,
    );
    const res = await runOpcli(['claims', 'file', '--from', input], { env: env() });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('was written by opcli 0.1.0');
    expect(res.stderr).toContain('remove the rows it shows filed (or uncertain) from the input, move the old journal aside');
    expect(claimBodies(sandbox)).toHaveLength(0);
  });

  it('a damaged line is exit 2 naming the line, never "start over"; a torn last line is not damage', async () => {
    const input = join(dir, 'claims.csv');
    writeRows(input, 3);
    const first = await runOpcli(['claims', 'file', '--from', input], { env: env() });
    expect(first.code).toBe(0);
    // The journal 0.2.0 would have written of that run (this version writes none, but reads one it finds).
    const journal = journalOf(input);
    const lines = readFileSync(journal, 'utf8').split('\n');
    writeFileSync(journal, [...lines.slice(0, 2), '{"key": garbage', ...lines.slice(2)].join('\n'));
    const res = await runOpcli(['claims', 'file', '--from', input], { env: env() });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`The journal ${journal} cannot be read: line 3 is not a record opcli can read.`);
    writeFileSync(journal, `${lines.join('\n')}{"key":"ab`);
    const torn = await runOpcli(['claims', 'file', '--from', input], { env: env() });
    expect(torn.code).toBe(0);
    expect(torn.stderr).toContain('not sent again: 3 filed');
    writeFileSync(journal, 'hello\n');
    const foreign = await runOpcli(['claims', 'file', '--from', input], { env: env() });
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toContain('line 1 is not a record opcli can read');
    expect(claimBodies(sandbox)).toHaveLength(3);
  });
});

/** A CSV with a storeId column: row i's store is `stores[i]`. */
function writeStores(path: string, stores: string[]): void {
  const columns = [...COLUMNS, 'storeId'];
  writeFileSync(path, stringify([columns, ...stores.map((s, i) => columns.map((c) => (c === 'storeId' ? s : (row(i + 1)[c] ?? ''))))]));
}

describe('a claim for another store', () => {
  it('is refused locally when the profile knows the store, with the reason in words; the batch goes on (exit 3)', async () => {
    const path = join(dir, 'claims.csv');
    writeStores(path, [sandbox.store.storeId, 'store_9999', sandbox.store.storeId]);
    const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(res.code).toBe(3);
    expect(res.stderr).toContain(`line 3: invalid, not sent\n  storeId: storeId store_9999 is not the store you are logged in to (${sandbox.store.storeId})`);
    expect(claimBodies(sandbox)).toHaveLength(2);
    const check = await runOpcli(['claims', 'file', '--from', path, '--validate-only'], { env: env() });
    expect(check.code).toBe(3);
    expect(check.stderr).toContain('line 3: invalid, not sent\n  storeId: storeId store_9999 is not the store you are logged in to');
  });

  it('a 403 store_mismatch from the API rejects that row only; the batch goes on (exit 3)', async () => {
    const empty = tempConfigDir();
    try {
      const path = join(dir, 'claims.csv');
      writeStores(path, [sandbox.store.storeId, 'store_9999', sandbox.store.storeId]);
      const token = sandbox.issueTokens().access_token;
      const res = await runOpcli(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '1'], {
        env: { OPCLI_CONFIG_DIR: empty.dir, OPCLI_BASE_URL: sandbox.url, OPCLI_TOKEN: token },
      });
      expect(res.code).toBe(3);
      expect(results(res.stdout).map((r) => r.status)).toEqual(['filed', 'rejected', 'filed']);
      expect(results(res.stdout)[1]?.error).toBe('storeId store_9999 is not the store you are logged in to (403)');
      expect(res.stderr).not.toContain('auth login');
    } finally {
      empty.cleanup();
    }
  });

  it('reads store_mismatch in other body shapes; a 403 for a missing scope still stops the batch (exit 4)', async () => {
    const bodies: [string, string, string][] = [
      ['application/json', JSON.stringify({ errors: [{ code: 'store_mismatch', message: 'wrong store' }] }), 'rejected'],
      ['text/plain', 'storeId does not match the store of this token', 'rejected'],
      ['application/json', JSON.stringify({ error: { code: 'store_mismatch', message: 'Store mismatch' } }), 'rejected'],
      ['application/json', JSON.stringify({ error: 'insufficient_scope', message: 'needs the scope read_claims' }), 'not_sent'],
    ];
    for (const [type, body, status] of bodies) {
      const server: Server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(403, { 'content-type': type });
          res.end(body);
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const empty = tempConfigDir();
      try {
        const path = join(empty.dir, 'claims.csv');
        writeStores(path, ['store_1', 'store_1']);
        const res = await runOpcli(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '1'], {
          env: { OPCLI_CONFIG_DIR: empty.dir, OPCLI_BASE_URL: url, OPCLI_TOKEN: 'svc_at_test' },
        });
        const statuses = results(res.stdout).map((r) => r.status);
        if (status === 'rejected') {
          expect(res.code, body).toBe(3);
          expect(statuses).toEqual(['rejected', 'rejected']);
          expect(results(res.stdout)[0]?.error).toBe('storeId store_1 is not the store you are logged in to (403)');
        } else {
          expect(res.code, body).toBe(4);
          expect(statuses[0]).toBe('not_sent');
          expect(res.stderr).toContain('scope');
        }
      } finally {
        empty.cleanup();
        await new Promise((r) => server.close(r));
      }
    }
  });

  it('a single claims file for another store exits 2 with the same words, locally or from the API', async () => {
    const template = (await runOpcli(['claims', 'template', '--json'], { env: env() })).stdout;
    const data = join(dir, 'claim.json');
    writeFileSync(data, template);
    const local = await runOpcli(['claims', 'file', '--data', data, '--store-id', 'store_9999'], { env: env() });
    expect(local.code).toBe(2);
    expect(local.stderr).toContain(`storeId store_9999 is not the store you are logged in to (${sandbox.store.storeId}); nothing was sent.`);
    const empty = tempConfigDir();
    try {
      const token = sandbox.issueTokens().access_token;
      const remote = await runOpcli(['claims', 'file', '--data', data, '--store-id', 'store_9999'], {
        env: { OPCLI_CONFIG_DIR: empty.dir, OPCLI_BASE_URL: sandbox.url, OPCLI_TOKEN: token },
      });
      expect(remote.code).toBe(2);
      expect(remote.stderr).toContain('storeId store_9999 is not the store you are logged in to (403); nothing was filed.');
      expect(remote.stderr).not.toContain('log in again');
    } finally {
      empty.cleanup();
    }
    expect(created()).toHaveLength(0);
  });
});

describe('a request that never left', () => {
  it('OPCLI_TOKEN with a trailing \\r (read from a Windows file) is trimmed with a warning, and the rows are filed', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 2);
    const token = sandbox.issueTokens().access_token;
    const res = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], { env: { ...env(), OPCLI_TOKEN: `${token}\r` } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/OPCLI_TOKEN/);
    expect(created()).toHaveLength(2);
  });

  it('a stored token undici refuses to send (a trailing \\r) makes the row not_sent, never uncertain, and the rerun sends it', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 3);
    const { CredentialStore } = await import('../../src/config/credentials.js');
    const credentials = await CredentialStore.open(dir);
    const good = credentials.read('default').token;
    await credentials.update('default', (cur) => ({ ...cur, token: cur.token && { ...cur.token, accessToken: `${cur.token.accessToken}\r` } }));
    const res = await runOpcli(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '1'], { env: env() });
    const rows = results(res.stdout);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.status === 'not_sent')).toBe(true);
    expect(res.stderr).toContain('was not sent');
    expect(res.stderr).not.toContain('uncertain:');
    expect(claimBodies(sandbox)).toHaveLength(0);
    await credentials.update('default', (cur) => ({ ...cur, token: good }));
    const rerun = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(rerun.code).toBe(0);
    expect(created()).toHaveLength(3);
  });
});

describe('Ctrl-C twice', () => {
  it('the first says at once how many requests are in flight; the second prints the summary with the rows left uncertain, exit 130', async () => {
    // A sandbox of its own on virtual time, shared with the run: the slow answers wait on its clock,
    // which stands still while the test presses Ctrl-C twice.
    const time = virtualTime();
    const slow = await startSandbox({ clock: time.clock });
    const config = tempConfigDir();
    try {
      await sandboxProfile(slow, config.dir);
      const path = join(config.dir, 'claims.csv');
      writeRows(path, 50);
      // Claims are created at once, answered 400 ms later.
      slow.setFaults([{ method: 'POST', path: '/v1/claims/offline', phase: 'after', latencyMs: 400, after: 4 }]);
      const first = new AbortController();
      const now = new AbortController();
      let stderr = '';
      const inFlight = () => slow.requests.some((r) => r.method === 'POST' && r.path === '/v1/claims/offline' && r.status === 0);
      time.onQuiet(async () => {
        if (first.signal.aborted || slow.claims.length < 4 || !inFlight()) return;
        first.abort(Object.assign(new Error('Interrupted'), { name: 'AbortError' }));
        for (let i = 0; i < 10_000 && !stderr.includes('Stopping:'); i++) await new Promise((r) => setImmediate(r));
        now.abort();
      });
      const res = await runOpcli(['claims', 'file', '--from', path, '--concurrency', '4'], {
        env: { OPCLI_CONFIG_DIR: config.dir },
        now: time.now,
        sleep: time.sleep,
        signal: first.signal,
        stopNow: now.signal,
        onStderr: (text) => {
          stderr += text;
        },
      });
      expect(res.code).toBe(130);
      expect(res.stderr).toMatch(/Stopping: waiting for [1-4] requests? in flight \(Ctrl-C again to stop now\)/);
      expect(res.stderr).toMatch(/Uncertain \(in flight when stopped; the claims may exist\): lines? \d+(, \d+)*\./);
      expect(res.stderr).toMatch(/Filed \d+ claims?; 0 rejected by the API, 0 invalid \(not sent\), [1-4] uncertain/);
    } finally {
      time.onQuiet(undefined);
      time.stop();
      await slow.close();
      config.cleanup();
    }
  });
});

describe('numbers and the progress line', () => {
  it('--item-price 1e3 is a usage error naming the flag (exit 2), nothing sent', async () => {
    const template = (await runOpcli(['claims', 'template', '--json'], { env: env() })).stdout;
    const data = join(dir, 'claim.json');
    writeFileSync(data, template);
    const res = await runOpcli(['claims', 'file', '--data', data, '--item-price', '1e3'], { env: env() });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--item-price: expected a number, got "1e3" (decimal notation, such as 49.99; write it out in full (1000))');
    expect(claimBodies(sandbox)).toHaveLength(0);
  });

  it('the progress line on a terminal counts invalid rows as invalid, apart from rejected ones', async () => {
    const path = join(dir, 'claims.csv');
    writeCsv(path, [row(1), row(2, { 'item.price': 'x' }), row(3, { 'item.price': '1e2' })]);
    const res = await runOpcli(['claims', 'file', '--from', path], { env: env(), tty: true });
    expect(res.code).toBe(3);
    // The total comes from a line count in the background: a short run may finish before it (3/?).
    expect(res.stderr).toMatch(/3\/(~?3|\?) rows · 1 filed · 0 rejected · 2 invalid · 0 uncertain/);
  });
});
