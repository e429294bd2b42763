/**
 * What a flag's value or an argument completes to, said where it is declared: the values of an enum
 * (taken from the zod schema or the constant the flag is checked against, never listed again here),
 * the profile names, or file names. A flag whose value is named `<file…>` or `<path>` completes file
 * names without saying so; any other flag that takes a value completes nothing (no stray file names
 * after `--amount`); an argument without a hint completes file names, as the shells do. Parsing is
 * untouched: this is read only by `opcli __complete` (complete.ts).
 */
import type { Argument, Command, Option } from 'commander';

/** The values a flag takes, `files`, or `profiles`. */
export type ValueHint = readonly string[] | 'files' | 'profiles';

/** A hint, or a loader of the values for a module a command does not load until it runs (read by `opcli completion` only). */
export type DeclaredHint = ValueHint | (() => Promise<readonly string[]>);

const HINTS = new WeakMap<Option | Argument, DeclaredHint>();

/** Says what the values of `cmd`'s flags complete to, by long name (`--format`); returns the command. */
export function completeValues(cmd: Command, hints: Record<string, DeclaredHint>): Command {
  for (const [flag, hint] of Object.entries(hints)) {
    const option = cmd.options.find((o) => o.long === flag);
    if (!option) throw new Error(`completeValues: ${cmd.name()} has no option ${flag}`);
    HINTS.set(option, hint);
  }
  return cmd;
}

/** Marks what one option's value or one argument completes to; returns it (for `addOption`, `addArgument`). */
export function completesWith<T extends Option | Argument>(target: T, hint: DeclaredHint): T {
  HINTS.set(target, hint);
  return target;
}

/** What the value of `option` completes to: its hint, files for `<file…>`/`<path>`, `any` for another value. */
export async function valueHint(option: Option): Promise<ValueHint | 'any'> {
  return (await declared(option)) ?? (/<(file|path)\b/.test(option.flags) ? 'files' : 'any');
}

/** What `argument` completes to: its hint, else file names. */
export async function argumentHint(argument: Argument): Promise<ValueHint> {
  return (await declared(argument)) ?? 'files';
}

async function declared(target: Option | Argument): Promise<ValueHint | undefined> {
  const hint = HINTS.get(target);
  return typeof hint === 'function' ? hint() : hint;
}
