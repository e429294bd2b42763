/**
 * Issue 38 row 12: a decimal with more digits than a number holds (19.999999999999999999) was sent as
 * 20. Every reader of decimals (flags, field flags, claim cells, --data) refuses it by one rule: what
 * is sent must be the number written.
 */
import { describe, expect, test } from 'vitest';
import { coerceText, FIELD_BY_KEY } from '../../src/claims/fields.js';
import { inexactDecimal } from '../../src/core/flags.js';
import { inexactNumber } from '../../src/core/json-text.js';

describe('inexactDecimal: the number a text would be sent as, when it is not the one written', () => {
  test.each(['0', '-0', '19.99', '0.1', '0.30', '1000000', '123456789012345', '1.23456789012345', '0.000001', '9007199254740992', '1e21', '-2.5'])(
    '%s is sent as written',
    (text) => {
      expect(inexactDecimal(text)).toBeUndefined();
    },
  );

  test.each([
    ['19.999999999999999999', 20],
    ['9007199254740993', 9007199254740992],
    ['0.12345678901234567891', 0.12345678901234568],
    ['1e400', Number.POSITIVE_INFINITY],
  ])('%s would be sent as %d', (text, sent) => {
    expect(inexactDecimal(text)).toBe(sent);
  });

  test('every decimal of at most 15 significant digits is sent as written (a sample of 2,000)', () => {
    let seed = 38;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let i = 0; i < 2000; i++) {
      const digits = String(next()).padStart(10, '0') + String(next() % 100000).padStart(5, '0');
      const point = next() % 16;
      const text = `${digits.slice(0, point) || '0'}.${digits.slice(point)}`;
      expect(inexactDecimal(text), text).toBeUndefined();
    }
  });
});

describe('each reader refuses it, naming the field and what it would become', () => {
  test('a claim cell (item.price)', () => {
    const price = FIELD_BY_KEY.get('item.price');
    if (!price) throw new Error('no item.price field');
    expect(coerceText(price, '19.999999999999999999').issue).toEqual({
      path: 'item.price',
      message: expect.stringMatching(/"19.999999999999999999" has more digits than a number holds exactly .* would be sent as 20/),
    });
    expect(coerceText(price, '49.99')).toEqual({ value: 49.99 });
  });

  test('a number in JSON text, never a string that looks like one', () => {
    expect(inexactNumber('{"name":"19.999999999999999999","total":19.99}')).toBeUndefined();
    expect(inexactNumber('{"a":"x\\"19.999999999999999999","b":[1,-19.999999999999999999]}')).toEqual({ literal: '-19.999999999999999999', sent: -20 });
  });
});
