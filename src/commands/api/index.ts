import type { Command } from 'commander';
import type { Deps } from '../../deps.js';

/** `opcli api`: placeholder until its issue lands. */
export function register(program: Command, _deps: Deps): void {
  program.command('api').description('(not built yet)');
}
