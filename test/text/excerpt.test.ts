import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { excerpt, jsonProblem, positionIn, quoteInput } from '../../src/text/excerpt.js';

describe('input quoted in errors', () => {
  test('short text is quoted whole; long text is cut at 200 characters with its length', () => {
    expect(quoteInput('abc')).toBe('"abc"');
    expect(quoteInput('x'.repeat(200))).toBe(`"${'x'.repeat(200)}"`);
    expect(quoteInput('x'.repeat(100_000))).toBe(`"${'x'.repeat(200)}…" (100,000 characters)`);
    expect(quoteInput('y'.repeat(80), 60)).toBe(`"${'y'.repeat(60)}…" (80 characters)`);
  });

  test('a cut never splits a surrogate pair', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.integer({ min: 1, max: 250 }), (s, max) => {
        const out = excerpt(s, max);
        expect(out.length).toBeLessThanOrEqual(max + 1);
        expect(() => encodeURIComponent(out)).not.toThrow();
      }),
    );
  });

  test('positions: 1-based line and column, 0-based UTF-8 byte offset', () => {
    expect(positionIn('ab\ncdé\nf', 0)).toEqual({ line: 1, column: 1, byte: 0 });
    expect(positionIn('ab\ncdé\nf', 7)).toEqual({ line: 3, column: 1, byte: 8 });
  });

  test('a JSON.parse message gets its line, column and byte when V8 gives a position', () => {
    const text = '{\n  "a": 1x\n}';
    let error: unknown;
    try {
      JSON.parse(text);
    } catch (e) {
      error = e;
    }
    const message = jsonProblem(error, text);
    if (/position/.test((error as Error).message)) expect(message).toMatch(/, at line 2, column 9 \(byte 10\)$/);
    expect(message.length).toBeLessThanOrEqual(201 + 60);
  });
});
