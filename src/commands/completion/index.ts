import { Argument, type Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { UsageError } from '../../core/errors.js';
import { completesWith } from './hints.js';
import { completionShim, SHELLS } from './shims.js';

/** Registers `opcli completion`. (`opcli __complete`, which the shims call, is answered by complete.ts.) */
export function register(program: Command, deps: Deps): void {
  program
    .command('completion')
    .description('Print a shell completion script')
    .addArgument(completesWith(new Argument('[shell]', 'bash, zsh, fish or powershell'), SHELLS))
    .addHelpText(
      'after',
      `
The script asks opcli what to offer each time you press TAB, so it stays right after an upgrade:
commands, verbs and flags; the values of flags that take one of a list (--issue-type, --resolution,
--currency, --status, --format, ...); profile names (after -p/--profile and for profiles use/remove);
file names after flags that take a file (--from, --data, --out, --journal, --from-file); and setting
keys (config get/set/unset).

Examples:
  $ opcli completion bash > ~/.local/share/bash-completion/completions/opcli
  $ opcli completion zsh > "\${fpath[1]}/_opcli"
  $ opcli completion fish > ~/.config/fish/completions/opcli.fish
  $ opcli completion powershell | Out-String | Invoke-Expression   # a line of $PROFILE`,
    )
    .action(async (shell: string | undefined) => run({ shell }, deps));
}

/** Prints the script for one shell. */
export async function run(opts: { shell?: string }, deps: Deps): Promise<void> {
  if (!opts.shell) throw new UsageError('Name the shell: bash, zsh, fish or powershell.', 'For example: opcli completion bash');
  const script = completionShim(opts.shell);
  if (script === undefined) throw new UsageError(`Unknown shell "${opts.shell}".`, 'Use one of: bash, zsh, fish, powershell.');
  deps.out(script);
}
