import { Argument, type Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { UsageError } from '../../core/errors.js';
import { completesWith } from '../../core/flags.js';

/** `opcli completion` (`opcli __complete`, which the shims call, is answered by complete.ts). */
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
    .action(async (shell: string | undefined) => {
      if (!shell) throw new UsageError('Name the shell: bash, zsh, fish or powershell.', 'For example: opcli completion bash');
      const script = Object.hasOwn(SHIMS, shell) ? SHIMS[shell] : undefined;
      if (script === undefined) throw new UsageError(`Unknown shell "${shell}".`, 'Use one of: bash, zsh, fish, powershell.');
      deps.out(script);
    });
}

// A few lines per shell that pass the command line to `opcli __complete` (complete.ts) and hand its
// answer to the shell; nothing about opcli's commands is written here, so a saved script stays right.
const SHELLS = ['bash', 'zsh', 'fish', 'powershell'] as const;

// bash 3.2 (macOS) and later: no mapfile, no negative array indexes.
const BASH = `# opcli bash completion: source it, or save it as ~/.local/share/bash-completion/completions/opcli
_opcli() {
  local i words=() cur=\${COMP_WORDS[COMP_CWORD]} out directive
  # bash splits --flag=value at "=" (COMP_WORDBREAKS): opcli gets it back as one word.
  for ((i = 1; i <= COMP_CWORD; i++)); do
    if ((i > 1)) && [[ \${COMP_WORDS[i]} == = || \${COMP_WORDS[i-1]} == = ]]; then
      words[\${#words[@]}-1]+=\${COMP_WORDS[i]}
    else
      words+=("\${COMP_WORDS[i]}")
    fi
  done
  [[ $cur == = ]] && cur=""
  out=$(opcli __complete "\${words[@]}" 2>/dev/null) || return
  directive=\${out##*:}
  out=\${out%:*}
  if [[ -z $out ]] && (((directive & 4) == 0)); then
    compopt -o filenames 2>/dev/null
    local IFS=$'\\n'
    COMPREPLY=($(compgen -f -- "$cur"))
    return
  fi
  # Nothing to offer means nothing, not the file names of "complete -o default".
  compopt +o default 2>/dev/null
  local IFS=$'\\n'
  COMPREPLY=($(compgen -W "$out" -- "$cur"))
}
complete -o default -F _opcli opcli
`;

const ZSH = `#compdef opcli
# opcli zsh completion: save it as _opcli in a folder of $fpath, or source it.
_opcli() {
  local out directive
  out=$(opcli __complete "\${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
  directive=\${out##*:}
  out=\${out%:*}
  # --flag=value: complete the part after "=".
  [[ $words[CURRENT] == -*=* ]] && compset -P '*='
  if [[ -z $out ]]; then
    (((directive & 4) == 0)) && _files
    return
  fi
  compadd -- \${(f)out}
}
# Autoloaded from $fpath the file is the function's body: run it. Sourced: register it.
if [[ "\${funcstack[1]}" == "_opcli" ]]; then _opcli "$@"; else compdef _opcli opcli; fi
`;

const FISH = `# opcli fish completion: save it as ~/.config/fish/completions/opcli.fish
function __opcli_complete
    # "$cur" quoted below: an empty word (after a space) is still a word.
    set -l cur (commandline -ct)
    set -l out (opcli __complete (commandline -opc)[2..-1] "$cur" 2>/dev/null); or return
    set -l directive (string replace ':' '' -- $out[-1])
    set -e out[-1]
    if test (count $out) -eq 0
        # Bit 4 of the directive: no file names.
        test (math --scale 0 "$directive / 4 % 2") -eq 0; and __fish_complete_path "$cur"
        return
    end
    # --flag=value: fish matches candidates against the whole word.
    set -l prefix (string match -r -- '^-[^=]*=' "$cur")
    printf '%s\\n' "$prefix"$out
end
complete -c opcli -f -a '(__opcli_complete)'
`;

const POWERSHELL = `# opcli PowerShell completion: add it to your profile, e.g.
#   opcli completion powershell | Out-String | Invoke-Expression
# or save it as opcli.ps1 and dot-source it from $PROFILE.
Register-ArgumentCompleter -Native -CommandName opcli -ScriptBlock {
  param($wordToComplete, $commandAst, $cursorPosition)
  # The words before the one being completed, then that one ('' after a space).
  $words = @($commandAst.CommandElements | Where-Object { $_.Extent.StartOffset -lt $cursorPosition } | ForEach-Object { $_.Extent.Text })
  if ($wordToComplete -ne '') { $words = @($words | Select-Object -First ($words.Count - 1)) }
  $words = @($words | Select-Object -Skip 1) + @($wordToComplete)
  # An empty word reaches opcli as itself only where PowerShell passes arguments the standard way
  # (7.3 and later); elsewhere it is dropped unless quoted, as cobra's script does.
  $legacy = $null -eq (Get-Variable PSNativeCommandArgumentPassing -ValueOnly -ErrorAction Ignore) -or $PSNativeCommandArgumentPassing -eq 'Legacy'
  $out = @(opcli __complete @($words | ForEach-Object { if ($_ -eq '' -and $legacy) { '""' } else { $_ } }) 2>$null)
  if ($out.Count -eq 0) { return '' }
  $directive = [int]($out[-1].TrimStart(':'))
  $candidates = @($out | Select-Object -First ($out.Count - 1))
  # No candidate and file names allowed: no answer, so PowerShell completes paths itself.
  if ($candidates.Count -eq 0 -and ($directive -band 4) -eq 0) { return }
  # Nothing to offer: an empty answer, so PowerShell does not fall back to file names.
  if ($candidates.Count -eq 0) { return '' }
  $prefix = if ($wordToComplete -like '-*=*') { $wordToComplete.Substring(0, $wordToComplete.IndexOf('=') + 1) } else { '' }
  $candidates | ForEach-Object { [System.Management.Automation.CompletionResult]::new("$prefix$_", $_, 'ParameterValue', $_) }
}
`;

/** The shim of each shell opcli knows (`pwsh` is PowerShell's own name for itself). */
const SHIMS: Record<string, string> = { bash: BASH, zsh: ZSH, fish: FISH, powershell: POWERSHELL, pwsh: POWERSHELL };
