import { type Command, Option } from 'commander';
import type { Deps } from '../../core/deps.js';
import { UsageError } from '../../core/errors.js';
import { completionScript } from './scripts.js';
import { buildTree } from './tree.js';

/** Registers `opcli completion`. */
export function register(program: Command, deps: Deps): void {
  program
    .command('completion')
    .description('Print a shell completion script')
    .argument('[shell]', 'bash, zsh, fish or powershell')
    .addOption(new Option('--list-profiles', 'print the profile names, one a line (the scripts call this)').hideHelp())
    .addHelpText(
      'after',
      `
The scripts complete commands, verbs and flags; the values of flags that take one of a list
(--issue-type, --resolution, --currency, --status, --format, ...); profile names (after -p/--profile
and for profiles use/remove, read when you press TAB); file names after flags that take a file
(--from, --data, --out, --journal, --from-file); and setting keys (config get/set/unset).

Examples:
  $ opcli completion bash > ~/.local/share/bash-completion/completions/opcli
  $ opcli completion zsh > "\${fpath[1]}/_opcli"
  $ opcli completion fish > ~/.config/fish/completions/opcli.fish
  $ opcli completion powershell | Out-String | Invoke-Expression   # a line of $PROFILE`,
    )
    .action(async (shell: string | undefined, flags: { listProfiles?: boolean }) => run({ shell, listProfiles: !!flags.listProfiles }, deps));
}

/** Prints the script for one shell, or the profile names. */
export async function run(opts: { shell?: string; listProfiles?: boolean }, deps: Deps): Promise<void> {
  if (opts.listProfiles) {
    const names = (await deps.settings()).listProfiles();
    if (names.length) deps.out(`${names.join('\n')}\n`);
    return;
  }
  if (!opts.shell) throw new UsageError('Name the shell: bash, zsh, fish or powershell.', 'For example: opcli completion bash');
  const script = completionScript(opts.shell, await buildTree(deps));
  if (script === undefined) throw new UsageError(`Unknown shell "${opts.shell}".`, 'Use one of: bash, zsh, fish, powershell.');
  deps.out(script);
}
