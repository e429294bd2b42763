/**
 * Errors about input are short and say where (issue 27, item 7): a 100 MB CSV header with no
 * newline printed a 100 MB error after 46 s, a million columns 10.9 MB. The reader now refuses a
 * record over its limits as soon as it gets there, and every message quotes at most 200 characters
 * of input with the line, column and byte offset.
 */
import { createWriteStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { CSV_LIMITS } from '../../src/claims/reader.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { COLUMNS, claimsSuite, row, writeCsv } from './fixtures.js';

let sandbox: Sandbox;
let dir: string;
const { created, env } = claimsSuite((s) => ({ sandbox, dir } = s));

/** Writes `total` bytes of `unit` to `path` a mebibyte at a time, so the test never holds the file. */
async function writeStreaming(path: string, head: string, unit: string, total: number): Promise<void> {
  const out = createWriteStream(path);
  const chunk = unit.repeat(Math.ceil(1_048_576 / unit.length));
  out.write(head);
  for (let written = head.length; written < total; written += chunk.length) {
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end('\n');
  await once(out, 'finish');
}

const nothingSent = () => {
  expect(sandbox.requests.filter((r) => r.path.startsWith('/v1/claims'))).toHaveLength(0);
  expect(created()).toHaveLength(0);
};

describe('a CSV over the limits is refused early, with a short error', () => {
  it('a 100 MB header with no newline: exit 2, under 2 KB on stderr naming line, column, byte and the limit', async () => {
    const path = join(dir, 'huge.csv');
    await writeStreaming(path, '', 'a', 100 * 1_048_576);
    const r = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr.length).toBeLessThan(2048);
    expect(r.stderr).toContain('huge.csv line 1: the header is longer than 1,048,576 characters');
    expect(r.stderr).toContain('(reached at line 1, column 1, byte 1,048,576)');
    expect(r.stderr).not.toContain('a'.repeat(300));
    expect(r.stdout).toBe('');
    nothingSent();
  });

  it('a million columns: exit 2, the column where the limit is passed and its byte', async () => {
    const path = join(dir, 'wide.csv');
    // "customer.email" (14 bytes) then ",x" a million times: column 1,001 starts after 14 + 999 × 2 + 1 bytes.
    writeFileSync(path, `customer.email${',x'.repeat(1_000_000)}\n${row(1)['customer.email']}\n`);
    const r = await runOpcli(['claims', 'file', '--from', path, '--validate-only'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr.length).toBeLessThan(2048);
    expect(r.stderr).toContain(`wide.csv line 1: the header has more than ${CSV_LIMITS.columns.toLocaleString('en-US')} columns`);
    expect(r.stderr).toContain('(column 1,001 starts at line 1, byte 2,013)');
    nothingSent();
  });

  it('a row over the limit mid-file: the rows before it are filed, the error names its line, exit 3', async () => {
    const path = join(dir, 'mid.csv');
    writeCsv(path, [row(1), row(2), row(3, { 'item.details': 'x'.repeat(CSV_LIMITS.recordChars + 10) }), row(4)]);
    const r = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(r.code).toBe(3);
    expect(r.stderr.length).toBeLessThan(2048);
    expect(r.stderr).toMatch(
      /mid\.csv line 4: the row is longer than 1,048,576 characters, the limit for one row of a claims file \(reached at line 4, column 5, byte [\d,]+\)\. The 2 rows before it were handled/,
    );
    expect(created()).toHaveLength(2);
  });

  it('a row with more cells than the limit is refused at its line', async () => {
    const path = join(dir, 'cells.csv');
    writeCsv(path, [row(1)]);
    writeFileSync(path, `${','.repeat(5_000)}\n`, { flag: 'a' });
    const r = await runOpcli(['claims', 'file', '--from', path, '--validate-only'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cells.csv line 3: the row has more than 1,000 cells');
    nothingSent();
  });
});

describe('messages quote at most 200 characters of input', () => {
  it('unknown columns: a few named with their column and byte, the rest counted', async () => {
    const path = join(dir, 'names.csv');
    const long = Array.from({ length: 40 }, (_, i) => `${i}${'z'.repeat(20_000)}`);
    writeFileSync(path, `customer.email,${long.join(',')}\n`);
    const r = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr.length).toBeLessThan(2048);
    expect(r.stderr).toMatch(
      /names\.csv line 1: unknown columns "0z{59}…" \(20,001 characters\) \(column 2, byte 15\)(, .*)? and \d+ more; columns are claim field paths/,
    );
    nothingSent();
  });

  it('a bad cell is quoted cut, with its length', async () => {
    const path = join(dir, 'cell.csv');
    writeCsv(path, [row(1, { 'item.price': '9'.repeat(300_000) + 'x' })]);
    const r = await runOpcli(['claims', 'file', '--from', path, '--validate-only'], { env: env() });
    expect(r.code).toBe(3);
    expect(r.stderr.length).toBeLessThan(2048);
    expect(r.stderr).toContain(`item.price: expected a number, got "${'9'.repeat(200)}…" (300,001 characters)`);
  });

  it('a CSV that cannot be parsed: the parser message cut, with line and column', async () => {
    const path = join(dir, 'quote.csv');
    writeFileSync(path, `${COLUMNS.join(',')}\n${'a'.repeat(100_000)}"b,c\n`);
    const r = await runOpcli(['claims', 'file', '--from', path, '--validate-only'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr.length).toBeLessThan(2048);
    expect(r.stderr).toMatch(/quote\.csv line 2, column 1: the CSV cannot be read: .*…/);
  });

  it('JSONL: a line over the limit is refused at its line and byte; a broken line says where', async () => {
    const path = join(dir, 'big.jsonl');
    await writeStreaming(path, '{"a":1}\n{"customer":"', 'x', 10 * 1_048_576);
    const r = await runOpcli(['claims', 'file', '--from', path, '--validate-only'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr.length).toBeLessThan(2048);
    expect(r.stderr).toContain(
      'big.jsonl line 2: the line is longer than 1,048,576 characters, the limit for one claim (reached at line 2, column 1,048,577, byte 1,048,584)',
    );
    const broken = join(dir, 'broken.jsonl');
    writeFileSync(broken, `{"a":1}\n  {"a":${'1'.repeat(5_000)}x}\n`);
    const b = await runOpcli(['claims', 'file', '--from', broken, '--validate-only'], { env: env() });
    expect(b.code).toBe(3);
    expect(b.stderr.length).toBeLessThan(2048);
    expect(b.stderr).toMatch(/line 2: invalid, not sent\n {2}\(row\): not valid JSON: .*at line 2, column 5,008 \(byte 5,015\)/);
    nothingSent();
  });
});

describe('JSON claims carry no number or nesting JSON.parse would change', () => {
  const claim = (price: string) => `{"customer":{"email":"a@example.com"},"item":{"name":"Kettle","price":${price}}}`;

  it('JSONL: a price with more digits than a number holds is invalid at its line, never rounded and sent', async () => {
    const path = join(dir, 'precise.jsonl');
    writeFileSync(path, `${claim('49.99')}\n${claim('19.999999999999999999')}\n`);
    const r = await runOpcli(['claims', 'file', '--from', path, '--validate-only'], { env: env() });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('line 2: invalid, not sent');
    expect(r.stderr).toContain('the number 19.999999999999999999 has more digits than a number holds exactly');
    expect(r.stderr).toContain('would be sent as 20');
    nothingSent();
  });

  it('JSONL and JSON: a claim nested 100,000 deep is invalid at its line, no stack overflow', async () => {
    const deep = `{"item":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const path = join(dir, 'deep.jsonl');
    writeFileSync(path, `${deep}\n`);
    const r = await runOpcli(['claims', 'file', '--from', path, '--validate-only'], { env: env() });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('nests arrays and objects more than 100 levels deep');
    const array = join(dir, 'deep.json');
    writeFileSync(array, `[${deep}]`);
    const a = await runOpcli(['claims', 'file', '--from', array, '--validate-only'], { env: env() });
    expect(a.code).toBe(3);
    expect(a.stderr).toContain('nests arrays and objects more than 100 levels deep');
    expect(a.stderr).not.toMatch(/Maximum call stack|RangeError/);
    nothingSent();
  });
});

describe('--data bodies', () => {
  it('a huge value where an object belongs, and broken JSON, give short errors that say where', async () => {
    const path = join(dir, 'order.json');
    writeFileSync(path, JSON.stringify('q'.repeat(1_000_000)));
    const r = await runOpcli(['orders', 'update', 'ord_000001', '--data', path], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr.length).toBeLessThan(2048);
    expect(r.stderr).toContain(`order.json must hold a JSON object, not "${'q'.repeat(199)}…`);
    writeFileSync(path, `{\n  "currency": "USD",\n  "total": ${'1'.repeat(1_000_000)}x\n}`);
    const bad = await runOpcli(['api', 'PUT', '/v1/orders/ord_000001', '--data', `@${path}`], { env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr.length).toBeLessThan(2048);
    expect(bad.stderr).toMatch(/order\.json is not valid JSON: .*, at line 3, column 1,000,012 \(byte 1,000,034\)/);
    expect(sandbox.requests.filter((q) => q.path.startsWith('/v1/orders'))).toHaveLength(0);
  });

  it('a flag value is quoted cut', async () => {
    const r = await runOpcli(
      ['orders', 'update', 'ord_000001', '--replace', '--source-order-number', '#1', '--currency', 'USD', '--total', `${'7'.repeat(50_000)}x`],
      {
        env: env(),
      },
    );
    expect(r.code).toBe(2);
    expect(r.stderr.length).toBeLessThan(2048);
    expect(r.stderr).toContain(`--total expects a finite number, got "${'7'.repeat(200)}…" (50,001 characters)`);
  });
});
