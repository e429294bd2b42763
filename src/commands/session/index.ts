import type { Command } from 'commander';
import type { Deps } from '../../deps.js';

/** `opcli session`: placeholder until its issue lands. */
export function register(program: Command, _deps: Deps): void {
  program.command('session').description('(not built yet)');
}
