/**
 * A batch checks its rows and reads its answers with zod's compiled schemas (claims/plan.ts `compiled`),
 * not the ones every other path uses. They are held to the schemas here on generated values: the
 * same success, the same parsed value, the same issues. zod hands back the schema itself when it
 * cannot compile one, so "not the same object" proves the fast path exists.
 */
import { fc, test } from '@fast-check/vitest';
import { expect, it } from 'vitest';
import { validateClaim } from '../../src/claims/plan.js';
import { compiled } from '../../src/claims/plan.js';
import { ClaimCreated, OfflineClaim } from '../../src/schemas.js';

/**
 * A field is mostly valid and now and then wrong: in its own way (a malformed e-mail, a date with no
 * zone) or as a value of another type, so most claims are valid or wrong in one or two places.
 */
const odd = fc.constantFrom<unknown>(null, '', ' ', 'x', 0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, true, [], {}, undefined);
const field = <T>(valid: fc.Arbitrary<T>, wrong: fc.Arbitrary<unknown> = odd) =>
  fc.oneof({ weight: 40, arbitrary: valid }, { weight: 1, arbitrary: wrong }, { weight: 1, arbitrary: odd });
const text = fc.string({ minLength: 1, maxLength: 6 });
const email = field(
  fc.constantFrom('alice@example.com', 'a.b+c@shop.co.uk', 'Alice@Example.COM'),
  fc.constantFrom('alice@', 'alice@example', ' alice@example.com', 'a@b.c'),
);
const dateTime = field(
  fc.constantFrom('2024-05-01T10:00:00Z', '2024-05-01T10:00:00+02:00', '2024-05-01T10:00:00.123Z'),
  fc.constantFrom('2024-05-01T10:00:00', '2024-05-01', '2024-13-01T10:00:00Z', '2024-05-01 10:00:00Z'),
);
const duration = field(fc.constantFrom('P1Y', 'P6M', 'P90D', 'P2W', 'P1DT12H'), fc.constantFrom('P', 'PT', '1Y', 'P1Y2W', 'p1y'));
const url = field(
  fc.constantFrom('https://example.com/a.jpg', 'http://example.com'),
  fc.constantFrom('ftp://example.com/a', 'example.com', 'https://', ' https://example.com', ''),
);
const money = field(fc.oneof(fc.double({ min: 0, max: 1e6, noNaN: true }), fc.integer({ min: 0, max: 1000 })), fc.constantFrom(-0.01, -5, '12.5'));
const enumOf = (values: readonly string[]) => field(fc.constantFrom(...values), fc.constantFrom(values[0]?.toLowerCase() ?? 'x', 'OTHER'));
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });
/** Now and then a key the schema does not know (strict objects refuse it), drawn by fast-check so a failure replays by seed. */
const extra = fc.oneof(
  { weight: 9, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('extra', 'note', 'price'), text, { minKeys: 1, maxKeys: 1 }) },
);

const claim = fc.record(
  {
    customer: field(fc.record({ email, phoneNumber: optional(field(text)) })),
    item: field(
      fc.record({
        name: field(text),
        price: money,
        details: optional(field(text)),
        sku: optional(field(text)),
        images: optional(field(fc.array(url, { maxLength: 2 }))),
        productImage: optional(url),
      }),
    ),
    warranty: field(
      fc.record({
        dateOfPurchase: dateTime,
        warrantyPeriod: duration,
        receiptRequired: optional(field(fc.boolean())),
        receiptImages: optional(field(fc.array(url, { maxLength: 2 }))),
      }),
    ),
    shippingAddress: field(
      fc.record({
        firstName: field(text),
        lastName: field(text),
        address1: field(text),
        city: field(text),
        zip: field(fc.constantFrom('02139', '62701'), fc.constant('')),
        country: field(text),
        lat: optional(field(fc.double({ min: -90, max: 90, noNaN: true }), fc.constantFrom(-90.5, 91))),
        lng: optional(field(fc.double({ min: -180, max: 180, noNaN: true }), fc.constantFrom(-181, 180.5))),
      }),
    ),
    storeId: field(fc.constant('store_1001'), fc.constant('')),
    signature: field(fc.constantFrom('', 'https://example.com/s.png'), fc.constantFrom('ftp://example.com/s', 'signature')),
    salesChannel: enumOf(['ONLINE', 'IN_STORE']),
    claimCategory: enumOf(['SHIPPING', 'WARRANTY']),
    issueType: enumOf(['DEFECTIVE_ITEM', 'STOLEN']),
    resolution: enumOf(['RESHIP', 'REFUND', 'STORE_CREDIT']),
    claimFiledFrom: optional(enumOf(['EXTERNAL', 'INTERNAL'])),
    options: optional(field(fc.record({ fromValet: optional(field(fc.boolean())), requireCustomerSignature: optional(field(fc.boolean())) }))),
  },
  { requiredKeys: ['customer', 'item', 'warranty', 'shippingAddress', 'storeId', 'signature', 'salesChannel', 'claimCategory', 'issueType', 'resolution'] },
);

/** What a safeParse answered, in a form two answers compare by. */
function answer(result: { success: boolean; data?: unknown; error?: { issues: { path: PropertyKey[]; code: string; message: string }[] } }) {
  return result.success
    ? { success: true, data: result.data }
    : { success: false, issues: result.error?.issues.map((i) => ({ path: i.path.map(String), code: i.code, message: i.message })) };
}

const fastClaim = compiled(OfflineClaim);
const counts = { seen: 0, valid: 0 };

test.prop([claim, extra], { numRuns: 3000 })('the compiled claim schema answers every claim as OfflineClaim does', (generated, unknownKeys) => {
  const value = unknownKeys ? { ...generated, ...unknownKeys } : generated;
  const runtime = answer(OfflineClaim.safeParse(value));
  counts.seen++;
  if (runtime.success) counts.valid++;
  expect(answer(fastClaim.safeParse(value))).toEqual(runtime);
  // And the batch's check says what the one-off check says, messages included.
  expect(validateClaim(value, [], fastClaim)).toEqual(validateClaim(value));
});

it('the generated claims were valid often enough to test the fast path', () => {
  expect(counts.seen).toBeGreaterThan(0);
  expect(counts.valid).toBeGreaterThanOrEqual(counts.seen / 20);
});

const created = fc.record(
  {
    status: field(fc.constant('ok'), fc.constantFrom('OK', 'error')),
    payload: field(
      fc.record(
        { sourceOrderId: field(fc.constantFrom('ord_1', '123'), fc.constant('')), customer: field(fc.record({ email })), storeId: field(text) },
        { requiredKeys: [] },
      ),
    ),
    message: optional(text),
  },
  { requiredKeys: [] },
);

test.prop([created], { numRuns: 2000 })('the compiled answer schema reads every creation answer as ClaimCreated does', (body) => {
  const value = JSON.parse(JSON.stringify(body ?? null));
  expect(answer(compiled(ClaimCreated).safeParse(value))).toEqual(answer(ClaimCreated.safeParse(value)));
});

it('the compiled schemas are built once, and compiled (zod returns a schema it cannot compile unchanged)', () => {
  expect(compiled(OfflineClaim)).toBe(fastClaim);
  expect(fastClaim).not.toBe(OfflineClaim);
  expect(compiled(ClaimCreated)).not.toBe(ClaimCreated);
});
