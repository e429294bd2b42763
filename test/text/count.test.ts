import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { count } from '../../src/text/count.js';

describe('count', () => {
  test('writes what toLocaleString("en-US") writes, for any safe integer', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.integer({ min: -1_000_000, max: 1_000_000 })), (n) => {
        expect(count(n)).toBe(n.toLocaleString('en-US'));
      }),
      { numRuns: 2_000 },
    );
  });

  test('commas every three digits, from the right', () => {
    expect([0, 7, 999, 1_000, 12_345, 100_000, 1_234_567, -1_000, Number.MAX_SAFE_INTEGER].map(count)).toEqual([
      '0',
      '7',
      '999',
      '1,000',
      '12,345',
      '100,000',
      '1,234,567',
      '-1,000',
      '9,007,199,254,740,991',
    ]);
  });

  test('anything but a safe integer is left to toLocaleString', () => {
    for (const n of [1.5, 2 ** 60, Number.NaN, Number.POSITIVE_INFINITY]) expect(count(n)).toBe(n.toLocaleString('en-US'));
  });
});
