/**
 * The value ranges of the spec's fields (src/schemas.ts), one named case each, through the real
 * commands: refused before sending with the field named, or (where the spec leaves room) accepted.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { exampleClaim } from '../../src/commands/claims/template.js';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';

let sandbox: Sandbox;
let dir: string;
let cleanup: () => void;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ orders: 3 });
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(async () => {
  ({ dir, cleanup } = tempConfigDir());
  await sandboxProfile(sandbox, dir);
  env = { OPCLI_CONFIG_DIR: dir, CI: 'true' };
  sandbox.resetLog();
});
afterEach(() => cleanup());

/** Files a claim from --data with one field changed; returns the run. */
async function claimWith(path: string[], value: unknown) {
  const claim = exampleClaim(sandbox.store.storeId) as unknown as Record<string, Record<string, unknown>>;
  const [head, leaf] = path as [string, string];
  claim[head] = { ...claim[head], [leaf]: value };
  const file = join(dir, 'claim.json');
  writeFileSync(file, JSON.stringify(claim));
  return runOpcli(['claims', 'file', '--data', file], { env });
}

describe('claims: coordinates, dates, durations, URLs', () => {
  test.each([
    [['shippingAddress', 'lat'], 200, 'shippingAddress.lat: expected a latitude from -90 to 90'],
    [['shippingAddress', 'lat'], -90.5, 'shippingAddress.lat: expected a latitude from -90 to 90'],
    [['shippingAddress', 'lng'], 180.01, 'shippingAddress.lng: expected a longitude from -180 to 180'],
    [['item', 'price'], -1, 'item.price'],
    [['warranty', 'dateOfPurchase'], '2023-02-29T10:00:00Z', 'warranty.dateOfPurchase'],
    [['warranty', 'warrantyPeriod'], 'P', 'warranty.warrantyPeriod'],
    [['item', 'productImage'], 'javascript:alert(1)', 'item.productImage: expected an http:// or https:// URL'],
    [['item', 'images'], ['file:///etc/passwd'], 'item.images.0: expected an http:// or https:// URL'],
  ])('%j = %j is refused, named, and not sent', async (path, value, message) => {
    const r = await claimWith(path, value);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(sandbox.requests).toHaveLength(0);
  });

  test.each([
    [['shippingAddress', 'lat'], -90],
    [['shippingAddress', 'lng'], 180],
    [['warranty', 'dateOfPurchase'], '2024-02-29T10:00:00Z'],
    [['item', 'price'], 0],
  ])('the edge %j = %j is filed', async (path, value) => {
    const r = await claimWith(path, value);
    expect(r.code, r.stderr).toBe(0);
    expect(sandbox.requests.filter((q) => q.path === '/v1/claims/offline')).toHaveLength(1);
  });

  test('a signature must be an http(s) URL or empty', async () => {
    const claim = { ...exampleClaim(sandbox.store.storeId), signature: 'data:image/png;base64,AAAA' };
    writeFileSync(join(dir, 'c.json'), JSON.stringify(claim));
    const r = await runOpcli(['claims', 'file', '--data', join(dir, 'c.json')], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('signature: expected an http:// or https:// URL, or an empty string');
    expect(sandbox.requests).toHaveLength(0);
  });
});

describe('orders: amounts', () => {
  const BASE = ['orders', 'update', 'ord_000001', '--source-order-number', '1001', '--currency', 'USD'];
  test.each(['--total', '--subtotal', '--premium-paid', '--shipping-cost', '--tax', '--shipping-cost-tax'])(
    '%s -1 is refused, named, and not sent',
    async (flag) => {
      const r = await runOpcli([...BASE, flag, '-1'], { env });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('expected an amount of 0 or more');
      expect(sandbox.requests).toHaveLength(0);
    },
  );

  test('a negative discountTotal is sent: platforms write discounts with either sign', async () => {
    const r = await runOpcli([...BASE, '--discount-total', '-5'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(sandbox.requests.find((q) => q.method === 'PUT')?.body ?? '{}').discountTotal).toBe(-5);
  });

  test('an order id of ".." is refused: PUT /v1/orders/.. would reach PUT /v1/', async () => {
    const r = await runOpcli(['orders', 'update', '..', '--source-order-number', '1', '--currency', 'USD'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('The source order id ".." cannot be used in a URL path');
    expect(sandbox.requests).toHaveLength(0);
  });
});

describe('command lines commander refuses', () => {
  test('an unknown flag and a surplus argument say "Error:" like every other error, exit 2', async () => {
    const a = await runOpcli(['orders', 'list', '--sise', '5'], { env });
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/^Error: unknown option '--sise'/m);
    const b = await runOpcli(['auth', 'status', 'extra'], { env });
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/^Error: too many arguments/m);
    expect(sandbox.requests).toHaveLength(0);
  });

  test('a value flag given twice is refused whatever the command; a repeatable one collects', async () => {
    const a = await runOpcli(
      ['giftcard', 'issue', '--claim', 'C1', '--order', '1', '--amount', '10', '--amount', '100', '--email', 'a@example.com', '--name', 'A', '--yes'],
      { env },
    );
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('Error: --amount was given more than once.');
    expect(sandbox.requests).toHaveLength(0);
    const b = await runOpcli(['api', 'GET', '/v1/orders', '--query', 'size=1', '--query', 'buttonNum=1'], { env });
    expect(b.code, b.stderr).toBe(0);
    expect(sandbox.requests[0]?.query).toEqual({ size: '1', buttonNum: '1' });
  });
});
