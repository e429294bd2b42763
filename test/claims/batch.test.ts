import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { claimBodies, COLUMNS, duplicates, batchByLine, results, row, rowOf, writeCsv, writeRows, claimsSuite } from './fixtures.js';

let sandbox: Sandbox;
let dir: string;
const { created, env } = claimsSuite((s) => ({ sandbox, dir } = s));

describe('claims file --from (CSV)', () => {
  it('reads quoted commas and newlines, a BOM, CRLF and an empty signature, and reports each row at its own line', async () => {
    const path = join(dir, 'claims.csv');
    writeCsv(
      path,
      [
        row(1, { 'item.name': 'Kettle, "Deluxe"', 'item.details': 'row 1\r\nlid cracked,\r\nhandle loose' }),
        row(2, { 'item.images': 'https://example.com/1.jpg; https://example.com/2.jpg', 'options.requireCustomerSignature': 'TRUE' }),
        row(3, { 'item.images': '["https://example.com/3.jpg"]', signature: 'https://example.com/sig.png', salesChannel: 'online' }),
      ],
      { crlf: true, bom: true },
    );
    const res = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], { env: env() });
    expect(res.stderr).toContain('Filed 3 claims');
    expect(res.code).toBe(0);
    // Row 1 spans lines 2-4 (two newlines inside a quoted cell), so row 2 starts at line 5.
    expect(results(res.stdout).map((r) => [r.line, r.status])).toEqual([
      [2, 'filed'],
      [5, 'filed'],
      [6, 'filed'],
    ]);
    const sent = claimBodies(sandbox).map((b) => JSON.parse(b));
    const byRow = new Map(sent.map((c) => [rowOf(JSON.stringify(c)), c]));
    expect(byRow.get(1)).toMatchObject({ item: { name: 'Kettle, "Deluxe"', details: 'row 1\nlid cracked,\nhandle loose', price: 49.99 }, signature: '' });
    expect(byRow.get(1)?.customer).toEqual({ email: 'customer1@example.com' });
    expect(byRow.get(2)).toMatchObject({
      item: { images: ['https://example.com/1.jpg', 'https://example.com/2.jpg'] },
      options: { requireCustomerSignature: true },
    });
    expect(byRow.get(3)).toMatchObject({ item: { images: ['https://example.com/3.jpg'] }, signature: 'https://example.com/sig.png', salesChannel: 'ONLINE' });
    expect(byRow.get(3)?.storeId).toBe(sandbox.store.storeId);
  });

  it('sends only the valid rows of a mixed file and names each invalid line, field and expectation (exit 3)', async () => {
    const path = join(dir, 'mixed.csv');
    writeCsv(path, [
      row(1),
      row(2, { 'item.price': 'twelve' }),
      row(3),
      row(4, { 'customer.email': 'nobody', 'warranty.warrantyPeriod': '' }),
      row(5, { issueType: 'LOST_IN_SPACE' }),
      row(6),
    ]);
    const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(res.code).toBe(3);
    expect(claimBodies(sandbox).map(rowOf).sort()).toEqual([1, 3, 6]);
    expect(res.stderr).toContain('line 3: invalid, not sent\n  item.price: expected a number, got "twelve"');
    expect(res.stderr).toMatch(/line 5: invalid, not sent\n {2}customer\.email: expected an e-mail address[^\n]*\n {2}warranty\.warrantyPeriod: missing/);
    expect(res.stderr).toMatch(/line 6: invalid, not sent\n {2}issueType: expected one of/);
    expect(res.stderr).toContain('Filed 3 claims; 0 rejected by the API, 3 invalid (not sent)');
    expect(res.stdout).toBe('');
  });

  it('--validate-only checks every row and sends nothing', async () => {
    const path = join(dir, 'mixed.csv');
    writeCsv(path, [row(1), row(2, { 'item.price': '-1' }), row(3)]);
    const res = await runOpcli(['claims', 'file', '--from', path, '--validate-only'], { env: env() });
    expect(res.code).toBe(3);
    expect(res.stderr).toContain('line 3: invalid, not sent\n  item.price: expected a price of 0 or more');
    expect(res.stderr).toContain('Checked 3 rows: 2 valid, 1 invalid. Nothing was sent.');
    expect(claimBodies(sandbox)).toHaveLength(0);
    expect(existsSync(`${path}.journal.jsonl`)).toBe(false);
  });

  it('a file that cannot be used exits 2 and names the problem', async () => {
    const unknown = join(dir, 'unknown.csv');
    writeFileSync(unknown, `${COLUMNS.join(',')},customer.fax\n`);
    const a = await runOpcli(['claims', 'file', '--from', unknown], { env: env() });
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('unknown column "customer.fax"');
    const missing = await runOpcli(['claims', 'file', '--from', join(dir, 'nope.csv')], { env: env() });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no such file');
    const empty = join(dir, 'empty.csv');
    writeFileSync(empty, '');
    const b = await runOpcli(['claims', 'file', '--from', empty], { env: env() });
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('empty: expected a header row');
    const noPrice = join(dir, 'noprice.csv');
    writeFileSync(noPrice, `${COLUMNS.filter((c) => c !== 'item.price').join(',')}\n`);
    const c = await runOpcli(['claims', 'file', '--from', noPrice], { env: env() });
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('missing required column item.price');
    const txt = join(dir, 'claims.txt');
    writeFileSync(txt, 'x');
    const d = await runOpcli(['claims', 'file', '--from', txt], { env: env() });
    expect(d.code).toBe(2);
    expect(d.stderr).toContain('--format');
    expect(claimBodies(sandbox)).toHaveLength(0);
  });

  it('reruns skip filed and rejected rows; a changed row is sent again; --out writes status columns', async () => {
    const path = join(dir, 'claims.csv');
    writeCsv(path, [row(1), row(2, { 'item.price': 'x' }), row(3)]);
    // The sandbox refuses the claim of row 3 (a 400 proves nothing was created).
    sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', status: 400, after: 1, count: 1 }]);
    const first = await runOpcli(['claims', 'file', '--from', path, '--concurrency', '1', '--out', join(dir, 'out.csv')], { env: env() });
    expect(first.code).toBe(3);
    expect(first.stderr).toContain('line 4: rejected');
    const out = parse(readFileSync(join(dir, 'out.csv'), 'utf8'), { columns: true }) as Record<string, string>[];
    expect(out.map((r) => [r['item.details'], r.status])).toEqual([
      ['row 1', 'filed'],
      ['row 2', 'invalid'],
      ['row 3', 'rejected'],
    ]);
    expect(out[0]?.sourceOrderId).toBe(created()[0]?.sourceOrderId);
    expect(out[1]?.error).toContain('item.price');
    expect(claimBodies(sandbox)).toHaveLength(2);

    sandbox.setFaults([]);
    const second = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], { env: env() });
    expect(second.code).toBe(3);
    expect(claimBodies(sandbox)).toHaveLength(2);
    expect(results(second.stdout)).toMatchObject([
      { line: 2, status: 'filed', earlier: true, sourceOrderId: created()[0]?.sourceOrderId },
      { line: 3, status: 'invalid' },
      { line: 4, status: 'rejected', earlier: true },
    ]);

    // Fixing rows 2 and 3 changes their content, so they are new rows; row 1 is still skipped.
    writeCsv(path, [row(1), row(2), row(3, { 'item.price': '50' })]);
    const third = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(third.code).toBe(0);
    expect(claimBodies(sandbox).slice(2).map(rowOf).sort()).toEqual([2, 3]);
    expect(created()).toHaveLength(3);
    expect(duplicates(created().map((c) => c.raw))).toEqual([]);
  });

  it('reads JSONL and JSON, with a line or item number per row', async () => {
    const template = JSON.parse((await runOpcli(['claims', 'template', '--json'], { env: env() })).stdout);
    const jsonl = join(dir, 'claims.jsonl');
    const bad = { ...template, item: { ...template.item, price: 'free' } };
    writeFileSync(
      jsonl,
      `${JSON.stringify({ ...template, item: { ...template.item, details: 'row 1', price: '10.5' } })}\n\n${JSON.stringify(bad)}\n{not json\n`,
    );
    const res = await runOpcli(['claims', 'file', '--from', jsonl, '--jsonl'], { env: env() });
    expect(res.code).toBe(3);
    expect(results(res.stdout).map((r) => [r.line, r.status])).toEqual([
      [1, 'filed'],
      [3, 'invalid'],
      [4, 'invalid'],
    ]);
    expect(JSON.parse(claimBodies(sandbox)[0] as string).item.price).toBe(10.5);
    const json = join(dir, 'claims.json');
    writeFileSync(json, JSON.stringify([{ ...template, item: { ...template.item, details: 'row 7' } }]));
    // The same customer and item as row 1 of the other file: --allow-similar files it (the record holds it otherwise).
    const res2 = await runOpcli(['claims', 'file', '--from', json, '--allow-similar'], { env: env() });
    expect(res2.code).toBe(0);
    expect(claimBodies(sandbox).map(rowOf)).toEqual([1, 7]);
    const stdin = await runOpcli(['claims', 'file', '--from', '-', '--format', 'jsonl', '--validate-only'], { env: env(), stdin: `${JSON.stringify(bad)}\n` });
    expect(stdin.code).toBe(3);
    expect(stdin.stderr).toContain('line 1: invalid, not sent\n  item.price: expected a number, got "free"');
  });
});

describe('interruption', () => {
  it('Ctrl-C stops taking rows, lets the rows in flight finish, journals them, prints the summary and exits 130; the rerun goes on', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 200);
    sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', latencyMs: 30 }]);
    const controller = new AbortController();
    const timer = setInterval(() => {
      if (sandbox.counters.claimsCreated >= 20) controller.abort(Object.assign(new Error('Interrupted'), { name: 'AbortError' }));
    }, 5);
    const res = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], { env: env(), signal: controller.signal });
    clearInterval(timer);
    expect(res.code).toBe(130);
    expect(res.stderr).toContain('Interrupted');
    expect(res.stderr).toMatch(/Filed \d+ claims/);
    const done = results(res.stdout);
    expect(done.length).toBeLessThan(200);
    // Every row read is reported, in input order without a gap: filed, or not_sent when it was
    // prepared (journaled) but the batch stopped before sending it.
    expect(done.map((r) => r.line)).toEqual(Array.from({ length: done.length }, (_, i) => i + 2));
    const filed = done.filter((r) => r.status === 'filed');
    const notSent = done.filter((r) => r.status === 'not_sent');
    expect(filed.length + notSent.length).toBe(done.length);
    expect(notSent.length).toBeGreaterThan(0);
    for (const r of notSent) expect(r.error).toBe('the batch stopped before this row was sent');
    expect(res.stderr).toContain(`, ${notSent.length} not sent (`);
    // Every request that was sent got its answer and its journal entry; none is left uncertain.
    expect(filed).toHaveLength(claimBodies(sandbox).length);
    const journal = batchByLine(`${path}.journal.jsonl`);
    // Rows read ahead but never sent are recorded not_sent, or were never recorded (the rerun sends them); nothing is left "sending".
    expect(notSent.map((r) => journal.get(r.line)?.status ?? 'not_sent')).toEqual(notSent.map(() => 'not_sent'));
    const statuses = [...journal.values()].map((e) => e.status).filter(Boolean);
    expect(statuses.filter((s) => s === 'filed')).toHaveLength(filed.length);
    expect(statuses.every((s) => s === 'filed' || s === 'not_sent')).toBe(true);

    sandbox.setFaults([]);
    const rerun = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], { env: env() });
    expect(rerun.code).toBe(0);
    expect(results(rerun.stdout).filter((r) => r.earlier)).toHaveLength(filed.length);
    expect(created()).toHaveLength(200);
    expect(duplicates(claimBodies(sandbox))).toEqual([]);
  });
});
