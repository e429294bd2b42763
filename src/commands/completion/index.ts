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
    deps.out(`# opcli bash completion: source it, or save it as ~/.local/share/bash-completion/completions/opcli
_opcli() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd="" at=0 i
  # The command is the first word that is not an option, skipping the value of -p/--profile.
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in
      -p|--profile) ((i++)) ;;
      -*) ;;
      *) cmd=\${COMP_WORDS[i]}; at=$i; break ;;
    esac
  done
  if [ -z "$cmd" ]; then COMPREPLY=( $(compgen -W "${top}" -- "$cur") ); return; fi
  [ "$COMP_CWORD" -eq $((at + 1)) ] || return
  case "$cmd" in
${cases.map((c) => `    ${c.cmd}) COMPREPLY=( $(compgen -W "${c.verbs}" -- "$cur") ) ;;`).join('\n')}
  esac
}
complete -o default -F _opcli opcli
`);
  } else if (opts.shell === 'zsh') {
    deps.out(`#compdef opcli
# opcli zsh completion: save it as _opcli in a folder of $fpath, or source it.
_opcli() {
  local i cmd="" at=0
  for ((i = 2; i < CURRENT; i++)); do
    case "$words[i]" in
      -p|--profile) ((i++)) ;;
      -*) ;;
      *) cmd=$words[i]; at=$i; break ;;
    esac
  done
  if [[ -z "$cmd" ]]; then compadd ${top}; return; fi
  (( CURRENT == at + 1 )) || return
  case "$cmd" in
${cases.map((c) => `    ${c.cmd}) compadd ${c.verbs} ;;`).join('\n')}
  esac
}
# Autoloaded from $fpath the file is the function's body: run it. Sourced: register it.
if [[ "\${funcstack[1]}" == "_opcli" ]]; then _opcli "$@"; else compdef _opcli opcli; fi
`);
  } else if (opts.shell === 'fish') {
    const lines = Object.keys(COMMAND_TREE).map((c) => `complete -c opcli -n '__fish_use_subcommand' -a ${c}`);
    for (const c of cases) lines.push(`complete -c opcli -n '__fish_seen_subcommand_from ${c.cmd}' -a '${c.verbs}'`);
    deps.out(`# opcli fish completion\n${lines.join('\n')}\n`);
  } else {
    throw new UsageError(`Unknown shell "${opts.shell}".`, 'Use one of: bash, zsh, fish.');
  }
}
