/** The tour's plumbing: streams that keep and pass on a step's output, a browser's redirects, shell quoting. */
import { Writable } from 'node:stream';
import { displayWidth } from '../../text/width.js';
import { wrapText } from '../../text/wrap.js';
import { loadUndici } from '../../http/undici.js';

/**
 * Tees a stream: everything written is kept and also passed on; the terminal's width goes with it,
 * and a line wider than the terminal (a long URL, a JSON line) is broken to fit, as the tour is
 * meant to be read on the screen it runs on.
 */
export function tee(target: Writable, sink: (text: string) => void, width: number): Writable {
  const stream = new Writable({
    write(chunk, _enc, done) {
      const text = chunk.toString();
      sink(text);
      // Passed on at once, not when the target is done: the tour's own narration goes straight to
      // the same stream, and a step's last lines must not arrive after it.
      target.write(fitLines(text, width));
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

/** Breaks lines wider than `width` (progress lines, redrawn with \r, are left alone). */
function fitLines(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => (line.includes('\r') || displayWidth(line) <= width ? line : wrapText(line, width, { hard: true })))
    .join('\n');
}

/** Quotes an argument for the echoed command line, as a POSIX shell reads it. */
export function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
