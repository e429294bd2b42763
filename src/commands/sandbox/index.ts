import type { Command } from 'commander';
import type { Deps } from '../../deps.js';

/** `opcli sandbox`: placeholder until its issue lands. */
export function register(program: Command, _deps: Deps): void {
  program.command('sandbox').description('(not built yet)');
}
