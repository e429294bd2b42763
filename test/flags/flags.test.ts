import { describe, expect, test } from 'vitest';
import { formatDuration, parseDuration, parseRate, parseWholeNumber } from '../../src/core/flags.js';

describe('parseDuration: one format for every duration flag', () => {
  test.each([
    ['300ms', 300],
    ['4.5s', 4500],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    [' 2S ', 2000],
  ])('%s is %d ms', (raw, ms) => {
    expect(parseDuration(raw, '--wait')).toBe(ms);
  });

  test('a bare number is refused with the unit to add', () => {
    expect(() => parseDuration('300', '--timeout')).toThrow(/--timeout "300" has no unit/);
    try {
      parseDuration('300', '--timeout');
    } catch (error) {
      expect((error as { hint: string }).hint).toMatch(/300s for seconds, 300ms for milliseconds/);
      expect((error as { exitCode: number }).exitCode).toBe(2);
    }
  });

  test('bounds: at most one day by default, and the minimum given', () => {
    expect(() => parseDuration('3000000s', '--timeout')).toThrow(/too long: at most 1d/);
    expect(() => parseDuration('25h', '--timeout')).toThrow(/at most/);
    expect(() => parseDuration('500ms', '--trigger-wait', { minMs: 1000 })).toThrow(/too short: at least 1s/);
    expect(() => parseDuration('soon', '--x')).toThrow(/not a duration/);
    expect(() => parseDuration('-1s', '--x')).toThrow(/not a duration/);
    expect(() => parseDuration('1e3ms', '--x')).toThrow(/not a duration/);
  });

  test('formatDuration prints what parseDuration reads back', () => {
    for (const ms of [250, 1000, 4500, 90_000, 300_000, 3_600_000]) expect(parseDuration(formatDuration(ms), '--x')).toBe(ms);
  });
});

describe('numbers', () => {
  test('whole numbers: digits only, within bounds', () => {
    expect(parseWholeNumber('42', '--size', { min: 1 })).toBe(42);
    for (const bad of ['-1', '1.5', '1e3', '0x10', '', 'ten']) expect(() => parseWholeNumber(bad, '--size', { min: 1 })).toThrow(/--size/);
    expect(() => parseWholeNumber('0', '--size', { min: 1 })).toThrow('--size "0" is out of range: expected 1 or more.');
    expect(() => parseWholeNumber('70000', '--port', { max: 65535 })).toThrow('--port "70000" is out of range: expected 0 to 65,535.');
    expect(() => parseWholeNumber('99999999999999999999', '--size', { min: 1 })).toThrow('--size "99999999999999999999" is too large: expected 1 or more.');
  });

  test('rates', () => {
    expect(parseRate('40/s', '--rate')).toBe(40);
    expect(parseRate('600/m', '--rate')).toBe(10);
    expect(parseRate('5', '--rate')).toBe(5);
    expect(() => parseRate('0/s', '--rate')).toThrow(/not a rate/);
    expect(() => parseRate('fast', '--rate')).toThrow(/not a rate/);
  });
});
