/**
 * Wrong files and environments, each wrong in one way: `--data` bodies of every command that takes
 * one, batch rows for `claims file --from`, damaged settings and credentials files, and every
 * OPCLI_* variable the source reads. Same promise as commands.test.ts; same seed handling.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fc, test } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect, test as plainTest } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { batchGenerators, configGenerators, dataGenerators, envGenerators, envVariables, type FileGenerator } from './files.js';
import { check, makeDirs } from './harness.js';
import { PER_GENERATOR, SEED } from './seed.js';
import { commandTree } from './tree.js';

const tree = await commandTree();
const withData = tree.filter((c) => c.flags.some((f) => f.long === '--data')).map((c) => c.path.join(' '));
const families: [string, FileGenerator[]][] = [
  ['--data bodies', dataGenerators(withData)],
  ['claims file --from rows', batchGenerators()],
  ['settings and credentials files', configGenerators()],
  ['OPCLI_* variables', envGenerators()],
];
const tally = { cases: 0, failed: 0 };
let sandbox: Sandbox;
let root: string;
let serial = 0;
let template: { config: string; inputs: string };

beforeAll(async () => {
  console.log(`fuzz seed ${SEED} (replay: FUZZ_SEED=${SEED} npx vitest run test/fuzz)`);
  sandbox = await startSandbox({ orders: 5, seed: 17 });
  root = mkdtempSync(join(tmpdir(), 'opcli-fuzz-files-'));
  template = await makeDirs(sandbox, root, 'template');
});
afterAll(async () => {
  console.log(`fuzz (files): ${tally.cases} generated cases ran, ${tally.failed} broke the promise (seed ${SEED})`);
  await sandbox?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Runs one drawn case in folders of its own (a damaged file must not leak into the next case). */
async function runCase(gen: FileGenerator, draw: unknown): Promise<string[]> {
  const dirs = { config: join(root, `case-${serial}`, 'config'), inputs: join(root, `case-${serial}`, 'inputs') };
  serial++;
  cpSync(template.config, dirs.config, { recursive: true, verbatimSymlinks: true });
  cpSync(template.inputs, dirs.inputs, { recursive: true, verbatimSymlinks: true });
  const c = gen.build({ sandbox, inputs: dirs.inputs }, draw);
  const problems = await check(c, sandbox, dirs);
  tally.cases++;
  if (problems.length) tally.failed++;
  return problems.length ? [`${c.command} ${c.target} (${c.cls}): ${JSON.stringify(c.argv)}`, ...problems] : [];
}

plainTest('the variables and commands come from the source and the tree', () => {
  expect(withData).toEqual(expect.arrayContaining(['orders update', 'variants create', 'claims file', 'api']));
  expect(envVariables()).toEqual(expect.arrayContaining(['OPCLI_BASE_URL', 'OPCLI_PROFILE', 'OPCLI_TOKEN']));
});

describe.each(families.filter(([, gens]) => gens.length > 0))('%s', (_name, gens) => {
  const draw = fc.oneof(...gens.map((g, index) => g.arb.map((value) => ({ target: g.target, cls: g.cls, value, index }))));
  test.prop([draw], { seed: SEED, numRuns: Math.max(10, gens.length * PER_GENERATOR) })(
    'refuses each with exit 2 and an error naming the file, row or variable; sends nothing; changes no file',
    async ({ value, index }) => {
      const gen = gens[index];
      if (!gen) throw new Error('no generator');
      expect(await runCase(gen, value)).toEqual([]);
    },
  );
});

if (process.env.FUZZ_SURVEY) {
  plainTest('survey', { timeout: 600_000 }, async () => {
    const lines: string[] = [];
    for (const [, gens] of families) {
      for (const gen of gens) {
        for (const value of new Set(fc.sample(gen.arb, { seed: SEED, numRuns: 2 }))) {
          const problems = await runCase(gen, value);
          if (problems.length) lines.push(`${gen.command} | ${gen.target} | ${gen.cls} | ${problems.join(' ; ')}`);
        }
      }
    }
    console.log(`SURVEY ${lines.length} failing\n${lines.join('\n')}`);
  });
}
