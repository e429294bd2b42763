import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { register as registerVerify } from './verify.js';

/** `opcli session`: embedded-app session tokens. */
export function register(program: Command, deps: Deps): void {
  const group = program
    .command('session')
    .description('Verify embedded-app session tokens')
    .addHelpText(
      'after',
      `
Examples:
  $ printf %s "$SESSION_TOKEN" | opcli session verify --stdin`,
    );
  registerVerify(group, deps);
}
