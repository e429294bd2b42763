import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';

let sandbox: Sandbox;
let dir: string;
let cleanup: () => void;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ orders: 30 });
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(async () => {
  ({ dir, cleanup } = tempConfigDir());
  await sandboxProfile(sandbox, dir);
  env = { OPCLI_CONFIG_DIR: dir };
  sandbox.resetLog();
});
afterEach(() => cleanup());

const puts = () => sandbox.requests.filter((r) => r.method === 'PUT');
const BASE = ['--source-order-number', '#2001', '--currency', 'USD'];

describe('orders update: sending', () => {
  test('flags become the body; the order is updated; "Order X updated" on stderr', async () => {
    const r = await runOpcli(
      ['orders', 'update', 'ord_000005', ...BASE, '--total', '42.5', '--premium-paid', '1.25', '--customer-email', 'a@b.co', '--policy-cancelled-at', 'null', '--platform-id', 'api'],
      { env },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Order ord_000005 updated.');
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
    const r = await runOpcli(['orders', 'update', 'ord_000007', '--data', file, '--currency', 'GBP', '--total', '11'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(puts()[0]?.body ?? '')).toEqual({ sourceOrderNumber: '#3001', currency: 'GBP', total: 11, customerName: 'Ann' });

    const r2 = await runOpcli(['orders', 'update', 'ord_000008', '--data', '-'], {
      env,
      stdin: JSON.stringify({ sourceOrderNumber: '#3002', currency: 'JPY', sourceCreatedAt: '2024-05-01T14:00:00+02:00' }),
    });
    expect(r2.code).toBe(0);
    expect(sandbox.order('ord_000008')).toMatchObject({ currency: 'JPY', sourceCreatedAt: '2024-05-01T14:00:00+02:00' });
  });

  test.each(['XSU', 'ZWR', 'BOV', 'XXX', 'ADP'])('rare currency %s from the spec list is accepted and sent', async (code) => {
    const r = await runOpcli(['orders', 'update', 'ord_000009', '--source-order-number', '#1', '--currency', code], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(puts()[0]?.body ?? '').currency).toBe(code);
  });

  test('an unknown order is reported as such, exit 1', async () => {
    const r = await runOpcli(['orders', 'update', 'ord_999999', ...BASE], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Order ord_999999 not found');
    expect(puts()[0]?.status).toBe(404);
  });

  test('--dry-run prints method, path and body and sends nothing', async () => {
    const r = await runOpcli(['orders', 'update', 'ord_000010', ...BASE, '--tax', '3', '--dry-run'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('PUT /v1/orders/ord_000010');
    expect(r.stdout).toContain('"tax": 3');
    expect(r.stderr).toContain('nothing was sent');
    const json = await runOpcli(['orders', 'update', 'ord_000010', ...BASE, '--dry-run', '--json'], { env });
    expect(JSON.parse(json.stdout)).toEqual({ method: 'PUT', path: '/v1/orders/ord_000010', body: { sourceOrderNumber: '#2001', currency: 'USD' } });
    expect(sandbox.requests).toHaveLength(0);
  });
});

describe('orders update: validation before sending (exit 2, no request)', () => {
  const cases: [string, string[], RegExp][] = [
    ['unknown currency with the closest code', ['--source-order-number', '#1', '--currency', 'USX'], /USX is not a currency the API accepts; did you mean USD/],
    ['lower-case currency', ['--source-order-number', '#1', '--currency', 'eur'], /eur is not a currency the API accepts; did you mean EUR\?/],
    ['missing currency', ['--source-order-number', '#1'], /currency is required \(--currency\)/],
    ['missing order number', ['--currency', 'USD'], /sourceOrderNumber is required/],
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

  test('every Order field has a flag', async () => {
    const { ORDER_FIELDS } = await import('../../src/schemas.js');
    const r = await runOpcli(['orders', 'update', '--help'], { env });
    for (const field of ORDER_FIELDS) expect(r.stdout).toContain(`--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} <value>`);
  });
});
