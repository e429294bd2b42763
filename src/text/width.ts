/**
 * Terminal width of text, by grapheme: wide (CJK) characters and emoji take two columns, combining
 * marks none. Measured with string-width, which follows Unicode's East Asian Width and emoji data.
 */
import stringWidth from 'string-width';

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Columns `text` takes on a terminal. */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/** `text` cut to at most `width` columns, ending in `…` when cut; never splits a grapheme. */
export function truncate(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  let out = '';
  let used = 0;
  for (const { segment } of segmenter.segment(text)) {
    const w = stringWidth(segment);
    if (used + w > width - 1) break;
    out += segment;
    used += w;
  }
  return `${out}…`;
}
