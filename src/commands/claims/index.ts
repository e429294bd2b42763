import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';

/** Each verb's module, loaded only when the verb is built: `claims template` does not load the batch pipeline of `claims file`. */
const VERBS: Record<string, () => Promise<{ register(group: Command, deps: Deps): void }>> = {
  file: () => import('./file.js'),
  template: () => import('./template.js'),
  history: () => import('./history.js'),
  repair: () => import('./repair.js'),
};

/** `opcli claims`: file warranty claims, one at a time or in resumable batches (only `verb` when it names one: a one-off builds no other). */
export async function register(program: Command, deps: Deps, verb?: string): Promise<void> {
  const group = program
    .command('claims')
    .description('File warranty claims, one or in batches from CSV/JSONL')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli claims file --data claim.json
  $ opcli claims template --csv > claims.csv
  $ opcli claims file --from claims.csv --concurrency 8
  $ opcli claims history --since 2026-11-01`,
    );
  for (const [name, load] of Object.entries(VERBS)) if (verb === undefined || !(verb in VERBS) || verb === name) (await load()).register(group, deps);
}
