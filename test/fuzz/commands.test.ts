/**
 * Every command of the tree, fed command lines wrong in one way each (see cases.ts), must refuse
 * them with exit 2 and an `Error:` line naming the culprit, send nothing and change no file.
 * Seeded: the seed is printed; `FUZZ_SEED=<n> npx vitest run test/fuzz` replays a run.
 * `FUZZ_RUNS_PER_GENERATOR` (default 2) scales how many cases each generator draws.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fc, test } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect, test as plainTest } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { runOpcli } from '../helpers.js';
import { BASELINES } from './baselines.js';
import { generatorsFor } from './cases.js';
import { check, makeDirs } from './harness.js';
import { PER_GENERATOR, SEED } from './seed.js';
import { commandTree } from './tree.js';

const tree = await commandTree();
const tally = { cases: 0, failed: 0, byCommand: new Map<string, number>() };

let sandbox: Sandbox;
let root: string;

beforeAll(async () => {
  console.log(`fuzz seed ${SEED} (replay: FUZZ_SEED=${SEED} npx vitest run test/fuzz)`);
  sandbox = await startSandbox({ orders: 5, seed: 17 });
  root = mkdtempSync(join(tmpdir(), 'opcli-fuzz-'));
});
afterAll(async () => {
  console.log(`fuzz: ${tally.cases} generated cases ran on ${tally.byCommand.size} commands, ${tally.failed} broke the promise (seed ${SEED})`);
  await sandbox?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Fresh folders for one command's cases. */
const freshDirs = (name: string) => makeDirs(sandbox, root, name);

plainTest('the tree has the commands the suite knows, and each one is fuzzed', () => {
  const names = tree.map((c) => c.path.join(' '));
  expect(names).toContain('variants create');
  expect(names).toContain('claims file');
  const unbased = names.filter((n) => !BASELINES[n]);
  if (unbased.length) console.warn(`fuzz: no baseline for ${unbased.join(', ')}: fuzzed with placeholders; add one to test/fuzz/baselines.ts`);
  for (const c of tree) expect(generatorsFor(c).length, c.path.join(' ')).toBeGreaterThan(0);
});

describe('every baseline is valid, so a case is wrong only where it was spoiled', () => {
  for (const info of tree) {
    const command = info.path.join(' ');
    const base = BASELINES[command];
    if (!base?.runs) continue;
    plainTest(command, async () => {
      const dirs = await freshDirs(`base-${command}`);
      const ctx = { sandbox, inputs: dirs.inputs };
      const r = await runOpcli([...info.path, ...base.args(ctx), ...base.flags(ctx)], {
        env: { OPCLI_CONFIG_DIR: dirs.config, CI: 'true' },
        cwd: dirs.inputs,
        openBrowser: async () => {},
      });
      expect(r.code, r.stderr).toBe(0);
    });
  }
});

describe.each(tree.map((info) => [info.path.join(' '), info] as const))('%s', (command, info) => {
  const gens = generatorsFor(info);
  const draw = fc.oneof(...gens.map((g, index) => g.arb.map((value) => ({ target: g.target, cls: g.cls, value, index }))));
  let dirs: { config: string; inputs: string };
  beforeAll(async () => {
    dirs = await freshDirs(command);
  });
  test.prop([draw], { seed: SEED, numRuns: Math.max(20, gens.length * PER_GENERATOR) })(
    'refuses each wrong input with exit 2 and a named error, sends nothing, changes no file',
    async ({ value, index }) => {
      const gen = gens[index];
      if (!gen) throw new Error('no generator');
      const c = gen.build({ sandbox, inputs: dirs.inputs }, value);
      const problems = await check(c, sandbox, dirs);
      tally.cases++;
      tally.byCommand.set(command, (tally.byCommand.get(command) ?? 0) + 1);
      if (problems.length) tally.failed++;
      expect(problems, `${c.command} ${c.target} (${c.cls}): ${JSON.stringify(c.argv)}`).toEqual([]);
    },
  );
});

plainTest('KNOWN_OPEN entries that no longer fail are named, so the list can shrink', { timeout: 120_000 }, async () => {
  const dirs = await freshDirs('known-open');
  const fixed = new Set<string>();
  const stillOpen = new Set<string>();
  for (const info of tree) {
    for (const gen of generatorsFor(info, true)) {
      const [value] = fc.sample(gen.arb, { seed: SEED, numRuns: 1 });
      const c = gen.build({ sandbox, inputs: dirs.inputs }, value as string);
      const key = `${c.command} ${c.target} ${c.cls}`;
      if ((await check(c, sandbox, dirs)).length === 0) fixed.add(key);
      else stillOpen.add(key);
    }
  }
  if (fixed.size)
    console.warn(
      `fuzz: KNOWN_OPEN cases that now pass (remove their entries from test/fuzz/known-open.ts once all their cases pass):\n  ${[...fixed].join('\n  ')}`,
    );
  console.log(`fuzz: ${stillOpen.size} KNOWN_OPEN command-line cases still fail`);
  if (process.env.FUZZ_SURVEY) console.log(`STILL\n${[...stillOpen].join('\n')}`);
  expect(fixed.size + stillOpen.size).toBeGreaterThanOrEqual(0);
});

/**
 * FUZZ_SURVEY=1: every generator of every command once, failures listed rather than stopped at,
 * to see the whole set of findings (how KNOWN_OPEN and the findings file were written).
 */
if (process.env.FUZZ_SURVEY) {
  plainTest('survey', { timeout: 600_000 }, async () => {
    const lines: string[] = [];
    for (const info of tree) {
      const command = info.path.join(' ');
      const dirs = await freshDirs(`survey-${command}`);
      for (const gen of generatorsFor(info)) {
        for (const value of new Set(fc.sample(gen.arb, { seed: SEED, numRuns: 4 }))) {
          const c = gen.build({ sandbox, inputs: dirs.inputs }, value);
          const problems = await check(c, sandbox, dirs);
          tally.cases++;
          if (problems.length) lines.push(`${command} | ${c.target} | ${c.cls} | ${JSON.stringify(value)} | ${problems.join(' ; ')}`);
        }
      }
    }
    console.log(`SURVEY ${lines.length} failing\n${lines.join('\n')}`);
  });
}
