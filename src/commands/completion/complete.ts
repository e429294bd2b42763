/**
 * `opcli __complete <words…>` (the words after `opcli`, the last one being completed), answered from
 * the command tree as cobra does (spf13/cobra, completions.go): one candidate a line, then
 * `:<directive>` with cobra's ShellCompDirective bits (no candidate and no `noFileComp`: file names).
 */
import { type Command, Help, type Option } from 'commander';
import { buildProgram, commandWord, GROUPS } from '../../cli/program.js';
import type { Deps } from '../../cli/deps.js';
import { argumentHint, type ValueHint, valueHint } from '../../core/flags.js';

/** cobra's ShellCompDirective bits that opcli uses, as the shims read them. */
export const DIRECTIVE = { files: 0, error: 1, noFileComp: 4 } as const;

interface Answer {
  candidates: readonly string[];
  directive: number;
}

/** Prints the answer for `words`; never fails (an error is the `error` directive, nothing offered). */
export async function complete(words: string[], deps: Deps): Promise<number> {
  let answer: Answer;
  try {
    answer = await answerFor(words.length ? words : [''], deps);
  } catch {
    answer = { candidates: [], directive: DIRECTIVE.error };
  }
  deps.out(`${answer.candidates.map((c) => `${c}\n`).join('')}:${answer.directive}\n`);
  return 0;
}

/** Where the words before the one completed leave the command line. */
interface Place {
  /** The command reached (the program, a group, a verb). */
  cmd: Command;
  /** Arguments given to it so far. */
  args: number;
  /** The option whose value comes next, if the last word was one that takes a value. */
  pending?: Option;
  /** After `--`: only arguments. */
  rest: boolean;
}

function walk(program: Command, words: string[]): Place {
  const at: Place = { cmd: program, args: 0, rest: false };
  for (const word of words) {
    if (at.pending) {
      at.pending = undefined;
      continue;
    }
    if (!at.rest && word === '--') at.rest = true;
    else if (!at.rest && word.startsWith('-') && word.length > 1) {
      const option = word.includes('=') ? undefined : findOption(at.cmd, word);
      if (option?.required) at.pending = option;
    } else {
      const sub = at.args === 0 ? at.cmd.commands.find((c) => c.name() === word || c.aliases().includes(word)) : undefined;
      if (sub) at.cmd = sub;
      else at.args++;
    }
  }
  return at;
}

/** The option `flag` names on `cmd` or a command above it (global options live on the program). */
function findOption(cmd: Command, flag: string): Option | undefined {
  for (let c: Command | null = cmd; c; c = c.parent) {
    const option = c.options.find((o) => o.long === flag || o.short === flag);
    if (option) return option;
  }
  return undefined;
}

const help = new Help();

/** The flags shown in help at `cmd` and above it, long and short forms. */
function flagsAt(cmd: Command): string[] {
  const flags = new Set<string>();
  for (let c: Command | null = cmd; c; c = c.parent) {
    for (const o of help.visibleOptions(c)) for (const f of [o.long, o.short]) if (f) flags.add(f);
  }
  return [...flags];
}

async function answerFor(words: string[], deps: Deps): Promise<Answer> {
  const cur = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const group = commandWord(before);
  const program = await buildProgram(deps, GROUPS.some((g) => g.name === group) ? group : undefined);
  const at = walk(program, before);
  if (at.pending) return offer(await valueHint(at.pending), cur, deps);
  if (!at.rest && cur.startsWith('-')) {
    const eq = cur.indexOf('=');
    if (eq < 0) return pick(flagsAt(at.cmd), cur);
    // --flag=value: the values alone; each shim puts them after the flag as its shell needs.
    const option = findOption(at.cmd, cur.slice(0, eq));
    return option?.required ? offer(await valueHint(option), cur.slice(eq + 1), deps) : offer('any', '', deps);
  }
  const subcommands = help.visibleCommands(at.cmd).filter((c) => at.cmd.commands.includes(c));
  if (at.args === 0 && subcommands.length)
    return pick(
      subcommands.map((c) => c.name()),
      cur,
    );
  const args = at.cmd.registeredArguments;
  const arg = args[Math.min(at.args, args.length - 1)];
  return offer(arg ? await argumentHint(arg) : 'files', cur, deps);
}

/** What a hint offers for the text `cur`. */
async function offer(hint: ValueHint | 'any', cur: string, deps: Deps): Promise<Answer> {
  if (hint === 'files') return { candidates: [], directive: DIRECTIVE.files };
  if (hint === 'any') return { candidates: [], directive: DIRECTIVE.noFileComp };
  if (hint === 'profiles') return pick((await deps.settings()).listProfiles(), cur);
  return pick(hint, cur);
}

function pick(values: readonly string[], cur: string): Answer {
  return { candidates: values.filter((v) => v.startsWith(cur)), directive: DIRECTIVE.noFileComp };
}
