/**
 * The command tree as the fuzz suite sees it: every group's register() loaded into one program
 * (GROUPS in src/cli/program.ts), walked down to the leaf commands with their arguments and flags. A new
 * command or flag is fuzzed from here without anyone listing it.
 */
import { Command, type Option } from 'commander';
import { GROUPS } from '../../src/cli/program.js';
import { quietDeps } from '../helpers.js';

export interface FlagInfo {
  /** `--item-price` */
  long: string;
  takesValue: boolean;
  /** `--no-x`: the negated form of a boolean. */
  negate: boolean;
  /** Collects every occurrence (a repeatable array flag or a variadic one). */
  repeatable: boolean;
  description: string;
}

export interface ArgInfo {
  name: string;
  required: boolean;
  variadic: boolean;
}

export interface CommandInfo {
  /** `['variants', 'create']` */
  path: string[];
  args: ArgInfo[];
  flags: FlagInfo[];
}

/** A flag whose parser turns one value into a list collects every occurrence. */
function collects(option: Option): boolean {
  const parse = (option as unknown as { parseArg?: (value: string, previous: unknown) => unknown }).parseArg;
  if (option.variadic) return true;
  if (typeof parse !== 'function') return false;
  // A collecting parser may also check each item (key=value, a URL): probe with values of each shape.
  return ['probe', 'key=value', 'https://example.com/x.png'].some((value) => {
    try {
      return Array.isArray(parse(value, undefined));
    } catch {
      return false;
    }
  });
}

/** Every leaf command of opcli, loaded from every group. */
export async function commandTree(): Promise<CommandInfo[]> {
  const program = new Command('opcli');
  const deps = quietDeps();
  for (const group of GROUPS) await (await group.load()).register(program, deps);
  const out: CommandInfo[] = [];
  const walk = (cmd: Command, path: string[]) => {
    if (cmd.commands.length === 0 && path.length > 0) {
      out.push({
        path,
        args: cmd.registeredArguments.map((a) => ({ name: a.name(), required: a.required, variadic: a.variadic })),
        flags: cmd.options
          .filter((o) => o.long)
          .map((o) => ({
            long: o.long as string,
            takesValue: o.required || o.optional,
            negate: o.negate,
            repeatable: collects(o),
            description: o.description,
          })),
      });
    }
    for (const sub of cmd.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  return out;
}
