import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { profileSuite, runOpcli } from '../helpers.js';
import { page, runAgainst } from './scripted.js';

let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

profileSuite((s) => ({ sandbox, dir, env } = s), { sandbox: { orders: 30 } });

const puts = () => sandbox.requests.filter((r) => r.method === 'PUT');
const BASE = ['--source-order-number', '#2001', '--currency', 'USD'];
const REPLACE = ['--replace', ...BASE];

describe('orders update: sending', () => {
  test('flags become the body; the order is updated; "Order X updated" on stderr', async () => {
    const flags = ['--total', '42.5', '--premium-paid', '1.25', '--customer-email', 'a@b.co', '--policy-cancelled-at', 'null', '--platform-id', 'api'];
    const r = await runOpcli(['orders', 'update', 'ord_000005', ...REPLACE, ...flags], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Order ord_000005 updated (sent as given, --replace).');
    expect(puts()).toHaveLength(1);
    expect(puts()[0]?.path).toBe('/v1/orders/ord_000005');
    expect(JSON.parse(puts()[0]?.body ?? '')).toEqual({
      sourceOrderNumber: '#2001',
      currency: 'USD',
      total: 42.5,
      premiumPaid: 1.25,
      customerEmail: 'a@b.co',
      policyCancelledAt: null,
      platformId: 'api',
    });
    expect(sandbox.order('ord_000005')).toMatchObject({ sourceOrderNumber: '#2001', total: 42.5, policyCancelledAt: null });
  });

  test('--json prints the answer {"status":"ok"}', async () => {
    const r = await runOpcli(['orders', 'update', 'ord_000006', ...BASE, '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ status: 'ok' });
  });

  test('--data file with flags overriding it, and --data - from standard input', async () => {
    const file = join(dir, 'order.json');
    writeFileSync(file, JSON.stringify({ sourceOrderNumber: '#3001', currency: 'EUR', total: 10, customerName: 'Ann' }));
    const r = await runOpcli(['orders', 'update', 'ord_000007', '--replace', '--data', file, '--currency', 'GBP', '--total', '11'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(puts()[0]?.body ?? '')).toEqual({ sourceOrderNumber: '#3001', currency: 'GBP', total: 11, customerName: 'Ann' });

    const r2 = await runOpcli(['orders', 'update', 'ord_000008', '--replace', '--data', '-'], {
      env,
      stdin: JSON.stringify({ sourceOrderNumber: '#3002', currency: 'JPY', sourceCreatedAt: '2024-05-01T14:00:00+02:00' }),
    });
    expect(r2.code).toBe(0);
    expect(sandbox.order('ord_000008')).toMatchObject({ currency: 'JPY', sourceCreatedAt: '2024-05-01T14:00:00+02:00' });
  });

  test.each(['XSU', 'ZWR', 'BOV', 'XXX', 'ADP'])('rare currency %s from the spec list is accepted and sent', async (code) => {
    const r = await runOpcli(['orders', 'update', 'ord_000009', '--replace', '--source-order-number', '#1', '--currency', code], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(puts()[0]?.body ?? '').currency).toBe(code);
  });

  test('an unknown order with --replace is reported from the 404, exit 1', async () => {
    const r = await runOpcli(['orders', 'update', 'ord_999999', ...REPLACE], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Order ord_999999 not found');
    expect(puts()[0]?.status).toBe(404);
  });

  test('--dry-run --replace prints method, path and body and sends nothing', async () => {
    const r = await runOpcli(['orders', 'update', 'ord_000010', ...REPLACE, '--tax', '3', '--dry-run'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('PUT /v1/orders/ord_000010');
    expect(r.stdout).toContain('"tax": 3');
    expect(r.stderr).toContain('nothing was sent');
    const json = await runOpcli(['orders', 'update', 'ord_000010', ...REPLACE, '--dry-run', '--json'], { env });
    const doc = JSON.parse(json.stdout);
    expect(doc).toMatchObject({ method: 'PUT', path: '/v1/orders/ord_000010', body: { sourceOrderNumber: '#2001', currency: 'USD' } });
    // The dry run of a replacement says what it would erase.
    expect(doc.diff.find((d: { field: string }) => d.field === 'customerEmail')).toMatchObject({ change: 'cleared' });
    expect(json.stderr).toMatch(/Warning: this update clears .*customerEmail/);
    expect(puts()).toHaveLength(0);
  });
});

describe('orders update: validation before sending (exit 2, no request)', () => {
  const cases: [string, string[], RegExp][] = [
    ['unknown currency with the closest code', ['--source-order-number', '#1', '--currency', 'USX'], /USX is not a currency the API accepts; did you mean USD/],
    ['lower-case currency', ['--source-order-number', '#1', '--currency', 'eur'], /eur is not a currency the API accepts; did you mean EUR\?/],
    [
      'missing currency with --replace',
      ['--replace', '--source-order-number', '#1'],
      /currency: missing \(required: a three-letter currency code such as USD\); pass --currency/,
    ],
    ['missing order number with --replace', ['--replace', '--currency', 'USD'], /sourceOrderNumber: missing \(required: a value\); pass --source-order-number/],
    ['date-time without a zone', [...BASE, '--source-created-at', '2024-05-01T12:00:00'], /sourceCreatedAt: expected an ISO 8601 date-time with a time zone/],
    ['date only', [...BASE, '--source-updated-at', '2024-05-01'], /sourceUpdatedAt: expected an ISO 8601 date-time/],
    ['not a date', [...BASE, '--source-cancelled-at', 'yesterday'], /sourceCancelledAt: expected an ISO 8601 date-time/],
    ['bad policyCancelledAt', [...BASE, '--policy-cancelled-at', 'never'], /policyCancelledAt: expected an ISO 8601 date-time .*\(or null\)/],
    ['text for a number', [...BASE, '--total', 'abc'], /--total expects a finite number, got "abc"/],
    ['Infinity', [...BASE, '--subtotal', 'Infinity'], /--subtotal expects a finite number/],
    ['NaN', [...BASE, '--shipping-cost', 'NaN'], /--shipping-cost expects a finite number/],
    ['overflow', [...BASE, '--discount-total', '1e999'], /--discount-total expects a finite number/],
    ['hex', [...BASE, '--shipping-cost-tax', '0x10'], /--shipping-cost-tax expects a finite number/],
    ['bad e-mail', [...BASE, '--customer-email', 'not-an-email'], /customerEmail/],
    ['upper-case platform', [...BASE, '--platform-id', 'Shopify'], /platformId: expected "api" or a lowercase platform name/],
  ];
  test.each(cases)('%s', async (_name, flags, message) => {
    const r = await runOpcli(['orders', 'update', 'ord_000001', ...flags], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('Nothing was sent');
    expect(sandbox.requests).toHaveLength(0);
  });

  test('an unknown field in --data is refused with the closest field name', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ sourceOrderNumber: '#1', currency: 'USD', totl: 5, premiumPaid: '3' }));
    const r = await runOpcli(['orders', 'update', 'ord_000001', '--data', file], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown field "totl"; did you mean total?');
    expect(r.stderr).toContain('premiumPaid: expected a number, got "3"');
    expect(sandbox.requests).toHaveLength(0);
  });

  test('--data that is not a JSON object, or a missing file, is a usage error', async () => {
    const file = join(dir, 'array.json');
    writeFileSync(file, '[1,2]');
    const a = await runOpcli(['orders', 'update', 'ord_000001', '--data', file], { env });
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('must hold a JSON object');
    const b = await runOpcli(['orders', 'update', 'ord_000001', '--data', join(dir, 'missing.json')], { env });
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('no such file');
    const c = await runOpcli(['orders', 'update', 'ord_000001', '--data', '-'], { env, stdin: '{"currency":' });
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('standard input is not valid JSON');
    expect(sandbox.requests).toHaveLength(0);
  });

  test("ORDER_FIELDS lists the Order schema's fields in its order (it is written out so listing builds no schema)", async () => {
    const { ORDER_FIELDS, Order } = await import('../../src/schemas.js');
    expect([...ORDER_FIELDS]).toEqual(Object.keys(Order.shape));
  });

  test('every Order field has a flag', async () => {
    const { ORDER_FIELDS } = await import('../../src/schemas.js');
    const r = await runOpcli(['orders', 'update', '--help'], { env });
    for (const field of ORDER_FIELDS) expect(r.stdout).toContain(`--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} <value>`);
  });
});

describe('orders update: read-modify-write keeps every other field', () => {
  const gets = () => sandbox.requests.filter((r) => r.method === 'GET');

  test("the README's example changes three fields and keeps the e-mail, name, subtotal, tax and dates", async () => {
    const before = sandbox.order('ord_000002') as Record<string, unknown>;
    const r = await runOpcli(['orders', 'update', 'ord_000002', '--source-order-number', '#1002', '--currency', 'AUD', '--total', '190'], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/Order ord_000002 updated: \d+ fields? changed, \d+ kept\./);
    const body = JSON.parse(puts()[0]?.body ?? '');
    const { sourceOrderId: _id, ...fields } = before;
    expect(body).toEqual({ ...fields, sourceOrderNumber: '#1002', currency: 'AUD', total: 190 });
    const after = sandbox.order('ord_000002') as Record<string, unknown>;
    for (const key of ['customerEmail', 'customerName', 'subtotal', 'tax', 'sourceCreatedAt', 'sourceUpdatedAt', 'premiumPaid', 'platformId']) {
      expect(after[key], key).toEqual(before[key]);
    }
    expect(after).toMatchObject({ currency: 'AUD', total: 190 });
    expect(gets()[0]?.path).toBe('/v1/orders');
  });

  test('a record on a later page is found by following the cursors', async () => {
    const before = sandbox.order('ord_000025') as Record<string, unknown>;
    const r = await runOpcli(['orders', 'update', 'ord_000025', '--customer-name', 'Zoë Quinn', '--page-size', '10'], { env });
    expect(r.code).toBe(0);
    expect(gets()).toHaveLength(3);
    expect(gets()[1]?.query).toMatchObject({ size: '10' });
    expect(sandbox.order('ord_000025')).toEqual({ ...before, customerName: 'Zoë Quinn' });
  });

  test('an order the list does not have: nothing sent, --replace named', async () => {
    const r = await runOpcli(['orders', 'update', 'ord_999999', '--total', '5'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Error: Order ord_999999 not found: none of the 30 orders in 1 page of the list has that sourceOrderId. Nothing was sent.');
    expect(r.stderr).toContain('--replace');
    expect(puts()).toHaveLength(0);
  });

  test('--dry-run shows kept, changed, added and cleared per field and sends nothing', async () => {
    const r = await runOpcli(['orders', 'update', 'ord_000003', '--total', '1', '--policy-cancelled-at', '2024-05-01T12:00:00Z', '--dry-run'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('PUT /v1/orders/ord_000003');
    expect(r.stdout).toMatch(/^ {2}changed +total +[\d.]+ → 1$/m);
    expect(r.stdout).toMatch(/^ {2}kept +customerEmail +".+@example\.com"$/m);
    expect(r.stdout).toMatch(/^ {2}added +policyCancelledAt +"2024-05-01T12:00:00Z"$/m);
    expect(r.stderr).not.toContain('clears');
    expect(r.stderr).toContain('Dry run: nothing was sent.');
    expect(puts()).toHaveLength(0);

    const json = await runOpcli(['orders', 'update', 'ord_000003', '--policy-cancelled-at', 'null', '--dry-run', '--json'], { env });
    const doc = JSON.parse(json.stdout);
    expect(doc.body.customerName).toBe((sandbox.order('ord_000003') as { customerName: string }).customerName);
    expect(doc.diff.filter((d: { change: string }) => d.change !== 'kept')).toEqual([]);
    expect(puts()).toHaveLength(0);
  });

  test('other body shapes: extra record fields are not sent; a node that is not an object stops before any PUT', async () => {
    const record = {
      sourceOrderId: 'ord_x',
      id: 'internal-7',
      createdAt: '2024-01-01T00:00:00Z',
      sourceOrderNumber: '#9',
      currency: 'EUR',
      tax: 2,
      customerName: 'Ann',
    };
    const r = await runAgainst(
      [
        { status: 200, body: page([{ sourceOrderId: 'ord_w', currency: 'USD', sourceOrderNumber: '#8' }], { next: 'c1', total: 2 }) },
        { status: 200, body: page([record], { total: 2 }) },
        { status: 200, body: { status: 'ok' } },
      ],
      ['orders', 'update', 'ord_x', '--tax', '3'],
      { env },
    );
    expect(r.code).toBe(0);
    expect(r.seen.map((s) => s.method)).toEqual(['GET', 'GET', 'PUT']);
    expect(r.seen[1]?.url).toContain('cursor=c1');
    expect(JSON.parse(r.seen[2]?.body ?? '')).toEqual({ sourceOrderNumber: '#9', currency: 'EUR', tax: 3, customerName: 'Ann' });
    for (const body of [{ edges: 'nope', pageInfo: {} }, page(['not an object']), { status: 'ok' }, '<html>oops</html>']) {
      const bad = await runAgainst([{ status: 200, body }], ['orders', 'update', 'ord_x', '--tax', '3'], { env });
      expect(bad.code, JSON.stringify(body)).toBe(1);
      expect(bad.stderr).toMatch(/Unexpected answer|Error:/);
      expect(bad.seen.filter((s) => s.method === 'PUT')).toHaveLength(0);
    }
  });

  test('--dry-run shows a hostile stored value escaped, never raw', async () => {
    const name = 'Ann\u001b]0;PWNED\u0007\u009b2J';
    const r = await runAgainst(
      [{ status: 200, body: page([{ sourceOrderId: 'ord_h', sourceOrderNumber: '#1', currency: 'USD', customerName: name }]) }],
      ['orders', 'update', 'ord_h', '--total', '1', '--dry-run'],
      { env },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(r.stdout).toMatch(/kept +customerName +"Ann\\u001b\]0;PWNED\\u0007\\x9b2J"/);
    expect(r.seen.filter((s) => s.method === 'PUT')).toHaveLength(0);
  });

  test('long notices wrap at word boundaries on a terminal', async () => {
    const r = await runOpcli(['orders', 'update', 'ord_000011', ...REPLACE, '--dry-run'], { env: { ...env, COLUMNS: '60', NO_COLOR: '1' }, tty: true });
    expect(r.code).toBe(0);
    const warning = r.stderr.slice(r.stderr.indexOf('Warning:'), r.stderr.indexOf('Dry run'));
    expect(warning.split('\n').length).toBeGreaterThan(2);
    for (const line of warning.split('\n')) expect(line.length).toBeLessThanOrEqual(60);
    expect(warning.replace(/\s+/g, ' ')).toContain('customerEmail, customerName');
  });
});
