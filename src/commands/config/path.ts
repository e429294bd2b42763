import type { Command } from 'commander';
import type { Deps } from '../../core/deps.js';

/** Registers `config path`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('path')
    .description('Print the config folder and its files (settings, credentials)')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExamples:\n  $ opcli config path\n  $ OPCLI_CONFIG_DIR=/tmp/opcli opcli config path')
    .action(async (flags: { json?: boolean }) => run({ json: !!flags.json }, deps));
}

/** Prints where opcli keeps its files. */
export async function run(opts: { json: boolean }, deps: Deps): Promise<void> {
  const dir = deps.configDir();
  const files = { dir, settings: `${dir}/settings.json`, credentials: `${dir}/credentials.json` };
  if (opts.json) deps.out(`${JSON.stringify(files, null, 2)}\n`);
  else deps.out(`${dir}\n`);
}
