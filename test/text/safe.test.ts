import { describe, expect, test } from 'vitest';
import { isSafeText, safeLine, safeText } from '../../src/text/safe.js';

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
