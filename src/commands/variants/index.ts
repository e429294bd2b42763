import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { register as registerCreate } from './create.js';

/** `opcli variants`: create product variants. */
export function register(program: Command, deps: Deps): void {
  const group = program
    .command('variants')
    .description('Create product variants')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli variants create prod_1 --status ACTIVE --name "Mug, blue" --price 12.5 --inventory-quantity 40 --product-type SIMPLE`,
    );
  registerCreate(group, deps);
}
