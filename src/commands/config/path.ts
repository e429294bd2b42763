import { posix, win32 } from 'node:path';
import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';

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
  // In the platform's separators (Windows takes both; OPCLI_CONFIG_DIR may mix them), as a person pastes them there.
  const { join, normalize } = deps.platform === 'win32' ? win32 : posix;
  const dir = deps.platform === 'win32' ? normalize(deps.configDir()) : deps.configDir();
  const files = { dir, settings: join(dir, 'settings.json'), credentials: join(dir, 'credentials.json') };
  if (opts.json) deps.out(`${JSON.stringify(files, null, 2)}\n`);
  else deps.out(`${dir}\n`);
}
