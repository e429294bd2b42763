import type { Command } from 'commander';
import { UsageError } from '../core/errors.js';

/**
 * Refuses a value flag given twice (`--amount 10 --amount 100`: commander would keep the last one
 * silently) and a boolean given both ways (`--in-stock --no-in-stock`), on every command of the
 * tree. Flags that collect their occurrences (repeatable lists) are left alone.
 */
export function refuseRepeatedOptions(root: Command): void {
  const visit = (cmd: Command) => {
    const seen = new Map<string, string>();
    for (const option of cmd.options) {
      if (option.variadic || !option.long) continue;
      const takesValue = option.required || option.optional;
      cmd.on(`option:${option.name()}`, () => {
        const key = option.attributeName();
        const first = seen.get(key);
        const flag = option.long as string;
        if (first === undefined) {
          seen.set(key, flag);
          return;
        }
        // A repeatable flag's parser collects the occurrences into a list: that is what it is for.
        if (Array.isArray(cmd.getOptionValue(key))) return;
        if (takesValue) throw new UsageError(`${flag} was given more than once.`, `Give ${flag} once, with the value you mean.`);
        if (first !== flag) throw new UsageError(`${first} and ${flag} contradict each other.`, 'Give one of them.');
      });
    }
    for (const sub of cmd.commands) visit(sub);
  };
  visit(root);
}
