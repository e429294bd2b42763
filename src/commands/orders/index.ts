import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';

/** Each verb's module, loaded only when the verb is built: `orders list` does not load what `orders update` needs (its flags from the Order schema, --data). */
const VERBS: Record<string, () => Promise<{ register(group: Command, deps: Deps): void }>> = {
  list: () => import('./list.js'),
  update: () => import('./update.js'),
};

/** `opcli orders`: list and update the store's orders (only `verb` when it names one: a one-off builds no other). */
export async function register(program: Command, deps: Deps, verb?: string): Promise<void> {
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
  for (const [name, load] of Object.entries(VERBS)) if (verb === undefined || !(verb in VERBS) || verb === name) (await load()).register(group, deps);
}
