/**
 * What a batch prints about rows it did not file, read as a person reads it: rows held alike are
 * folded into one line, a folded list is in line order, counts agree in number, and a stop with
 * nothing in flight does not speak of waiting for it.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { PassThrough, Readable } from 'node:stream';
import type { RowSource, SourceRow } from '../../src/claims/reader.js';
import { emptyCounts } from '../../src/claims/pipeline.js';
import { batchView } from '../../src/commands/claims/index.js';
import { createDeps } from '../../src/cli/deps.js';
import { capturedStreams, runOpcli } from '../helpers.js';
import { claimBodies, claimsSuite, row, writeCsv, writeRows } from './fixtures.js';

let sandbox: Sandbox;
let dir: string;
const { env } = claimsSuite((s) => ({ sandbox, dir } = s));

/** The numbers a folded line lists after "lines ", before " and N more". */
function listed(line: string): number[] {
  const list = /: lines ([\d, ]+)(?: and [\d,]+ more)?$/.exec(line)?.[1] ?? '';
  return list.split(', ').map(Number);
}

describe('rows not filed, as the batch lists them', () => {
  it('a copy of a filed file: its held rows are one line in full and one folded line, in line order', async () => {
    const first = join(dir, 'claims.csv');
    writeRows(first, 60);
    expect((await runOpcli(['claims', 'file', '--from', first], { env: env() })).code).toBe(0);
    const copy = join(dir, 'claims-copy.csv');
    copyFileSync(first, copy);
    sandbox.resetLog();
    const res = await runOpcli(['claims', 'file', '--from', copy, '--concurrency', '8'], { env: env() });
    expect(res.code, res.stderr).toBe(3);
    expect(claimBodies(sandbox)).toHaveLength(0);
    const lines = res.stderr.split('\n');
    // One row in full (where it was filed, and how to file it anyway), then the other 59 folded.
    const full = lines.filter((l) => /^line \d+: already filed from /.test(l));
    expect(full).toHaveLength(1);
    const folded = lines.filter((l) => l.startsWith('59 more lines held for the same cause'));
    expect(folded, res.stderr).toHaveLength(1);
    expect(folded[0]).toContain(`(already filed from ${first}; --allow-duplicates files it)`);
    expect(folded[0]).toMatch(/ and 39 more$/);
    const shown = listed(folded[0] as string);
    expect(shown).toHaveLength(20);
    expect(shown).toEqual([...shown].sort((a, b) => a - b));
    expect(res.stderr).toContain('Filed 0 claims;');
    expect(res.stderr).toContain('60 held (not sent)');
    expect(lines.length).toBeLessThan(10);
  });

  it('lines not sent for one cause are listed in line order, however the requests finished', async () => {
    const { stderr, err } = capturedStreams();
    const deps = createDeps({ stdin: Readable.from([]), stdout: new PassThrough(), stderr, env: {}, cwd: dir });
    const source = { unit: 'line' as const, header: undefined, rows: (async function* () {})() } as unknown as RowSource;
    const report = batchView(deps, { json: false, jsonl: false }).report(source, { verb: 'send' }, () => ({
      counts: emptyCounts(),
      totalApproximate: false,
      elapsedMs: 0,
    }));
    await report.start();
    // 30 rows answered in an order sixteen slots give: not the order of their lines.
    const order = Array.from({ length: 30 }, (_, i) => 2 + ((i * 7) % 30));
    for (const [seq, line] of order.entries()) {
      report.add({ line, seq } as unknown as SourceRow, { line, status: 'not_sent', error: 'POST /v1/claims/offline answered 429' });
    }
    await report.finish();
    const folded = err()
      .split('\n')
      .filter((l) => l.includes('more lines not sent for the same cause'));
    expect(folded).toHaveLength(1);
    const shown = listed(folded[0] as string);
    expect(shown).toEqual([...shown].sort((a, b) => a - b));
    // The smallest lines of the 29 folded ones (the first answered is shown in full).
    expect(shown).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22]);
    expect(folded[0]).toMatch(/ and 9 more$/);
  });

  it('a batch of one row says "1 row", "1 request" and "1 claim"', async () => {
    const path = join(dir, 'one.csv');
    writeCsv(path, [row(1)]);
    const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/^Filed 1 claim; .* \(1 row in \d+\.\ds, \d+ rows\/s; 1 request\)\.$/m);
    expect(res.stderr).not.toMatch(/\b1 (rows|requests|claims)\b/);
    const bad = join(dir, 'bad.csv');
    writeCsv(bad, [row(2, { 'customer.email': 'not an address' })]);
    const refused = await runOpcli(['claims', 'file', '--from', bad], { env: env() });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('Error: 1 of 1 row was not filed.');
    expect(refused.stderr).toContain('(1 row in ');
  });

  it('stopped before any request left: no "waiting for 0 requests in flight"', async () => {
    const path = join(dir, 'stopped.csv');
    writeRows(path, 5);
    const controller = new AbortController();
    controller.abort(Object.assign(new Error('Interrupted'), { name: 'AbortError' }));
    const res = await runOpcli(['claims', 'file', '--from', path], { env: env(), signal: controller.signal });
    expect(res.code).toBe(130);
    expect(res.stderr).not.toContain('waiting for 0 requests');
    expect(claimBodies(sandbox)).toHaveLength(0);
  });
});
