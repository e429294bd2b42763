import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLAIM_FIELDS } from '../../src/claims/fields.js';
import { fieldKinds } from '../../src/input/flags.js';
import { garbledText } from '../../src/input/issues.js';
import { kebab, schemaFields } from '../../src/input/schema.js';
import { Order } from '../../src/schemas.js';

describe('input: what a schema accepts', () => {
  it('reads kinds, formats, enums, optional and nullable through the public API', () => {
    const schema = z.strictObject({
      id: z.string().min(1),
      count: z.number().int().nonnegative().optional(),
      price: z.number(),
      paid: z.boolean().default(false),
      at: z.iso.datetime({ offset: true }).nullable().optional(),
      kind: z.enum(['A', 'B']),
      tags: z.array(z.string()),
      box: z.object({ width: z.number(), label: z.string().optional() }).optional(),
    });
    const flat = schemaFields(schema).map((f) => [f.key, f.type, f.format ?? '', f.values?.join('|') ?? '', f.optional, f.nullable]);
    expect(flat).toEqual([
      ['id', 'string', '', '', false, false],
      ['count', 'integer', '', '', true, false],
      ['price', 'number', '', '', false, false],
      ['paid', 'boolean', '', '', true, false],
      ['at', 'string', 'datetime', '', true, true],
      ['kind', 'enum', '', 'A|B', false, false],
      ['tags', 'array', '', '', false, false],
      ['box', 'string', '', '', true, false],
    ]);
    // Walking into objects: a field below an optional object is optional too.
    expect(
      schemaFields(schema, { nested: true })
        .slice(-2)
        .map((f) => [f.key, f.type, f.optional]),
    ).toEqual([
      ['box.width', 'number', true],
      ['box.label', 'string', true],
    ]);
  });

  it('derives one flag name rule for every command', () => {
    expect(kebab('sourceOrderNumber')).toBe('source-order-number');
    expect(kebab('address1')).toBe('address1');
    expect(fieldKinds(Order).find((k) => k.name === 'customerEmail')?.flag).toBe('customer-email');
    expect(CLAIM_FIELDS.find((f) => f.key === 'shippingAddress.countryAbr')?.flag).toBe('shipping-country-abr');
    expect(CLAIM_FIELDS.find((f) => f.key === 'signature')).toMatchObject({ required: true, acceptsEmpty: true });
  });

  it('finds text no one typed on purpose at any depth, and lets "" stand only where it is a value', () => {
    const body = { a: 'ok', b: { c: 'x\u0007', d: ['fine', '\uFFFD'] }, e: '', signature: '' };
    expect(garbledText(body).map((i) => i.path)).toEqual(['b.c', 'b.d.1']);
    expect(garbledText(body, { refuseEmpty: true, mayBeEmpty: new Set(['signature']) }).map((i) => i.path)).toEqual(['b.c', 'b.d.1', 'e']);
  });

  it('no source file reads zod internals', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (path.endsWith('.ts') && readFileSync(path, 'utf8').includes('._zod')) offenders.push(path);
      }
    };
    walk('src');
    expect(offenders).toEqual([]);
  });
});
