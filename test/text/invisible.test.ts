/**
 * Bidi controls and zero-width characters in server text (issue 27, item 5): an order whose fields
 * hold U+202E (right-to-left override) and U+200B (zero-width space) is shown escaped in every place
 * a person reads it (table, pipe, --csv, errors, `opcli api` on a terminal) and exact in --json.
 */
import { describe, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { runAgainst } from '../orders/scripted.js';
import { profileSuite, runOpcli } from '../helpers.js';

let sandbox: Sandbox;
let env: Record<string, string>;

profileSuite((s) => ({ sandbox, env } = s), { sandbox: { orders: 5 } });

// "Ann\u202EeeL" reads "AnnLee" on a terminal; "Zed\u200BCo" looks like "ZedCo".
const NAME = 'Ann\u202eeeL';
const NUMBER = '#10\u200b02';
const RAW = /[\u202a-\u202e\u2066-\u2069\u200b-\u200f\u061c\u2060-\u2064\ufeff\u00ad]/u;
const ORDER = { sourceOrderNumber: NUMBER, currency: 'USD', customerName: NAME, customerEmail: 'ann@example.com', total: 12 };

/** Stores the hostile order as ord_000002 through the API (the sandbox keeps what a PUT sends). */
async function seed(): Promise<void> {
  const r = await runOpcli(['api', 'PUT', '/v1/orders/ord_000002', '--data', JSON.stringify(ORDER)], { env });
  expect(r.code, r.stderr).toBe(0);
}

describe('an order holding U+202E and U+200B', () => {
  test('the terminal table shows \\u202e and \\u200b, never the characters, and stays aligned', async () => {
    await seed();
    const r = await runOpcli(['orders', 'list', '--size', '3', '--columns', 'sourceOrderId,sourceOrderNumber,customerName'], {
      env: { ...env, NO_COLOR: '1', COLUMNS: '120' },
      tty: true,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    expect(r.stdout).toContain('Ann\\u202eeeL');
    expect(r.stdout).toContain('#10\\u200b02');
    const rows = r.stdout.split('\n').filter((l) => l.startsWith('│'));
    expect(new Set(rows.map((l) => l.length)).size).toBe(1);
  });

  test('a pipe (tab-separated) and --csv show the escapes too', async () => {
    await seed();
    const plain = await runOpcli(['orders', 'list', '--size', '3'], { env });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).not.toMatch(RAW);
    expect(plain.stdout.split('\n')[1]?.split('\t')).toEqual(expect.arrayContaining(['ord_000002', '#10\\u200b02', 'Ann\\u202eeeL']));
    // CSV goes to spreadsheets, which obey the override as a terminal does: escaped to a file too.
    const csv = await runOpcli(['orders', 'list', '--size', '3', '--csv'], { env });
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).not.toMatch(RAW);
    expect(csv.stdout).toContain('ord_000002,#10\\u200b02,USD');
    expect(csv.stdout).toContain('Ann\\u202eeeL');
    // --csv-raw writes the exact text to a file or pipe, never to a terminal.
    const raw = await runOpcli(['orders', 'list', '--size', '3', '--csv', '--csv-raw'], { env });
    expect(raw.stdout).toContain(NAME);
    const rawTty = await runOpcli(['orders', 'list', '--size', '3', '--csv', '--csv-raw'], { env, tty: true });
    expect(rawTty.stdout).not.toMatch(RAW);
  });

  test('--json and --jsonl keep the text exact; JSON on a terminal escapes it as \\u202e, the same value', async () => {
    await seed();
    for (const flag of ['--json', '--jsonl']) {
      const r = await runOpcli(['orders', 'list', '--size', '3', flag], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(NAME);
      expect(r.stdout).toContain(NUMBER);
    }
    const tty = await runOpcli(['orders', 'list', '--size', '3', '--json'], { env, tty: true });
    expect(tty.stdout).not.toMatch(RAW);
    expect(JSON.parse(tty.stdout)[1]).toMatchObject({ customerName: NAME, sourceOrderNumber: NUMBER });
  });

  test('opcli api GET: exact on a pipe, escaped on a terminal (still the same JSON)', async () => {
    await seed();
    const pipe = await runOpcli(['api', 'GET', '/v1/orders', '--query', 'size=3'], { env });
    expect(pipe.code, pipe.stderr).toBe(0);
    expect(pipe.stdout).toContain(NAME);
    const tty = await runOpcli(['api', 'GET', '/v1/orders', '--query', 'size=3'], { env, tty: true });
    expect(tty.code, tty.stderr).toBe(0);
    expect(tty.stdout).not.toMatch(RAW);
    expect(tty.stdout).toContain('Ann\\u202eeeL');
    expect(JSON.parse(tty.stdout).edges[1].node.customerName).toBe(NAME);
    const paged = await runOpcli(['api', 'GET', '/v1/orders', '--paginate', '--jsonl', '--query', 'size=2'], { env, tty: true });
    expect(paged.stdout).not.toMatch(RAW);
    expect(paged.stdout).toContain('Ann\\u202eeeL');
  });

  test('orders update: the dry run and the errors show the escapes', async () => {
    await seed();
    const dry = await runOpcli(['orders', 'update', 'ord_000002', '--currency', 'EUR', '--dry-run'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).not.toMatch(RAW);
    expect(dry.stdout).toMatch(/kept +customerName +"Ann\\u202eeeL"/);
    // An id with the override: not found in the list, and (with --replace) a 404 from the server.
    const id = 'ord_0000\u202e02';
    for (const argv of [
      ['orders', 'update', id, '--total', '1'],
      ['orders', 'update', id, '--replace', '--source-order-number', NUMBER, '--currency', 'USD'],
    ]) {
      const r = await runOpcli(argv, { env });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain('Order ord_0000\\u202e02 not found');
      expect(r.stderr).not.toMatch(RAW);
    }
    // A value typed with the override is quoted back escaped.
    const bad = await runOpcli(['orders', 'update', 'ord_000002', '--total', `1${NAME}`], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('got "1Ann\\u202eeeL"');
    expect(bad.stderr).not.toMatch(RAW);
    expect(sandbox.requests.filter((q) => q.method === 'PUT')).toHaveLength(2);
  });
});

describe('an error body holding U+202E and U+200B', () => {
  test.each([
    ['{message}', { message: `refused: \u202etxt.exe\u200b` }],
    ['{errors:[{path,message}]}', { errors: [{ path: 'customer\u200bName', message: 'bad \u202eeman' }] }],
    ['text', 'refused: \u202etxt.exe\u200b'],
  ])('a 4xx with %s from a loopback server: escaped on stderr', async (_shape, body) => {
    const r = await runAgainst([{ status: 422, body }], ['orders', 'update', 'ord_x', '--replace', '--source-order-number', '#1', '--currency', 'USD'], {
      env,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^Error: /m);
    expect(r.stderr).not.toMatch(RAW);
    expect(r.stderr).toMatch(/\\u202e/);
  });

  test('the --json error object on stderr holds no raw override either', async () => {
    const r = await runAgainst([{ status: 422, body: { message: 'refused: \u202etxt.exe' } }], ['orders', 'list', '--json'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(RAW);
    const doc = JSON.parse(r.stderr.trim().split('\n').at(-1) as string);
    expect(doc.error).toMatchObject({ exitCode: 2, status: 422 });
    expect(doc.error.message).toContain('refused: ');
  });
});
