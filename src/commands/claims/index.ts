import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { register as registerFile } from './file.js';
import { register as registerHistory } from './history.js';
import { register as registerRepair } from './repair.js';
import { register as registerTemplate } from './template.js';

/** `opcli claims`: file warranty claims, one at a time or in resumable batches. */
export function register(program: Command, deps: Deps): void {
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
  registerFile(group, deps);
  registerTemplate(group, deps);
  registerHistory(group, deps);
  registerRepair(group, deps);
}
