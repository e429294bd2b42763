import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { register as registerHistory } from './history.js';
import { register as registerIssue } from './issue.js';
import { register as registerRepair } from './repair.js';
import { register as registerSetup } from './setup.js';

/** `opcli giftcard`: configure the provider, issue store credit exactly once, read the ledger. */
export function register(program: Command, deps: Deps): void {
  const group = program
    .command('giftcard')
    .description('Issue store credit through the gift card provider chain, exactly once, with a ledger')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli giftcard setup --check
  $ opcli giftcard issue --claim C-1001 --order 1001 --amount 25.00 --email alice@example.com \\
      --name "Alice Example" --customer-id cust_1001
  $ opcli giftcard history --verify`,
    );
  registerSetup(group, deps);
  registerIssue(group, deps);
  registerHistory(group, deps);
  registerRepair(group, deps);
}
