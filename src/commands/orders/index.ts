import type { Command } from 'commander';
import type { Deps } from '../../deps.js';

/** `opcli orders`: placeholder until its issue lands. */
export function register(program: Command, _deps: Deps): void {
  program.command('orders').description('(not built yet)');
}
