import type { Command } from 'commander';
import type { Deps } from '../../deps.js';

/** `opcli claims`: placeholder until its issue lands. */
export function register(program: Command, _deps: Deps): void {
  program.command('claims').description('(not built yet)');
}
