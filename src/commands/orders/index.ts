import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { register as registerList } from './list.js';
import { register as registerUpdate } from './update.js';

const VERBS: Record<string, (group: Command, deps: Deps) => void> = { list: registerList, update: registerUpdate };

/** `opcli orders`: list and update the store's orders (only `verb` when it names one: a one-off builds no other). */
export function register(program: Command, deps: Deps, verb?: string): void {
  const group = program
    .command('orders')
    .description('List and update orders')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli orders list --size 10
  $ opcli orders list --all --jsonl > orders.jsonl
  $ opcli orders update ord_000001 --source-order-number '#1001' --currency USD --total 42.50`,
    );
  for (const [name, registerVerb] of Object.entries(VERBS)) if (verb === undefined || !(verb in VERBS) || verb === name) registerVerb(group, deps);
}
