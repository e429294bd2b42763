import type { Command } from 'commander';
import type { Deps } from '../../deps.js';

/** `opcli variants`: placeholder until its issue lands. */
export function register(program: Command, _deps: Deps): void {
  program.command('variants').description('(not built yet)');
}
