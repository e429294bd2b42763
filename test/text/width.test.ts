import { describe, expect, test } from 'vitest';
import { csvCell, fitWidths, renderTable } from '../../src/core/output.js';
import { displayWidth, truncate, wrapProse, wrapText } from '../../src/text/wrap.js';

describe('width, truncation and wrapping', () => {
  test('wide characters and emoji take two columns; truncation never splits a grapheme', () => {
    expect(displayWidth('東京')).toBe(4);
    expect(displayWidth('📦a')).toBe(3);
    expect(truncate('東京タワー', 5)).toBe('東京…');
    expect(displayWidth(truncate('👩‍👩‍👧 family', 4))).toBeLessThanOrEqual(4);
    expect(truncate('short', 10)).toBe('short');
  });

  test('a table never exceeds its width, whatever it holds', async () => {
    for (const max of [40, 80, 100]) {
      const out = await renderTable(['a', 'bbbbbbbbbb', 'c'], [['x'.repeat(90), '東京'.repeat(30), '📦']], max);
      for (const line of out.text.trimEnd().split('\n')) expect(displayWidth(line)).toBeLessThanOrEqual(max);
    }
    expect(fitWidths([10, 10], 100)).toEqual([10, 10]);
  });

  test('cli-table3 draws the table: every line is as wide as the border, cut cells end in …, ASCII for dumb terminals', async () => {
    const rows = [
      ['東京タワー 📦', '👩‍👩‍👧 family', 'Zoë Ünal'],
      ['x'.repeat(60), 'é', ''],
    ];
    for (const ascii of [false, true]) {
      const lines = (await renderTable(['name', 'who', 'c'], rows, 40, { ascii })).text.trimEnd().split('\n');
      const width = displayWidth(lines[0] as string);
      expect(width).toBeLessThanOrEqual(40);
      for (const line of lines) expect(displayWidth(line), line).toBe(width);
      expect(lines[4]).toContain('…');
      expect(lines[0]).toMatch(ascii ? /^\+-+\+/ : /^┌─+┬/);
      if (ascii) expect(lines.join('\n')).not.toMatch(/[─│┌]/);
    }
    // The header's styling (bold, zero columns wide) is not counted as width.
    expect((await renderTable(['ab'], [['1']], 80, { bold: (s) => `\x1b[1m${s}\x1b[22m` })).text).toBe(
      '┌────┐\n│ \x1b[1mab\x1b[22m │\n├────┤\n│ 1  │\n└────┘\n',
    );
  });

  test('CSV cells: the OWASP formula prefixes, not numbers, and --csv-raw', () => {
    for (const s of ['=1+1', '+1', '-1', '@A1', '\tx', '\rx']) expect(csvCell(s)).toBe(`'${s}`);
    expect(csvCell(-5)).toBe('-5');
    expect(csvCell('a=b')).toBe('a=b');
    expect(csvCell('=1+1', true)).toBe('=1+1');
  });

  test('prose wraps at word boundaries; examples and their continuations stay whole', () => {
    const text = `${'word '.repeat(30).trim()}\n\nExamples:\n  $ opcli ${'--flag value '.repeat(10).trim()} \\\n      --more ${'x '.repeat(40).trim()}`;
    const out = wrapProse(text, 40).split('\n');
    for (const line of out.slice(0, 4)) expect(line.length).toBeLessThanOrEqual(40);
    expect(out).toContain(`  $ opcli ${'--flag value '.repeat(10).trim()} \\`);
    expect(out.at(-1)).toBe(`      --more ${'x '.repeat(40).trim()}`);
    expect(wrapText('a-very-long-unbreakable-word', 10)).toBe('a-very-long-unbreakable-word');
    expect(
      wrapText('a-very-long-unbreakable-word', 10, { hard: true })
        .split('\n')
        .every((l) => l.length <= 10),
    ).toBe(true);
  });
});
