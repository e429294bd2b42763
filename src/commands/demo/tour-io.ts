/** The tour's plumbing: streams that keep and pass on a step's output, a browser's redirects. */
import { Writable } from 'node:stream';
import { displayWidth } from '../../text/width.js';
import { wrapText } from '../../text/wrap.js';
import { loadUndici } from '../../http/undici.js';

/**
 * Tees a stream: everything written is kept and also passed on; the terminal's width goes with it,
 * and on a terminal (`width` given) a line wider than it (a long URL, a JSON line) is broken to fit,
 * as the tour is meant to be read on the screen it runs on. A pipe or a file (no `width`) gets the
 * output exactly as written: data is never broken mid-value.
 */
export function tee(target: Writable, sink: (text: string) => void, width: number | undefined): Writable {
  const stream = new Writable({
    write(chunk, _enc, done) {
      const text = chunk.toString();
      sink(text);
      // Passed on at once, not when the target is done: the tour's own narration goes straight to
      // the same stream, and a step's last lines must not arrive after it.
      target.write(width === undefined ? text : fitLines(text, width));
      done();
    },
  });
  return Object.assign(stream, { columns: (target as { columns?: number }).columns });
}

/** GETs a URL and follows redirects by hand (to loopback only), as a browser would. */
export async function followRedirects(start: string): Promise<void> {
  const { request } = await loadUndici();
  let url = start;
  for (let hop = 0; hop < 5; hop++) {
    const res = await request(url, { method: 'GET' });
    await res.body.text();
    const location = res.headers.location;
    if (res.statusCode < 300 || res.statusCode >= 400 || typeof location !== 'string') return;
    url = new URL(location, url).toString();
  }
}

/**
 * Breaks lines wider than `width`. Progress lines (redrawn with \r) and tab-separated data are left
 * alone: the terminal folds them without adding a line break to what is copied.
 */
function fitLines(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => (line.includes('\r') || line.includes('\t') || displayWidth(line) <= width ? line : packLine(line, width)))
    .join('\n');
}

/** A long line broken after a comma or a space where it can (a CSV header, a JSON line), mid-word only for a word wider than the screen. */
function packLine(line: string, width: number): string {
  const lines: string[] = [];
  let current = '';
  for (const piece of line.split(/(?<=[, ])/)) {
    if (current !== '' && displayWidth(current + piece) > width) {
      lines.push(current.trimEnd());
      current = '';
    }
    current += piece;
    if (displayWidth(current) > width) {
      const parts = wrapText(current, width, { hard: true }).split('\n');
      current = parts.pop() ?? '';
      lines.push(...parts);
    }
  }
  if (current !== '') lines.push(current);
  return lines.join('\n');
}
