import type { Command } from 'commander';
import type { Deps } from '../../deps.js';

/** `opcli auth`: placeholder until its issue lands. */
export function register(program: Command, _deps: Deps): void {
  program.command('auth').description('(not built yet)');
}
