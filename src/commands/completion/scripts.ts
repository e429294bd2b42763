/** Completion scripts for bash, zsh and fish, generated from the command tree (no I/O here). */
import type { CompletionTree } from './tree.js';

/** What a word completes to, as a shell `case` over "command/verb": shared by bash and zsh. */
function wordsFunction(tree: CompletionTree): string {
  const q = (words: string[]) => `"${words.join(' ')}"`;
  const flagCases: string[] = [`    /) w=${q(tree.globals)} ;;`];
  const wordCases: string[] = [`    /) w=${q(Object.keys(tree.commands))} ;;`];
  for (const [name, cmd] of Object.entries(tree.commands)) {
    const verbs = Object.keys(cmd.verbs);
    if (verbs.length === 0) {
      flagCases.push(`    ${name}/*) w=${q([...cmd.flags, ...tree.globals])} ;;`);
      if (name === 'completion') wordCases.push(`    ${name}/) w="bash zsh fish" ;;`);
      continue;
    }
    flagCases.push(`    ${name}/) w=${q([...cmd.flags, ...tree.globals])} ;;`);
    wordCases.push(`    ${name}/) w=${q(verbs)} ;;`);
    for (const [verb, flags] of Object.entries(cmd.verbs)) flagCases.push(`    ${name}/${verb}) w=${q([...flags, ...tree.globals])} ;;`);
  }
  if (tree.commands.config) wordCases.push(`    config/get|config/set|config/unset) w=${q(tree.configKeys)} ;;`);
  if (tree.commands.profiles) wordCases.push('    profiles/use|profiles/remove) w="$(opcli completion --list-profiles 2>/dev/null)" ;;');
  return `_opcli_words() {
  # $1 command, $2 verb, $3 the word being completed
  local w=""
  case "$3" in
  -*)
  case "$1/$2" in
${flagCases.join('\n')}
  esac ;;
  *)
  case "$1/$2" in
${wordCases.join('\n')}
  esac ;;
  esac
  echo "$w"
}`;
}

/** The loop that finds the command and verb: the first two words that are not options, skipping a profile name. */
const FIND = (first: string, last: string, word: string) => `  for ((i = ${first}; i < ${last}; i++)); do
    case "${word}" in
      -p|--profile) ((i++)) ;;
      -*) ;;
      *) if [ -z "$cmd" ]; then cmd=${word}; elif [ -z "$verb" ]; then verb=${word}; fi ;;
    esac
  done`;

/** The script for `shell`, or undefined for a shell opcli does not know. */
export function completionScript(shell: string, tree: CompletionTree): string | undefined {
  if (shell === 'bash') {
    return `# opcli bash completion: source it, or save it as ~/.local/share/bash-completion/completions/opcli
${wordsFunction(tree)}
_opcli() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} cmd="" verb="" i
  if [ "$prev" = "-p" ] || [ "$prev" = "--profile" ]; then
    COMPREPLY=( $(compgen -W "$(opcli completion --list-profiles 2>/dev/null)" -- "$cur") ); return
  fi
${FIND('1', 'COMP_CWORD', '$'.concat('{COMP_WORDS[i]}'))}
  COMPREPLY=( $(compgen -W "$(_opcli_words "$cmd" "$verb" "$cur")" -- "$cur") )
}
complete -o default -F _opcli opcli
`;
  }
  if (shell === 'zsh') {
    return `#compdef opcli
# opcli zsh completion: save it as _opcli in a folder of $fpath, or source it.
${wordsFunction(tree)}
_opcli() {
  local i cmd="" verb="" cur="$words[CURRENT]" prev="$words[CURRENT-1]"
  if [[ "$prev" == -p || "$prev" == --profile ]]; then compadd -- \${=$(opcli completion --list-profiles 2>/dev/null)}; return; fi
${FIND('2', 'CURRENT', '$words[i]')}
  compadd -- \${=$(_opcli_words "$cmd" "$verb" "$cur")}
}
# Autoloaded from $fpath the file is the function's body: run it. Sourced: register it.
if [[ "\${funcstack[1]}" == "_opcli" ]]; then _opcli "$@"; else compdef _opcli opcli; fi
`;
  }
  if (shell === 'fish') {
    const lines = ["complete -c opcli -s p -l profile -x -a '(opcli completion --list-profiles 2>/dev/null)'"];
    for (const name of Object.keys(tree.commands)) lines.push(`complete -c opcli -n '__fish_use_subcommand' -a ${name}`);
    const long = (flags: string[]) => flags.filter((f) => f.startsWith('--')).map((f) => `-l ${f.slice(2)}`);
    for (const [name, cmd] of Object.entries(tree.commands)) {
      const verbs = Object.keys(cmd.verbs);
      if (verbs.length)
        lines.push(
          `complete -c opcli -n '__fish_seen_subcommand_from ${name}; and not __fish_seen_subcommand_from ${verbs.join(' ')}' -f -a '${verbs.join(' ')}'`,
        );
      else for (const l of long(cmd.flags)) lines.push(`complete -c opcli -n '__fish_seen_subcommand_from ${name}' ${l}`);
      for (const [verb, flags] of Object.entries(cmd.verbs)) {
        for (const l of long(flags)) lines.push(`complete -c opcli -n '__fish_seen_subcommand_from ${name}; and __fish_seen_subcommand_from ${verb}' ${l}`);
      }
    }
    if (tree.commands.completion) lines.push("complete -c opcli -n '__fish_seen_subcommand_from completion' -f -a 'bash zsh fish'");
    if (tree.commands.config)
      lines.push(
        `complete -c opcli -n '__fish_seen_subcommand_from config; and __fish_seen_subcommand_from get set unset' -f -a '${tree.configKeys.join(' ')}'`,
      );
    if (tree.commands.profiles)
      lines.push(
        "complete -c opcli -n '__fish_seen_subcommand_from profiles; and __fish_seen_subcommand_from use remove' -f -a '(opcli completion --list-profiles 2>/dev/null)'",
      );
    return `# opcli fish completion\n${lines.join('\n')}\n`;
  }
  return undefined;
}
