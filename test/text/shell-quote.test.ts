import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shellQuote } from '../../src/text/shell-quote.js';

/**
 * What bash makes of each list of arguments quoted and pasted on a line of its own (one bash run for
 * them all): the words it passes on, as a count and then the words.
 */
function bashWords(lists: string[][]): string[][] {
  const script = lists.map((args) => `set -- ${args.map(shellQuote).join(' ')}\nprintf '%s\\0' "$#" "$@"`).join('\n');
  const r = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  const out = r.stdout.split('\0');
  const words: string[][] = [];
  for (let i = 0; i < out.length - 1; ) {
    const n = Number(out[i]);
    words.push(out.slice(i + 1, i + 1 + n));
    i += n + 1;
  }
  return words;
}

describe('shellQuote', () => {
  it('gives bash back every argument whole, whatever it holds', () => {
    const samples = fc.sample(
      fc.array(
        fc.string({ unit: 'binary' }).map((s) => s.replace(/\0/g, '')),
        { minLength: 1, maxLength: 4 },
      ),
      200,
    );
    expect(bashWords(samples)).toEqual(samples);
  });

  it('leaves plain words as they are and quotes what a shell would eat', () => {
    expect(shellQuote('sourceOrderId,total')).toBe('sourceOrderId,total');
    expect(shellQuote('b2E6NTA=')).toBe('b2E6NTA=');
    expect(shellQuote('#1007')).toBe(`'#1007'`);
    expect(shellQuote('')).toBe(`''`);
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote('~/x')).toBe(`'~/x'`);
  });
});
