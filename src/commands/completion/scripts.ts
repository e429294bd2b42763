/**
 * Completion scripts for bash, zsh, fish and PowerShell, generated from the command tree (no I/O
 * here). Every script carries the same table: the words and flags at each place of the command
 * line, and what each flag's value completes to (enum values, profile names read by
 * `opcli completion --list-profiles` when TAB is pressed, file names, or nothing).
 */
import { type CompletionTree, SHELLS, type ValueKind } from './tree.js';

export { SHELLS };

/**
 * A place on the command line, as a shell `case` pattern over "command/verb": `/` before the
 * command, `orders/` before its verb, `orders/list` after it, `api/*` anywhere in a command
 * without verbs.
 */
type Key = string;

/** What a value completes to, as the scripts spell it: words, or @files, @profiles, @any. */
type Completes = string[] | '@files' | '@profiles' | '@any';

interface Table {
  /** The commands without verbs (their key is `name/*`). */
  verbless: string[];
  /** The words (not flags) each place completes: commands, verbs, setting keys, profiles, shells. */
  words: Record<Key, string[] | '@profiles'>;
  /** The flags at each place, without the global ones. */
  flags: Record<Key, string[]>;
  /** At each place, by flag: what its value completes to. */
  values: Record<Key, Record<string, Completes>>;
  globals: string[];
  globalValues: Record<string, Completes>;
}

const WORD = /^[A-Za-z0-9_.:+@/-]+$/;

/** Refuses a word a script could not carry unquoted (every word comes from the tree: a failing test, not a user's error). */
function checked(words: string[]): string[] {
  for (const w of words) if (!WORD.test(w)) throw new Error(`completion: "${w}" cannot be written into a script unquoted`);
  return words;
}

function completes(kind: ValueKind): Completes {
  if (kind === 'files' || kind === 'profiles' || kind === 'any') return `@${kind}`;
  return checked([...kind]);
}

function valueTable(values: Record<string, ValueKind>): Record<string, Completes> {
  return Object.fromEntries(Object.entries(values).map(([flag, kind]) => [flag, completes(kind)]));
}

/** The table every script is written from. */
function table(tree: CompletionTree): Table {
  const t: Table = {
    verbless: [],
    words: { '/': checked(Object.keys(tree.commands)) },
    flags: {},
    values: {},
    globals: checked(tree.globals),
    globalValues: valueTable(tree.globalValues),
  };
  for (const [name, cmd] of Object.entries(tree.commands)) {
    const verbs = checked(Object.keys(cmd.verbs));
    if (verbs.length === 0) {
      t.verbless.push(name);
      t.flags[`${name}/*`] = checked(cmd.flags);
      t.values[`${name}/*`] = valueTable(cmd.values[''] ?? {});
      continue;
    }
    t.words[`${name}/`] = verbs;
    t.flags[`${name}/`] = checked(cmd.flags);
    t.values[`${name}/`] = valueTable(cmd.values[''] ?? {});
    for (const [verb, flags] of Object.entries(cmd.verbs)) {
      t.flags[`${name}/${verb}`] = checked(flags);
      t.values[`${name}/${verb}`] = valueTable(cmd.values[verb] ?? {});
    }
  }
  if (tree.commands.completion) t.words['completion/*'] = [...tree.shells];
  if (tree.commands.config) for (const verb of ['get', 'set', 'unset']) t.words[`config/${verb}`] = checked(tree.configKeys);
  if (tree.commands.profiles) for (const verb of ['use', 'remove']) t.words[`profiles/${verb}`] = '@profiles';
  return t;
}

const LIST_PROFILES = 'opcli completion --list-profiles 2>/dev/null';

/** Groups flags by what their values complete to, as `flag|flag) echo ...` lines of a `case`. */
function valueCases(values: Record<string, Completes>, indent: string): string[] {
  const byWhat = new Map<string, string[]>();
  for (const [flag, what] of Object.entries(values)) {
    const text = Array.isArray(what) ? `"${what.join(' ')}"` : what;
    byWhat.set(text, [...(byWhat.get(text) ?? []), flag]);
  }
  return [...byWhat].map(([text, flags]) => `${indent}${flags.join('|')}) echo ${text}; return ;;`);
}

/** The functions bash and zsh share: the words or flags a place completes, and what a flag's value completes to. */
function shellFunctions(t: Table): string {
  const q = (words: string[]) => `"${words.join(' ')}"`;
  const flagCases = Object.entries(t.flags).map(([key, flags]) => `    ${key}) w=${q([...flags, ...t.globals])} ;;`);
  const wordCases = Object.entries(t.words).map(([key, words]) => `    ${key}) w=${words === '@profiles' ? `"$(${LIST_PROFILES})"` : q(words)} ;;`);
  const valueBlocks = Object.entries(t.values)
    .filter(([, values]) => Object.keys(values).length > 0)
    .map(([key, values]) => `    ${key}) case "$3" in\n${valueCases(values, '      ').join('\n')}\n    esac ;;`);
  return `_opcli_words() {
  # $1 command, $2 verb, $3 the word being completed
  local w=""
  case "$3" in
  -*)
  case "$1/$2" in
    /) w=${q(t.globals)} ;;
${flagCases.join('\n')}
  esac ;;
  *)
  case "$1/$2" in
${wordCases.join('\n')}
  esac ;;
  esac
  echo "$w"
}
_opcli_value() {
  # $1 command, $2 verb, $3 a flag: prints what its value completes to (words, @files, @profiles or
  # @any); fails for a flag that takes no value
  case "$1/$2" in
${valueBlocks.join('\n')}
  esac
  case "$3" in
${valueCases(t.globalValues, '    ').join('\n')}
  esac
  return 1
}`;
}

/** The loop that finds the command and verb: the first two words that are not options, skipping the value of a global option (a profile name, a progress mode). */
const FIND = (first: string, last: string, word: string, extra = '') => `  for ((i = ${first}; i < ${last}; i++)); do
    case "${word}" in
      -p|--profile|--progress) ${extra}((i++)) ;;
      -*) ;;
      *) if [ -z "$cmd" ]; then cmd=${word}; elif [ -z "$verb" ]; then verb=${word}; fi ;;
    esac
  done`;

function bash(t: Table): string {
  const word = '$'.concat('{COMP_WORDS[i]}');
  return `# opcli bash completion: source it, or save it as ~/.local/share/bash-completion/completions/opcli
${shellFunctions(t)}
_opcli() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} cmd="" verb="" i v
  # --flag=value: bash splits the word at "=", so the flag is the word before it.
  if [ "$cur" = "=" ]; then cur=""; elif [ "$prev" = "=" ] && [ "$COMP_CWORD" -gt 1 ]; then prev=\${COMP_WORDS[COMP_CWORD-2]}; fi
${FIND('1', 'COMP_CWORD', word, `[ "\${COMP_WORDS[i+1]}" = "=" ] && ((i++)); `)}
  if v=$(_opcli_value "$cmd" "$verb" "$prev"); then
    case "$v" in
      @files) compopt -o filenames 2>/dev/null; local IFS=$'\\n'; COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
      @profiles) v=$(${LIST_PROFILES}) ;;
      @any) v="" ;;
    esac
    # A value with no match offers nothing, not the file names of "complete -o default".
    compopt +o default 2>/dev/null
    COMPREPLY=( $(compgen -W "$v" -- "$cur") ); return
  fi
  COMPREPLY=( $(compgen -W "$(_opcli_words "$cmd" "$verb" "$cur")" -- "$cur") )
}
complete -o default -F _opcli opcli
`;
}

function zsh(t: Table): string {
  return `#compdef opcli
# opcli zsh completion: save it as _opcli in a folder of $fpath, or source it.
${shellFunctions(t)}
_opcli() {
  local i cmd="" verb="" cur="$words[CURRENT]" prev="$words[CURRENT-1]" v
  # --flag=value: complete the part after "=".
  if [[ "$cur" == -*=* ]]; then prev="\${cur%%=*}"; compset -P '*='; cur="\${cur#*=}"; fi
${FIND('2', 'CURRENT', '$words[i]')}
  if v=$(_opcli_value "$cmd" "$verb" "$prev"); then
    case "$v" in
      @files) _files; return ;;
      @profiles) v=$(${LIST_PROFILES}) ;;
      @any) return 1 ;;
    esac
    compadd -- \${=v}; return
  fi
  compadd -- \${=$(_opcli_words "$cmd" "$verb" "$cur")}
}
# Autoloaded from $fpath the file is the function's body: run it. Sourced: register it.
if [[ "\${funcstack[1]}" == "_opcli" ]]; then _opcli "$@"; else compdef _opcli opcli; fi
`;
}

/** fish's `-l name`/`-s n` for a flag. */
function fishFlag(flag: string): string {
  return flag.startsWith('--') ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`;
}

/** fish's options for a flag whose value completes to `what`. */
function fishValue(what: Completes | undefined): string {
  if (what === undefined) return '';
  if (what === '@files') return ' -r -F';
  if (what === '@profiles') return ` -x -a '(${LIST_PROFILES})'`;
  if (what === '@any') return ' -x';
  return ` -x -a '${what.join(' ')}'`;
}

function fish(t: Table): string {
  const lines: string[] = [];
  for (const flag of t.globals) lines.push(`complete -c opcli ${fishFlag(flag)}${fishValue(t.globalValues[flag])}`);
  const verbsOf = (name: string) => (Array.isArray(t.words[`${name}/`]) ? (t.words[`${name}/`] as string[]) : []);
  const condition = (key: Key): string => {
    if (key === '/') return '__fish_use_subcommand';
    const [name, verb] = key.split('/') as [string, string];
    if (verb === '*') return `__fish_seen_subcommand_from ${name}`;
    if (verb === '') return `__fish_seen_subcommand_from ${name}; and not __fish_seen_subcommand_from ${verbsOf(name).join(' ')}`;
    return `__fish_seen_subcommand_from ${name}; and __fish_seen_subcommand_from ${verb}`;
  };
  for (const [key, words] of Object.entries(t.words)) {
    const what = words === '@profiles' ? `(${LIST_PROFILES})` : words.join(' ');
    lines.push(`complete -c opcli -n '${condition(key)}' -f -a '${what}'`);
  }
  for (const [key, flags] of Object.entries(t.flags)) {
    for (const flag of flags) {
      if (t.globals.includes(flag)) continue;
      lines.push(`complete -c opcli -n '${condition(key)}' ${fishFlag(flag)}${fishValue(t.values[key]?.[flag])}`);
    }
  }
  return `# opcli fish completion: save it as ~/.config/fish/completions/opcli.fish\n${lines.join('\n')}\n`;
}

function powershell(t: Table): string {
  // The table as JSON: plain words only (checked), and a quote doubled in case one ever appears.
  const data = JSON.stringify(t).replace(/'/g, "''");
  return `# opcli PowerShell completion: add it to your profile, e.g.
#   opcli completion powershell | Out-String | Invoke-Expression
# or save it as opcli.ps1 and dot-source it from $PROFILE.
Register-ArgumentCompleter -Native -CommandName opcli -ScriptBlock {
  param($wordToComplete, $commandAst, $cursorPosition)
  $t = '${data}' | ConvertFrom-Json
  # The words before the one being completed.
  $words = @($commandAst.CommandElements | Where-Object { $_.Extent.StartOffset -lt $cursorPosition } | ForEach-Object { $_.Extent.Text })
  if ($wordToComplete -ne '' -and $words.Count -gt 0) { $words = @($words | Select-Object -First ($words.Count - 1)) }
  $cur = $wordToComplete
  $prev = if ($words.Count -gt 0) { $words[$words.Count - 1] } else { '' }
  $prefix = ''
  if ($cur -like '-*=*') {
    $at = $cur.IndexOf('=')
    $prev = $cur.Substring(0, $at); $prefix = $cur.Substring(0, $at + 1); $cur = $cur.Substring($at + 1)
  }
  $cmd = ''; $verb = ''
  for ($i = 1; $i -lt $words.Count; $i++) {
    $w = $words[$i]
    if ($w -eq '-p' -or $w -eq '--profile' -or $w -eq '--progress') { $i++ }
    elseif ($w -like '-*') { }
    elseif ($cmd -eq '') { $cmd = $w }
    elseif ($verb -eq '') { $verb = $w }
  }
  $key = if ($cmd -eq '') { '/' } elseif ($t.verbless -contains $cmd) { "$cmd/*" } else { "$cmd/$verb" }
  $what = $null
  if ($prev -like '-*') {
    if ($null -ne $t.values.$key -and $null -ne $t.values.$key.$prev) { $what = $t.values.$key.$prev }
    elseif ($null -ne $t.globalValues.$prev) { $what = $t.globalValues.$prev }
  }
  if ($null -ne $what) {
    # A file name: no answer, so PowerShell completes paths itself.
    if ($what -is [string] -and $what -eq '@files') { return }
    if ($what -is [string] -and $what -eq '@any') { $candidates = @() }
    elseif ($what -is [string] -and $what -eq '@profiles') { $candidates = @(opcli completion --list-profiles 2>$null) }
    else { $candidates = @($what) }
  } elseif ($cur -like '-*') {
    $candidates = @($t.globals) + @($t.flags.$key)
  } elseif ($t.words.$key -is [string] -and $t.words.$key -eq '@profiles') {
    $candidates = @(opcli completion --list-profiles 2>$null)
  } else {
    $candidates = @($t.words.$key)
  }
  $found = @($candidates | Where-Object { $_ -and $_ -like "$cur*" } | Select-Object -Unique)
  # Nothing to offer: an empty answer, so PowerShell does not fall back to file names.
  if ($found.Count -eq 0) { return '' }
  $found | ForEach-Object { [System.Management.Automation.CompletionResult]::new("$prefix$_", $_, 'ParameterValue', $_) }
}
`;
}

/** The script for `shell`, or undefined for a shell opcli does not know. */
export function completionScript(shell: string, tree: CompletionTree): string | undefined {
  const t = table(tree);
  if (shell === 'bash') return bash(t);
  if (shell === 'zsh') return zsh(t);
  if (shell === 'fish') return fish(t);
  if (shell === 'powershell' || shell === 'pwsh') return powershell(t);
  return undefined;
}
