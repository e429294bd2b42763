/**
 * ARCHITECTURE.md stays a map of the code as it is: every file it names exists, every command group
 * has the folder it says a command lives in, and README and CONTRIBUTING link it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GROUPS } from '../../src/cli/program.js';
import { ROOT } from '../helpers.js';

const page = () => readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');

/** Every source file of the repository, as a path from its root. */
function sourceFiles(): string[] {
  const out: string[] = [];
  for (const top of ['src', 'bench', 'bin', 'test']) {
    for (const entry of readdirSync(join(ROOT, top), { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) out.push(join(entry.parentPath, entry.name).slice(ROOT.length + 1));
    }
  }
  return out;
}

describe('ARCHITECTURE.md', () => {
  it('names only files that exist (a path from the root, or one under src/ as the flows write them)', () => {
    const files = sourceFiles();
    const named = [...page().matchAll(/(?<![\w/.-])((?:[\w-]+\/)*[\w-]+\.(?:ts|mjs|cjs))\b/g)].map((m) => m[1] as string);
    expect(named.length).toBeGreaterThan(30);
    const missing = named.filter((name) => !files.some((f) => f === name || f.endsWith(`/${name}`)));
    expect(missing).toEqual([]);
  });

  it('says where every command group lives, and the folder is there', () => {
    expect(page()).toContain('`src/commands/<group>/<verb>.ts`');
    for (const group of GROUPS) expect(existsSync(join(ROOT, 'src', 'commands', group.name, 'index.ts')), group.name).toBe(true);
  });

  it('is linked from the README and CONTRIBUTING', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('](ARCHITECTURE.md)');
    expect(readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8')).toContain('](ARCHITECTURE.md)');
  });
});
