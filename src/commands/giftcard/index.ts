import type { Command } from 'commander';
import type { Deps } from '../../deps.js';

/** `opcli giftcard`: placeholder until its issue lands. */
export function register(program: Command, _deps: Deps): void {
  program.command('giftcard').description('(not built yet)');
}
