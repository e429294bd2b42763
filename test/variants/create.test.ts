import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { profileSuite, runOpcli } from '../helpers.js';

let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

profileSuite((s) => ({ sandbox, dir, env } = s), { sandbox: { orders: 5 } });

const REQUIRED = ['--status', 'ACTIVE', '--name', 'Mug, blue', '--price', '12.5', '--inventory-quantity', '40', '--product-type', 'SIMPLE'];
/** The required fields of a variant, valid, as a --data file holds them. */
const VALID = { status: 'ACTIVE', name: 'Mug', price: 1, inventoryQuantity: 1, productType: 'SIMPLE' };

/**
 * Writes `body` (as JSON, or raw bytes) to the file `name` of this test's folder and runs
 * `variants create <productId> --data <file>` with `flags`; the result carries the file's path.
 */
async function createFrom(productId: string, name: string, body: unknown, flags: string[] = []) {
  const file = join(dir, name);
  writeFileSync(file, Buffer.isBuffer(body) ? body : JSON.stringify(body));
  return { ...(await runOpcli(['variants', 'create', productId, '--data', file, ...flags], { env })), file };
}

const posts = () => sandbox.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v2/products/'));

describe('variants create', () => {
  test('every flag becomes its field; the variant is created', async () => {
    const before = sandbox.variants.length;
    const optional = ['--variant-id', 'var_a1', '--description', 'a blue mug', '--sku', 'MUG-B', '--tax', '7', '--inventory-type', 'FULL'];
    const image = 'https://img.example/mug.png';
    const r = await runOpcli(['variants', 'create', 'prod_a', ...REQUIRED, ...optional, '--product-image', image, '--in-stock'], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('created under product prod_a');
    expect(posts()[0]?.path).toBe('/v2/products/prod_a/children');
    expect(JSON.parse(posts()[0]?.body ?? '')).toEqual({
      productId: 'prod_a',
      status: 'ACTIVE',
      name: 'Mug, blue',
      price: 12.5,
      inventoryQuantity: 40,
      productType: 'SIMPLE',
      variantId: 'var_a1',
      description: 'a blue mug',
      sku: 'MUG-B',
      tax: 7,
      inventoryType: 'FULL',
      productImage: image,
      inStock: true,
    });
    expect(sandbox.variants.length).toBe(before + 1);
  });

  test('--no-in-stock sends false; --json prints the answer', async () => {
    const r = await runOpcli(['variants', 'create', 'prod_b', ...REQUIRED, '--no-in-stock', '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ status: 'ok' });
    expect(JSON.parse(posts()[0]?.body ?? '').inStock).toBe(false);
  });

  test('--bundle-product-id is repeatable and names created variants', async () => {
    for (const id of ['part_1', 'part_2']) expect((await runOpcli(['variants', 'create', id, ...REQUIRED], { env })).code).toBe(0);
    const r = await runOpcli(
      ['variants', 'create', 'bundle_1', ...REQUIRED.slice(0, 8), '--product-type', 'FULL', '--bundle-product-id', 'part_1', '--bundle-product-id', 'part_2'],
      { env },
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(posts().at(-1)?.body ?? '').bundleProductIds).toEqual(['part_1', 'part_2']);
  });

  test('a validation refusal by the server shows the field errors, exits 2, and nothing is created', async () => {
    const before = sandbox.variants.length;
    const r = await runOpcli(['variants', 'create', 'bundle_2', ...REQUIRED, '--bundle-product-id', 'never_created'], { env });
    expect(r.code).toBe(2);
    expect(posts()[0]?.status).toBe(400);
    expect(r.stderr).toContain('bundleProductIds.0');
    expect(r.stderr).toContain('never_created');
    expect(sandbox.variants.length).toBe(before);
  });

  test('--data with flags overriding it; a productId that differs from the argument is refused', async () => {
    const cup = { status: 'DRAFT', name: 'Cup', price: 3, inventoryQuantity: 0, productType: 'SIMPLE' };
    const r = await createFrom('prod_c', 'variant.json', { ...cup, sku: 'CUP' }, ['--status', 'ARCHIVED']);
    expect(r.code).toBe(0);
    expect(JSON.parse(posts()[0]?.body ?? '')).toEqual({
      productId: 'prod_c',
      status: 'ARCHIVED',
      name: 'Cup',
      price: 3,
      inventoryQuantity: 0,
      productType: 'SIMPLE',
      sku: 'CUP',
    });
    const r2 = await createFrom('prod_c', 'variant.json', { productId: 'other', ...cup });
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain('differs from the argument');
    expect(posts()).toHaveLength(1);
  });

  test('--dry-run prints the request and sends nothing', async () => {
    const r = await runOpcli(['variants', 'create', 'prod_d', ...REQUIRED, '--dry-run', '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ method: 'POST', path: '/v2/products/prod_d/children', body: { productId: 'prod_d', inventoryQuantity: 40 } });
    expect(sandbox.requests).toHaveLength(0);
  });
});

describe('variants create: validation before sending (exit 2, no request)', () => {
  const without = (flag: string) => {
    const i = REQUIRED.indexOf(flag);
    return [...REQUIRED.slice(0, i), ...REQUIRED.slice(i + 2)];
  };
  const cases: [string, string[], RegExp][] = [
    ['status enum', [...without('--status'), '--status', 'LIVE'], /status: expected one of ACTIVE, DRAFT, ARCHIVED, DELETED, got "LIVE"/],
    ['status suggestion', [...without('--status'), '--status', 'ACTIV'], /did you mean ACTIVE\?/],
    ['productType enum', [...without('--product-type'), '--product-type', 'BUNDLE'], /productType: expected one of FULL, SIMPLE/],
    ['inventoryType enum', [...REQUIRED, '--inventory-type', 'full'], /inventoryType: expected one of FULL, SIMPLE, got "full"; did you mean FULL\?/],
    [
      'inventoryQuantity as the declared enum',
      [...without('--inventory-quantity'), '--inventory-quantity', 'FULL'],
      /--inventory-quantity expects a finite whole number, got "FULL"/,
    ],
    [
      'inventoryQuantity fraction',
      [...without('--inventory-quantity'), '--inventory-quantity', '1.5'],
      /inventoryQuantity: expected a whole number of 0 or more, got 1.5/,
    ],
    [
      'inventoryQuantity negative',
      [...without('--inventory-quantity'), '--inventory-quantity', '-1'],
      /inventoryQuantity: expected a whole number of 0 or more, got -1/,
    ],
    ['price not a number', [...without('--price'), '--price', '12,50'], /--price expects a finite number, got "12,50"/],
    ['tax not a number', [...REQUIRED, '--tax', 'tax_1'], /--tax expects a finite number/],
    ['missing name', without('--name'), /name: missing \(required: a value\); pass --name/],
    ['missing status', without('--status'), /status: missing \(required: one of .*\); pass --status/],
    ['negative price', [...without('--price'), '--price', '-1'], /price: expected a price of 0 or more/],
    ['price in exponent notation', [...without('--price'), '--price', '1e3'], /--price expects a finite number, got "1e3" \(write it without an exponent\)/],
    ['a name with a control character', [...without('--name'), '--name', 'Mug\x1b[2J'], /--name holds a control character/],
    ['a name with bytes that were not UTF-8', [...without('--name'), '--name', 'Caf\uFFFD'], /--name holds U\+FFFD/],
    ['an empty optional flag', [...REQUIRED, '--sku', ''], /--sku is empty/],
    ['a blank bundle item', [...REQUIRED, '--bundle-product-id', 'p1', '--bundle-product-id', ' '], /--bundle-product-id is blank/],
    ['a flag given twice', [...REQUIRED, '--price', '13'], /--price was given more than once/],
    ['a boolean given both ways', [...REQUIRED, '--in-stock', '--no-in-stock'], /--in-stock and --no-in-stock contradict/],
  ];
  test.each(cases)('%s', async (_name, flags, message) => {
    const r = await runOpcli(['variants', 'create', 'prod_v', ...flags], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(sandbox.requests).toHaveLength(0);
  });

  test.each([
    ['..', /The product id "\.\." cannot be used in a URL path/],
    ['.', /The product id "\." cannot be used in a URL path/],
    [' ', /productId argument is blank/],
    ['prod\x07', /productId argument holds a control character/],
  ])('productId %j is refused: a URL would resolve it away or it cannot be an id', async (id, message) => {
    const r = await runOpcli(['variants', 'create', id, ...REQUIRED], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(sandbox.requests).toHaveLength(0);
  });

  test('an id with a slash is sent percent-encoded, to the right endpoint', async () => {
    const r = await runOpcli(['variants', 'create', 'gid://shop/Product/1', ...REQUIRED, '--json'], { env });
    expect(r.code).toBe(0);
    expect(posts()[0]?.path).toBe('/v2/products/gid%3A%2F%2Fshop%2FProduct%2F1/children');
  });

  test('a productImage that is not an http(s) URL is sent, with a warning (the spec types it a string)', async () => {
    const r = await runOpcli(['variants', 'create', 'prod_i', ...REQUIRED, '--product-image', 'images/mug.png'], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Warning: productImage "images/mug.png" is not an http:// or https:// URL; it is sent as given.');
    expect(JSON.parse(posts()[0]?.body ?? '').productImage).toBe('images/mug.png');
    const ok = await runOpcli(['variants', 'create', 'prod_i', ...REQUIRED, '--product-image', 'https://img.example/m.png'], { env });
    expect(ok.stderr).not.toContain('Warning');
  });

  test('a --data file that is not UTF-8 is refused by name; a negative price in it is named', async () => {
    // "Café" with its é as the one Latin-1 byte 0xE9, which is not UTF-8.
    const latin1 = Buffer.from(JSON.stringify({ ...VALID, name: 'Caf\u00e9' }), 'latin1');
    const r = await createFrom('prod_u', 'latin1.json', latin1);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`The --data file ${r.file} is not UTF-8 text.`);
    const r2 = await createFrom('prod_u', 'latin1.json', { ...VALID, name: 'Cafe', price: -0.01 });
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain('price: expected a price of 0 or more');
    expect(sandbox.requests).toHaveLength(0);
  });

  test('a --data string holding a control character is named by field and not sent', async () => {
    const r = await createFrom('prod_k', 'ctl.json', { ...VALID, name: 'Mug\u001b[2J', bundleProductIds: ['ok', 'b\u0007'] });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('name: holds a control character');
    expect(r.stderr).toContain('bundleProductIds.1: holds a control character');
    expect(sandbox.requests).toHaveLength(0);
  });

  test('wrong types in --data are named by field', async () => {
    const r = await createFrom('prod_w', 'v.json', { ...VALID, name: 'X', price: '3', inStock: 'yes', bundleProductIds: 'a', colour: 'red' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('price: expected a number, got "3"');
    expect(r.stderr).toContain('inStock');
    expect(r.stderr).toContain('bundleProductIds');
    expect(r.stderr).toContain('unknown field "colour"');
    expect(sandbox.requests).toHaveLength(0);
  });
});
