import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { UsageError } from '../../errors.js';

/** Registers `opcli completion`. */
export function register(program: Command, deps: Deps): void {
  program
    .command('completion')
    .description('Print a shell completion script')
    .argument('<shell>', 'bash, zsh or fish')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli completion bash > ~/.local/share/bash-completion/completions/opcli
  $ opcli completion zsh > "\${fpath[1]}/_opcli"
  $ opcli completion fish > ~/.config/fish/completions/opcli.fish`,
    )
    .action(async (shell: string) => run({ shell }, deps));
}

/** Commands and their verbs, for completion. Kept by hand: loading every group to list them would slow start-up. */
export const COMMAND_TREE: Record<string, string[]> = {
  auth: ['login', 'status', 'token', 'refresh', 'logout'],
  orders: ['list', 'update'],
  variants: ['create'],
  session: ['verify'],
  claims: ['file', 'template'],
  giftcard: ['setup', 'issue', 'history'],
  api: [],
  config: ['set', 'get', 'unset', 'list', 'path'],
  profiles: ['list', 'use', 'remove'],
  sandbox: [],
  demo: [],
  completion: ['bash', 'zsh', 'fish'],
};

/** Prints the script for one shell. */
export async function run(opts: { shell: string }, deps: Deps): Promise<void> {
  const top = Object.keys(COMMAND_TREE).join(' ');
  const cases = Object.entries(COMMAND_TREE)
    .filter(([, verbs]) => verbs.length)
    .map(([cmd, verbs]) => ({ cmd, verbs: verbs.join(' ') }));
  if (opts.shell === 'bash') {
    deps.out(`# opcli bash completion
_opcli() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd=\${COMP_WORDS[1]}
  if [ "$COMP_CWORD" -eq 1 ]; then COMPREPLY=( $(compgen -W "${top}" -- "$cur") ); return; fi
  case "$cmd" in
${cases.map((c) => `    ${c.cmd}) [ "$COMP_CWORD" -eq 2 ] && COMPREPLY=( $(compgen -W "${c.verbs}" -- "$cur") ) ;;`).join('\n')}
  esac
}
complete -o default -F _opcli opcli
`);
  } else if (opts.shell === 'zsh') {
    deps.out(`#compdef opcli
_opcli() {
  if (( CURRENT == 2 )); then compadd ${top}; return; fi
  case "$words[2]" in
${cases.map((c) => `    ${c.cmd}) (( CURRENT == 3 )) && compadd ${c.verbs} ;;`).join('\n')}
  esac
}
compdef _opcli opcli
`);
  } else if (opts.shell === 'fish') {
    const lines = Object.keys(COMMAND_TREE).map((c) => `complete -c opcli -n '__fish_use_subcommand' -a ${c}`);
    for (const c of cases) lines.push(`complete -c opcli -n '__fish_seen_subcommand_from ${c.cmd}' -a '${c.verbs}'`);
    deps.out(`# opcli fish completion\n${lines.join('\n')}\n`);
  } else {
    throw new UsageError(`Unknown shell "${opts.shell}".`, 'Use one of: bash, zsh, fish.');
  }
}
