/**
 * Batch behaviours found in review: stable row keys across re-serialisation, a CSV that breaks
 * mid-file, bounded memory while one request is slow, strict numbers, and journal/report edges.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { createDeps } from '../../src/cli/deps.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { fileHandlePrototype, runOpcli } from '../helpers.js';
import { COLUMNS, claimBodies, duplicates, heldSandbox, results, row, rowOf, writeCsv, writeRows, claimsSuite } from './fixtures.js';

let sandbox: Sandbox;
let dir: string;
const { created, env } = claimsSuite((s) => ({ sandbox, dir } = s));

/** Every batch row's intent (`sending`) and outcome in the record of claims of `configDir`, in order, by attempt (`key`: its filing id). */
function recordEntries(configDir: string): { key: string; line?: number; status: string; sourceOrderId?: string }[] {
  const [name] = readdirSync(configDir).filter((n) => /^claims-record-[0-9a-f]+\.jsonl$/.test(n));
  return readFileSync(join(configDir, name as string), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l))
    .filter((r) => r.type === 'intent' || r.type === 'outcome')
    .map((r) => ({ key: r.issuance, line: r.line, status: r.type === 'intent' ? 'sending' : r.status, sourceOrderId: r.sourceOrderId }));
}

describe('row keys', () => {
  it('adding an empty column and reordering the columns files nothing again', async () => {
    const path = join(dir, 'claims.csv');
    const rows = [row(1), row(2), row(3)];
    writeCsv(path, rows);
    const first = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(first.code).toBe(0);
    expect(created()).toHaveLength(3);

    // The same claims, columns reversed, an empty item.sku column added.
    const columns = ['item.sku', ...[...COLUMNS].reverse()];
    writeFileSync(path, stringify([columns, ...rows.map((r) => columns.map((c) => r[c] ?? ''))]));
    const second = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], { env: env() });
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('Filed 0 claims');
    expect(second.stderr).toContain('Settled by an earlier run, not sent again: 3 filed');
    // Rows 1 to 3 are on lines 2 to 4; their requests may have reached the sandbox in any order.
    const lineOf = (c: { raw: string }) => rowOf(c.raw) + 1;
    const expected = created()
      .map((c) => ({ line: lineOf(c), status: 'filed', sourceOrderId: c.sourceOrderId, earlier: true }))
      .sort((a, b) => a.line - b.line);
    expect(results(second.stdout)).toEqual(expected);
    expect(created()).toHaveLength(3);
    expect(claimBodies(sandbox)).toHaveLength(3);

    // A changed row looks like a filed claim: held until --allow-similar; a second copy of a row is held until --allow-duplicates.
    writeCsv(path, [row(1), row(2, { 'item.price': '50' }), row(3), row(1)]);
    const third = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(third.code).toBe(3);
    expect(third.stderr).toContain('Filed 0 claims;');
    expect(third.stderr).toContain('2 held (not sent)');
    expect(third.stderr).toMatch(
      /line 3: looks like the claim filed from line 3 on \d{4}-\d{2}-\d{2} \(item\.price 49\.99 → 50\); not sent; --allow-similar files it/,
    );
    expect(third.stderr).toContain('line 5: the same claim as line 2 of this file (a row repeated); not sent; --allow-duplicates files it');
    expect(claimBodies(sandbox)).toHaveLength(3);
    const fourth = await runOpcli(['claims', 'file', '--from', path, '--allow-similar', '--allow-duplicates'], { env: env() });
    expect(fourth.code).toBe(0);
    expect(claimBodies(sandbox).slice(3).map(rowOf).sort()).toEqual([1, 2]);
  });

  it('re-serialising a JSONL file (key order, spacing, numbers as strings) files nothing again', async () => {
    const template = JSON.parse((await runOpcli(['claims', 'template', '--json'], { env: env() })).stdout);
    const claims = [1, 2].map((i) => ({ ...template, item: { ...template.item, details: `row ${i}`, price: 12.5 } }));
    const path = join(dir, 'claims.jsonl');
    writeFileSync(path, `${claims.map((c) => JSON.stringify(c)).join('\n')}\n`);
    const first = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(first.code).toBe(0);
    const reversed = (v: unknown): unknown =>
      v && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(
            Object.entries(v)
              .reverse()
              .map(([k, x]) => [k, reversed(x)]),
          )
        : v;
    writeFileSync(
      path,
      `${claims.map((c) => JSON.stringify(reversed({ ...c, item: { ...c.item, price: '12.50', sourceVariantId: '' } }), null, 1).replace(/\n\s*/g, ' ')).join('\n')}\n`,
    );
    const second = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('Settled by an earlier run, not sent again: 2 filed');
    expect(claimBodies(sandbox)).toHaveLength(2);
  });
});

describe('a CSV that breaks mid-file', () => {
  it('sends and reports every row before the break, then exits 3 naming the line', async () => {
    const path = join(dir, 'broken.csv');
    writeCsv(
      path,
      Array.from({ length: 400 }, (_, i) => row(i + 1)),
    );
    writeFileSync(path, `${readFileSync(path, 'utf8')}customer401@example.com,"Kettle 401,49.99\nmore,text\n`);
    const res = await runOpcli(['claims', 'file', '--from', path, '--jsonl', '--concurrency', '8'], { env: env() });
    expect(res.code).toBe(3);
    expect(res.stderr).toContain('broken.csv line 402: the CSV cannot be read: a quote opened in the row starting here is never closed');
    expect(res.stderr).toContain('The 400 rows before it were handled (400 filed now)');
    expect(res.stderr).toContain('Filed 400 claims');
    const rows = results(res.stdout);
    expect(rows.map((r) => r.line)).toEqual(Array.from({ length: 400 }, (_, i) => i + 2));
    expect(rows.every((r) => r.status === 'filed')).toBe(true);
    expect(
      claimBodies(sandbox)
        .map(rowOf)
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
    expect(duplicates(claimBodies(sandbox))).toEqual([]);

    // Rerun: every row before the break is settled, nothing is sent, so the file is what is wrong (2).
    const rerun = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(rerun.code).toBe(2);
    expect(rerun.stderr).toContain('line 402: the CSV cannot be read');
    expect(claimBodies(sandbox)).toHaveLength(400);
  });

  it('exits 2 and sends nothing when the first data row is already broken', async () => {
    const path = join(dir, 'broken.csv');
    writeFileSync(path, `${COLUMNS.join(',')}\n"customer1@example.com,x\n`);
    const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('broken.csv line 2: the CSV cannot be read');
    expect(claimBodies(sandbox)).toHaveLength(0);
  });
});

describe('memory while one request is slow', () => {
  it('stops reading rows while many results wait for an earlier one, and still reports every row in order', async () => {
    // The first claim's answer is held on a clock the test moves, for as long as reading has not
    // stood still: a reader that never stops pulls the whole input while that answer is held.
    const held = await heldSandbox();
    try {
      const invalid = 20_000;
      // Rows pulled from stdin while the first claim is still unanswered.
      let pulled = 0;
      let pulledWhileSlow = 0;
      let i = 0;
      const header = `${COLUMNS.join(',')}\n`;
      const valid = stringify([COLUMNS.map((c) => row(1)[c] ?? '')]);
      const bad = stringify([COLUMNS.map((c) => row(2, { 'item.price': 'x' })[c] ?? '')]);
      const stdin = new Readable({
        read() {
          if (i > invalid) return void this.push(null);
          this.push(i === 0 ? header + valid : bad);
          i++;
          pulled++;
          if (held.sandbox.counters.claimsCreated === 0) pulledWhileSlow = pulled;
        },
      });
      held.sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', latencyMs: 2500, count: 1 }]);
      // Sampled every 10 ms (not slept): once the first claim has arrived and reading has stood still
      // for STILL samples in a row, the clock moves past its latency and the answer comes.
      const STILL = 25;
      let still = 0;
      let last = -1;
      let pulledAtAnswer = -1;
      const sampler = setInterval(() => {
        if (held.sandbox.requests.every((r) => r.path !== '/v1/claims/offline')) return;
        still = pulled === last ? still + 1 : 0;
        last = pulled;
        if (still < STILL) return;
        clearInterval(sampler);
        pulledAtAnswer = pulled;
        held.clock.advance(2500);
      }, 10);
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      let out = '';
      let err = '';
      stdout.on('data', (c) => {
        out += c;
      });
      stderr.on('data', (c) => {
        err += c;
      });
      const deps = createDeps({ stdin, stdout, stderr, env: { PATH: process.env.PATH, HOME: process.env.HOME, OPCLI_CONFIG_DIR: held.dir }, cwd: held.dir });
      const code = await runCli(['claims', 'file', '--from', '-', '--format', 'csv', '--journal', join(held.dir, 'j.jsonl'), '--jsonl'], deps).finally(() =>
        clearInterval(sampler),
      );
      expect(code).toBe(3);
      expect(err).toContain(`Filed 1 claim; 0 rejected by the API, ${invalid.toLocaleString('en-US')} invalid (not sent)`);
      // The property, whatever the streams buffer (Node 22 raised the default highWaterMark from
      // 16 KiB to 64 KiB, so the rows read ahead differ by Node version): reading stops while the
      // first result waits, well before the input's end; about MAX_WAITING (1,000) rows plus what
      // the stream buffers hold were read. The answer came only once reading had stopped.
      expect(pulledAtAnswer).toBeGreaterThan(0);
      expect(pulledWhileSlow).toBe(pulledAtAnswer);
      expect(pulledWhileSlow).toBeLessThan(invalid / 4);
      expect(pulled).toBe(invalid + 1);
      const rows = results(out);
      expect(rows).toHaveLength(invalid + 1);
      expect(rows[0]).toMatchObject({ line: 2, status: 'filed' });
      expect(rows.map((r) => r.line)).toEqual(Array.from({ length: invalid + 1 }, (_, n) => n + 2));
      expect(claimBodies(held.sandbox)).toHaveLength(1);
    } finally {
      await held.close();
    }
  }, 30_000);
});

describe('numbers in CSV cells', () => {
  it('accepts decimal notation only: hex, binary, octal and exponents are invalid, named by row and field', async () => {
    const path = join(dir, 'numbers.csv');
    writeCsv(path, [row(1, { 'item.price': '0x10' }), row(2, { 'item.price': '0b11' }), row(3, { 'item.price': '1.5e1' }), row(4, { 'item.price': ' 0o7' })]);
    const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(res.code).toBe(3);
    expect(res.stderr).toContain('line 2: invalid, not sent\n  item.price: expected a number, got "0x10" (decimal notation, such as 49.99)');
    expect(res.stderr).toContain('line 3: invalid, not sent\n  item.price: expected a number, got "0b11"');
    expect(res.stderr).toContain(
      'line 4: invalid, not sent\n  item.price: expected a number, got "1.5e1" (decimal notation, such as 49.99; write it out in full (15))',
    );
    expect(res.stderr).toContain('line 5: invalid, not sent\n  item.price: expected a number, got "0o7"');
    expect(claimBodies(sandbox)).toEqual([]);
  });
});

describe('a results file that cannot be written', () => {
  it('stops the batch, never marks a filed row uncertain, and a --retry-uncertain rerun files nothing twice', async () => {
    const path = join(dir, 'claims.csv');
    writeCsv(
      path,
      Array.from({ length: 20 }, (_, i) => row(i + 1)),
    );
    // The disk fills up under the results file once its header is written (/dev/full is not a regular file: refused).
    const proto = (await fileHandlePrototype()) as Pick<FileHandle, 'write' | 'writev'>;
    const full = () => Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }));
    const realWrite = proto.write;
    const realWritev = proto.writev;
    const isRow = (data: unknown) => /,filed,|,uncertain,|,not_sent,/.test(Array.isArray(data) ? Buffer.concat(data).toString() : String(data));
    const write = vi.spyOn(proto, 'write').mockImplementation(function (this: FileHandle, data: unknown, ...rest: unknown[]) {
      return isRow(data) ? full() : (realWrite as (...a: unknown[]) => Promise<unknown>).call(this, data, ...rest);
    } as never);
    const writev = vi.spyOn(proto, 'writev').mockImplementation(function (this: FileHandle, data: unknown, ...rest: unknown[]) {
      return isRow(data) ? full() : (realWritev as (...a: unknown[]) => Promise<unknown>).call(this, data, ...rest);
    } as never);
    const out = join(dir, 'results.csv');
    let res: Awaited<ReturnType<typeof runOpcli>>;
    try {
      res = await runOpcli(['claims', 'file', '--from', path, '--out', out, '--concurrency', '2'], { env: env() });
    } finally {
      write.mockRestore();
      writev.mockRestore();
    }
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`Cannot write the results file ${out}: ENOSPC`);
    const entries = recordEntries(dir);
    const filedKeys = new Set(entries.filter((e) => e.status === 'filed').map((e) => e.key));
    expect(filedKeys.size).toBeGreaterThan(0);
    // Nothing follows a row's outcome.
    for (const key of filedKeys) expect(entries.filter((e) => e.key === key).map((e) => e.status)).toEqual(['sending', 'filed']);
    expect(entries.filter((e) => e.status === 'uncertain')).toEqual([]);
    const sent = claimBodies(sandbox).length;
    expect(sent).toBe(filedKeys.size);

    const rerun = await runOpcli(['claims', 'file', '--from', path, '--retry-uncertain', '--jsonl'], { env: env() });
    expect(rerun.code).toBe(0);
    expect(results(rerun.stdout).filter((r) => r.earlier)).toHaveLength(sent);
    expect(created()).toHaveLength(20);
    expect(duplicates(claimBodies(sandbox))).toEqual([]);
  });
});

describe('a record that cannot be made durable (a full disk)', () => {
  it('stops sending at the failed fdatasync; the rerun files every row once and names the rows whose intent was not made durable', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 40);
    // Fault injection at node:fs's fdatasync (the record's group sync), its ESM binding synced to the spy.
    const fsModule = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
    const real = fsModule.fdatasync;
    let calls = 0;
    vi.spyOn(fsModule, 'fdatasync').mockImplementation(((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      calls++;
      // A few groups, then the disk is full.
      if (calls === 3) setImmediate(() => callback(Object.assign(new Error('ENOSPC: no space left on device, fdatasync'), { code: 'ENOSPC' })));
      else real(fd, callback);
    }) as typeof fsModule.fdatasync);
    syncBuiltinESMExports();
    const res = await runOpcli(['claims', 'file', '--from', path, '--concurrency', '3', '--jsonl'], { env: env() });
    vi.restoreAllMocks();
    syncBuiltinESMExports();
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/Cannot write the record of claims .*claims-record-[0-9a-f]+\.jsonl: ENOSPC: no space left on device/);
    expect(res.stderr).toContain('Free disk space, then run the same command again');
    const firstRun = results(res.stdout);
    const notSent = firstRun.filter((r) => r.status === 'not_sent').map((r) => r.line);
    // The rows of the group whose fdatasync failed never left, and the first run says so.
    expect(notSent.length).toBeGreaterThan(0);
    // The failed group's rows say why; rows already durable and waiting for a worker say the batch stopped.
    const reasons = firstRun.filter((r) => r.status === 'not_sent').map((r) => r.error ?? '');
    expect(reasons.some((e) => e.includes('the record of claims could not be made durable'))).toBe(true);
    for (const e of reasons) expect(e).toMatch(/the record of claims could not be made durable|the batch stopped before this row was sent/);
    expect(firstRun.every((r) => r.status === 'filed' || r.status === 'not_sent')).toBe(true);
    const sentFirst = claimBodies(sandbox).length;
    expect(sentFirst).toBeLessThan(40);
    const emailOf = (line: number) => `customer${line - 1}@example.com`;
    for (const line of notSent) expect(claimBodies(sandbox).some((b) => b.includes(emailOf(line)))).toBe(false);

    const rerun = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], { env: env() });
    const second = results(rerun.stdout);
    expect(second.map((r) => r.line)).toEqual(Array.from({ length: 40 }, (_, i) => i + 2));
    // The resume asks the record of claims, which holds each row the first run settled: the rows of the
    // failed group never left and the record says so (not_sent), so the rerun files them, once each.
    expect(rerun.code).toBe(0);
    expect(second.every((r) => r.status === 'filed')).toBe(true);
    for (const line of notSent) expect(second.find((r) => r.line === line)?.earlier).toBeFalsy();
    expect(claimBodies(sandbox).length).toBe(40);
    expect(created()).toHaveLength(40);
    expect(duplicates(claimBodies(sandbox))).toEqual([]);
  });
});

describe('the rows journaled ahead of the requests', () => {
  it('are journaled while earlier requests are in flight, but never more than --concurrency of them beyond those in flight', async () => {
    const path = join(dir, 'window.csv');
    writeCsv(
      path,
      Array.from({ length: 45 }, (_, i) => row(i + 1)),
    );
    // Slow answers: the next rows are journaled while these are in flight.
    sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', phase: 'after', latencyMs: 30 }]);
    const res = await runOpcli(['claims', 'file', '--from', path, '--concurrency', '3'], { env: env() });
    sandbox.setFaults([]);
    expect(res.code).toBe(0);
    expect(created()).toHaveLength(45);
    // Walking the record in order: rows whose intent is written and outcome not yet are
    // either in flight (at most 3) or journaled ahead (at most 3, the window): a crash can leave no more.
    let open = 0;
    let most = 0;
    for (const e of recordEntries(dir)) {
      open += e.status === 'sending' ? 1 : -1;
      most = Math.max(most, open);
    }
    expect(open).toBe(0);
    expect(most).toBeLessThanOrEqual(6);
    expect(most).toBeGreaterThan(3);
  });
});
