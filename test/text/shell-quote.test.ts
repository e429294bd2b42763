/** shellQuote: any value, pasted into a real POSIX shell (sh, and bash, zsh where installed), arrives as one intact argument. */
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { shellQuote } from '../../src/text/safe.js';

const shells = ['sh', 'bash', 'zsh'].filter((s) => spawnSync(s, ['-c', 'true']).status === 0);

/** The arguments `shell` receives for the quoted words, NUL-terminated (no shell word holds a NUL). */
function received(shell: string, values: string[]): string[] {
  const r = spawnSync(shell, ['-c', `printf '%s\\0' ${values.map(shellQuote).join(' ')}`], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.split('\0').slice(0, -1);
}

// Characters a shell gives meaning to, mixed with plain ones; NUL cannot be an argument at all.
const nasty = fc.string({ unit: fc.constantFrom(...`#'"\\$\`!*?[]{}()<>|&;~= \t\n%@:,./-_+^aZ09é€`.split('')), maxLength: 12 });

describe('shellQuote', () => {
  test('plain words stay as typed; the rest are single-quoted', () => {
    expect(shellQuote('C-1001')).toBe('C-1001');
    expect(shellQuote('alice@example.com')).toBe('alice@example.com');
    expect(shellQuote('#1007')).toBe("'#1007'");
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote('')).toBe("''");
    expect(shellQuote('=x')).toBe("'=x'");
  });

  test.each(shells)('every value arrives intact in %s', (shell) => {
    fc.assert(
      fc.property(fc.array(nasty, { minLength: 1, maxLength: 4 }), (values) => {
        expect(received(shell, values)).toEqual(values);
      }),
      { numRuns: 60 },
    );
  });
});
