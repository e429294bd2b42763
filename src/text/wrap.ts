/** Text that fits the terminal: wrapped at word boundaries by wrap-ansi, width measured by string-width. */
import wrapAnsi from 'wrap-ansi';
import stringWidth from 'string-width';

/**
 * Wraps each line of `text` to `width` columns at word boundaries; continuation lines keep the
 * line's indent. `hard` also breaks a word wider than the line (a URL), so nothing overflows.
 */
export function wrapText(text: string, width: number, options: { hard?: boolean } = {}): string {
  return text
    .split('\n')
    .map((line) => wrapLine(line, width, options.hard))
    .join('\n');
}

function wrapLine(line: string, width: number, hard = false): string {
  if (displayWidth(line) <= width) return line;
  const indent = /^\s*/.exec(line)?.[0] ?? '';
  // A hanging indent for option-like lines ("  --flag <v>   description"): continue under the description.
  const hang = /^(\s+\S.*?\s{2,})\S/.exec(line)?.[1];
  const head = hang && displayWidth(hang) <= width - 20 ? hang : indent;
  const pad = ' '.repeat(displayWidth(head));
  const wrapped = wrapAnsi(line.slice(head.length), Math.max(10, width - pad.length), { hard, trim: true, wordWrap: true }).split('\n');
  return wrapped.map((l, i) => (i === 0 ? head : pad) + l).join('\n');
}

/** Whether a help line is an example or a command to copy, kept whole. */
function isExample(line: string): boolean {
  return /^\s+[$#>]\s/.test(line) || /^\s+opcli\s/.test(line);
}

/**
 * Help and other prose: paragraphs that were broken by hand at some width are joined and wrapped
 * to `width`; examples (`  $ opcli ...`) are left whole so they can be copied.
 */
export function wrapProse(text: string, width: number): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length) out.push(wrapLine(para.join(' '), width));
    para = [];
  };
  let continued = false;
  for (const line of lines) {
    // An example's continuation lines (after a trailing backslash) are part of the example.
    const example: boolean = isExample(line) || continued;
    continued = example && /\\\s*$/.test(line);
    if (example) {
      flush();
      out.push(line);
      continue;
    }
    const prose = line.trim() !== '' && !/^\s/.test(line);
    // A prose line continues the paragraph when the one before it ran long: it was broken by hand.
    if (prose && para.length && displayWidth(para.at(-1) as string) >= 60 && !/:$/.test(para.at(-1) as string)) {
      para.push(line);
      continue;
    }
    flush();
    if (prose) para.push(line);
    else out.push(line.trim() === '' ? line : wrapLine(line, width));
  }
  flush();
  return out.join('\n');
}

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
