import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { escapeInvisible, isSafeText, safeLine, safeText } from '../../src/text/safe.js';

describe('server text made safe for a terminal', () => {
  const attack = 'Ann\u001b]0;PWNED\u0007\u001b[2J Lee';

  test('escape sequences, BEL and C1 become visible escapes', () => {
    expect(safeText(attack)).toBe('Ann\\x1b]0;PWNED\\x07\\x1b[2J Lee');
    expect(safeText('a\u009bb\u007fc')).toBe('a\\x9bb\\x7fc');
    expect(isSafeText(safeText(attack))).toBe(true);
    expect(isSafeText(attack)).toBe(false);
  });

  test('a carriage return cannot rewrite the line', () => {
    expect(safeText('refused\rError: all good')).toBe('refused\\rError: all good');
  });

  test('multi-line text keeps its newlines; a cell does not', () => {
    expect(safeText('one\ntwo\tthree')).toBe('one\ntwo\tthree');
    expect(safeLine('one\ntwo\r\nthree\tfour')).toBe('one⏎two⏎three four');
    expect(safeLine('x\ry')).toBe('x\\ry');
  });

  test('plain text, wide characters and emoji pass unchanged', () => {
    for (const s of ['Zoë Ünal', '東京 📦', '#1001 – $19.99']) expect(safeLine(s)).toBe(s);
    expect(safeText(undefined)).toBe('');
    expect(safeLine(42)).toBe('42');
  });
});

describe('bidi controls and invisible characters', () => {
  test('bidi overrides, isolates and marks become \\u escapes', () => {
    // "invoice\u202Efdp.exe" reads "invoiceexe.pdf" on a terminal.
    expect(safeText('invoice\u202efdp.exe')).toBe('invoice\\u202efdp.exe');
    expect(safeLine('a\u202ab\u202bc\u202cd\u202de\u202ef')).toBe('a\\u202ab\\u202bc\\u202cd\\u202de\\u202ef');
    expect(safeLine('\u2066x\u2067y\u2068z\u2069')).toBe('\\u2066x\\u2067y\\u2068z\\u2069');
    expect(safeLine('\u200e\u200f\u061c')).toBe('\\u200e\\u200f\\u061c');
  });

  test('zero-width and other format characters, and the line separators, are escaped', () => {
    expect(safeLine('pay\u200bpal')).toBe('pay\\u200bpal');
    expect(safeLine('a\u200cb\u200dc\u2060d\u2061e\u2064f\ufeffg\u00adh')).toBe('a\\u200cb\\u200dc\\u2060d\\u2061e\\u2064f\\ufeffg\\xadh');
    expect(safeText('x\u2028y\u2029z')).toBe('x\\u2028y\\u2029z');
    // Tags (astral, the "ASCII smuggling" block): one escape per code point, not per surrogate.
    expect(safeLine('ok\u{e0041}\u{e007f}')).toBe('ok\\u{e0041}\\u{e007f}');
    expect(isSafeText('pay\u200bpal')).toBe(false);
  });

  test('a joiner between two emoji is kept: the emoji are drawn, nothing hides', () => {
    for (const s of ['👩\u200d💻', '👨\u200d👩\u200d👧', '🏳\ufe0f\u200d🌈', '👋🏽\u200d🔥']) expect(safeLine(s)).toBe(s);
    expect(safeLine('a\u200db')).toBe('a\\u200db');
    expect(safeLine('👩\u200db')).toBe('👩\\u200db');
  });

  test('escapeInvisible keeps JSON valid and its values exact, and leaves C0 (colours) alone', () => {
    const value = { name: 'A\u202eB\u200bC\u0085D\u{e0041}', n: 1 };
    const json = JSON.stringify(value);
    const out = escapeInvisible(json);
    expect(out).toBe('{"name":"A\\u202eB\\u200bC\\u0085D\\udb40\\udc41","n":1}');
    expect(JSON.parse(out)).toEqual(value);
    expect(escapeInvisible('\u001b[31mError:\u001b[39m x')).toBe('\u001b[31mError:\u001b[39m x');
  });

  // What may remain in safeText's output: tab and newline, and a joiner between two emoji.
  const controlOrFormat = /[\p{Cc}\p{Cf}\u2028\u2029]/u;
  const leftover = (out: string, keep: RegExp) =>
    [...out.matchAll(new RegExp(controlOrFormat.source, 'gu'))].filter((m) => {
      if (keep.test(m[0])) return false;
      if (m[0] !== '\u200d') return true;
      const before = out.slice(Math.max(0, (m.index as number) - 4), m.index);
      return !(
        /\p{Extended_Pictographic}[\u{fe0f}\u{1f3fb}-\u{1f3ff}]?$/u.test(before) && /^\p{Extended_Pictographic}/u.test(out.slice((m.index as number) + 1))
      );
    });
  const hostile = fc.string({
    unit: fc.oneof(
      fc.constantFrom(
        '\u202e',
        '\u202a',
        '\u2066',
        '\u2069',
        '\u200b',
        '\u200d',
        '\ufeff',
        '\u00ad',
        '\u061c',
        '\u2028',
        '\u001b',
        '\u0085',
        '\r',
        '\n',
        '\t',
        '👩',
        '\ufe0f',
        '\u{e0041}',
      ),
      fc.string({ unit: 'grapheme', maxLength: 1 }),
      fc
        .integer({ min: 0, max: 0x10ffff })
        .filter((c) => c < 0xd800 || c > 0xdfff)
        .map((c) => String.fromCodePoint(c)),
    ),
    maxLength: 40,
  });

  test('property: safeText output holds no control, format or separator character but tab, newline and an emoji joiner', () => {
    fc.assert(
      fc.property(hostile, (s) => {
        expect(leftover(safeText(s), /[\t\n]/)).toEqual([]);
        expect(leftover(safeLine(s), /(?!)/)).toEqual([]);
      }),
      { numRuns: 2000 },
    );
  });

  test('property: escapeInvisible leaves no format, C1 or separator character in JSON, and the JSON means the same', () => {
    fc.assert(
      fc.property(hostile, (s) => {
        const out = escapeInvisible(JSON.stringify({ s }));
        expect(JSON.parse(out)).toEqual({ s });
        expect(leftover(out, /[\u0000-\u001f]/)).toEqual([]);
      }),
      { numRuns: 2000 },
    );
  });
});
