import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { register as registerList } from './list.js';
import { register as registerRemove } from './remove.js';
import { register as registerUse } from './use.js';

/** `opcli profiles`: named sets of settings and credentials. */
export function register(program: Command, deps: Deps): void {
  const group = program
    .command('profiles')
    .description('List, select and remove profiles (each has its own settings and login)')
    .addHelpText('after', '\nExamples:\n  $ opcli profiles list\n  $ opcli profiles use staging\n  $ opcli --profile staging auth status');
  registerList(group, deps);
  registerUse(group, deps);
  registerRemove(group, deps);
}
