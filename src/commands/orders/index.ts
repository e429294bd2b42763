import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { register as registerList } from './list.js';
import { register as registerUpdate } from './update.js';

/** `opcli orders`: list and update the store's orders. */
export function register(program: Command, deps: Deps): void {
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
  registerList(group, deps);
  registerUpdate(group, deps);
}
