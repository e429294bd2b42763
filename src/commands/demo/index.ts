import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import type { RunCli } from './tour.js';
import { runTour } from './run.js';

/** The demo group as cli.ts loads it, with the `runCli` each step of the tour runs a command through. */
export function group(runCli: RunCli): { register(program: Command, deps: Deps): void } {
  return { register: (program, deps) => register(program, deps, runCli) };
}

/** Registers `opcli demo`, the guided tour. */
export function register(program: Command, deps: Deps, runCli: RunCli): void {
  program
    .command('demo')
    .description('A guided tour: starts a sandbox, uses a temporary config folder, and runs each command end to end')
    .option('--keep', 'keep the temporary config folder and print its path')
    .addHelpText('after', '\nExamples:\n  $ npm start            # the same as: opcli demo\n  $ opcli demo --keep')
    .action(async (flags: { keep?: boolean }) => {
      await runTour({ keep: !!flags.keep, runCli }, deps);
    });
}
