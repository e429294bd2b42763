import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { register as registerGet } from './get.js';
import { register as registerList } from './list.js';
import { register as registerPath } from './path.js';
import { register as registerSet } from './set.js';
import { register as registerUnset } from './unset.js';

/** `opcli config`: read and write the active profile's settings. */
export function register(program: Command, deps: Deps): void {
  const group = program
    .command('config')
    .description('Read and write profile settings (see `opcli config list` for the keys)')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli config set base-url https://api.example.com
  $ opcli config set client-id svc_app_123
  $ printf '%s' "$SECRET" | opcli config set client-secret --stdin
  $ opcli --profile staging config list`,
    );
  registerSet(group, deps);
  registerGet(group, deps);
  registerUnset(group, deps);
  registerList(group, deps);
  registerPath(group, deps);
}
