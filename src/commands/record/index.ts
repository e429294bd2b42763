import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { register as registerCheck } from './check.js';
import { register as registerSetup } from './setup.js';

/** `opcli record`: the team's record of business actions in PostgreSQL (docs/guides/team-record.md). */
export function register(program: Command, deps: Deps): void {
  const group = program
    .command('record')
    .description("Set up a team's record of claims and credits in PostgreSQL")
    .addHelpText(
      'after',
      `
Examples:
  $ PGPASSWORD=… opcli record setup --url postgresql://admin@db.example.com/opcli --member alice --member bob
  $ opcli config set record-url postgresql://alice@db.example.com/opcli
  $ opcli record check

Guide: docs/guides/team-record.md`,
    );
  registerSetup(group, deps);
  registerCheck(group, deps);
}
