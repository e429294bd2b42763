/**
 * Generators of command lines wrong in one way, built from the command tree: for each command, each
 * value flag and argument gets the universal classes and those of its kind; each value flag of the
 * baseline gets a duplicate; every command gets an unknown flag and, when it takes none, an extra
 * argument.
 */
import fc from 'fast-check';
import { ARG_ALIASES, ARG_KINDS, BASELINES, COMMAND_FLAG_KINDS, type FuzzContext, WARN_ONLY } from './baselines.js';
import { type Case, resolvePlaceholder } from './harness.js';
import { isKnownOpen } from './known-open.js';
import type { CommandInfo } from './tree.js';
import { byKind, FLAG_KINDS, universal, type Wrong } from './values.js';

/** Values a generator class draws that the spec allows: not wrong, so not generated (`signature: ""` is allowed). */
const VALID_BY_SPEC = new Set(['claims file --signature empty']);

/** A generator of cases for one (target, class) of a command: draws a value, then builds the case. */
export interface Generator {
  target: string;
  cls: string;
  arb: fc.Arbitrary<string>;
  build: (ctx: FuzzContext, value: string) => Case;
}

const camel = (s: string) => s.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Ways a flag's field can be named in an error: `--item-price`, `item-price`, `itemPrice`, `price`. */
function flagMentions(long: string): string[] {
  const bare = long.replace(/^--/, '');
  const rest = bare.replace(/^(item|warranty|shipping|customer)-/, '');
  return [long, bare, camel(bare), camel(rest)];
}

/** The argv of a command's baseline (or, without one, placeholders for its required arguments). */
function baseline(info: CommandInfo, ctx: FuzzContext): { args: string[]; flags: string[] } {
  const known = BASELINES[info.path.join(' ')];
  if (known) return { args: known.args(ctx), flags: known.flags(ctx) };
  return { args: info.args.filter((a) => a.required).map(() => 'placeholder'), flags: [] };
}

/** Removes every occurrence of a flag (and its value) from a flag list. */
function without(flags: string[], long: string, takesValue: boolean): string[] {
  const out: string[] = [];
  for (let i = 0; i < flags.length; i++) {
    if (flags[i] === long) {
      if (takesValue) i++;
      continue;
    }
    out.push(flags[i] as string);
  }
  return out;
}

/**
 * Every generator of a command, less those KNOWN_OPEN scopes out; with `knownOpen`, only those
 * (to find entries that no longer fail).
 */
export function generatorsFor(info: CommandInfo, knownOpen = false): Generator[] {
  const command = info.path.join(' ');
  const gens: Generator[] = [];
  const add = (target: string, w: Wrong, build: (ctx: FuzzContext, value: string) => Omit<Case, 'command' | 'target' | 'cls' | 'code'>) => {
    if (isKnownOpen(command, target, w.cls) !== knownOpen) return;
    gens.push({
      target,
      cls: w.cls,
      arb: w.arb,
      build: (ctx, value) => {
        const warn = WARN_ONLY.has(`${command} ${target} ${w.cls}`);
        return { command, target, cls: w.cls, code: warn ? 0 : 2, warn, ...build(ctx, resolvePlaceholder(value, ctx.inputs)) };
      },
    });
  };

  for (const flag of info.flags.filter((f) => f.takesValue)) {
    const kind = COMMAND_FLAG_KINDS[`${command} ${flag.long}`] ?? FLAG_KINDS[flag.long] ?? 'text';
    for (const w of [...universal(), ...byKind(kind)]) {
      if (VALID_BY_SPEC.has(`${command} ${flag.long} ${w.cls}`)) continue;
      add(flag.long, w, (ctx, value) => {
        const base = baseline(info, ctx);
        return { argv: [...info.path, ...base.args, ...without(base.flags, flag.long, true), flag.long, value], mentions: flagMentions(flag.long) };
      });
    }
  }

  info.args.forEach((arg, index) => {
    const kind = ARG_KINDS[`${command} ${arg.name}`] ?? 'text';
    for (const w of [...universal(), ...byKind(kind)]) {
      add(arg.name, w, (ctx, value) => {
        const base = baseline(info, ctx);
        const args = [...base.args];
        while (args.length <= index) args.push('placeholder');
        args[index] = value;
        const printable = /^[\x20-\x7e]{3,}$/.test(value) ? [value] : [];
        return { argv: [...info.path, ...args, ...base.flags], mentions: [arg.name, ...(ARG_ALIASES[arg.name] ?? []), ...printable] };
      });
    }
  });

  // A value flag given twice: commander keeps the last one silently, so `--amount 10 --amount 100` would send 100.
  add('*', { cls: 'duplicated-flag', arb: fc.constant('') }, (ctx) => {
    const base = baseline(info, ctx);
    const valueFlags = info.flags.filter((f) => f.takesValue && !f.repeatable).map((f) => f.long);
    const i = base.flags.findIndex((f) => valueFlags.includes(f));
    if (i < 0) return { argv: [...info.path, ...base.args, ...base.flags, '--no-such-flag'], mentions: ['--no-such-flag'] };
    const long = base.flags[i] as string;
    return { argv: [...info.path, ...base.args, ...base.flags, long, base.flags[i + 1] as string], mentions: [long] };
  });
  add('*', { cls: 'unknown-flag', arb: fc.constantFrom('--no-such-flag', '--jsonn', '-Z') }, (ctx, value) => {
    const base = baseline(info, ctx);
    return { argv: [...info.path, ...base.args, ...base.flags, value], mentions: [value] };
  });
  if (!info.args.some((a) => a.variadic)) {
    add('*', { cls: 'extra-argument', arb: fc.constantFrom('surplus', 'x y') }, (ctx, value) => {
      const base = baseline(info, ctx);
      const args = [...base.args];
      while (args.length < info.args.length) args.push('placeholder');
      return { argv: [...info.path, ...args, value, ...base.flags], mentions: ['argument', value] };
    });
  }
  return gens;
}
