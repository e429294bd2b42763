/**
 * What a flag's value completes to, said where the flag is declared: the values of an enum (taken
 * from the zod schema or the constant the flag is checked against, never listed again here), the
 * profile names, or file names. A flag whose value is named `<file…>` or `<path>` completes file
 * names without saying so; any other flag that takes a value completes nothing (no stray file
 * names after `--amount`). Parsing is untouched: this is read only by `opcli completion`.
 */
import type { Command, Option } from 'commander';

/** The values a flag takes, `files`, or `profiles`. */
export type ValueHint = readonly string[] | 'files' | 'profiles';

/** A hint, or a loader of the values for a module a command does not load until it runs (read by `opcli completion` only). */
export type DeclaredHint = ValueHint | (() => Promise<readonly string[]>);

const HINTS = new WeakMap<Option, DeclaredHint>();

/** Says what the values of `cmd`'s flags complete to, by long name (`--format`); returns the command. */
export function completeValues(cmd: Command, hints: Record<string, DeclaredHint>): Command {
  for (const [flag, hint] of Object.entries(hints)) {
    const option = cmd.options.find((o) => o.long === flag);
    if (!option) throw new Error(`completeValues: ${cmd.name()} has no option ${flag}`);
    HINTS.set(option, hint);
  }
  return cmd;
}

/** Marks one option's values; returns the option (for `addOption`). */
export function completesWith<T extends Option>(option: T, hint: ValueHint): T {
  HINTS.set(option, hint);
  return option;
}

/** What the value of `option` completes to: its hint, files for `<file…>`/`<path>`, `any` for another value, undefined for none. */
export async function valueHint(option: Option): Promise<ValueHint | 'any' | undefined> {
  if (!option.required) return undefined;
  const hint = HINTS.get(option);
  if (typeof hint === 'function') return hint();
  return hint ?? (/<(file|path)\b/.test(option.flags) ? 'files' : 'any');
}
