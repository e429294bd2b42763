/** Every shared flag type, parsed in one place; each parser's UsageError names the flag and the value expected. */
import { UsageError } from './errors.js';
import { count } from '../text/count.js';
import { textProblem } from '../text/safe.js';
import type { Argument, Command, Option } from 'commander';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type Unit = keyof typeof UNIT_MS;

/** One day: longer than any wait opcli has, and far below Node's timer limit (about 24.8 days). */
export const MAX_DURATION_MS = UNIT_MS.d;

/** Prints milliseconds the way a duration flag takes them: 300ms, 4.5s, 5m, 1h. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000 || ms % 60_000 !== 0) return `${Number((ms / 1000).toFixed(3))}s`;
  if (ms < 3_600_000 || ms % 3_600_000 !== 0) return `${ms / 60_000}m`;
  if (ms < 86_400_000 || ms % 86_400_000 !== 0) return `${ms / 3_600_000}h`;
  return `${ms / 86_400_000}d`;
}

/** Parses a duration flag: a number and a unit (`300ms`, `4.5s`, `5m`, `1h`, `1d`); a bare number is ambiguous and refused. */
export function parseDuration(raw: string, flag: string, bounds: { minMs?: number; maxMs?: number; minHint?: string } = {}): number {
  const text = String(raw).trim();
  const minMs = bounds.minMs ?? 0;
  const maxMs = bounds.maxMs ?? MAX_DURATION_MS;
  if (/^\d+(\.\d+)?$/.test(text)) {
    throw new UsageError(`${flag} "${raw}" has no unit.`, `Add one: ${text}s for seconds, ${text}ms for milliseconds (also m, h).`);
  }
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/i.exec(text);
  if (!m) throw new UsageError(`${flag} "${raw}" is not a duration.`, `Expected a number and a unit, such as 300ms, 4.5s, 5m or 1h.`);
  const ms = Math.round(Number(m[1]) * UNIT_MS[(m[2] as string).toLowerCase() as Unit]);
  if (ms > maxMs) throw new UsageError(`${flag} "${raw}" is too long: at most ${formatDuration(maxMs)}.`);
  if (ms < minMs) throw new UsageError(`${flag} "${raw}" is too short: at least ${formatDuration(minMs)}.`, bounds.minHint);
  return ms;
}

/** Parses a whole number flag (digits only) within `min`..`max` (no `max`: "1 or more"); `hint` says what the number is for. */
export function parseWholeNumber(raw: string, flag: string, bounds: { min?: number; max?: number; hint?: string } = {}): number {
  const text = String(raw).trim();
  const min = bounds.min ?? 0;
  const range = bounds.max === undefined ? `${count(min)} or more` : `${count(min)} to ${count(bounds.max)}`;
  const n = Number(text);
  if (!/^\d+$/.test(text)) throw new UsageError(`${flag} "${raw}" is not a whole number.`, bounds.hint ?? `Expected a whole number, ${range}.`);
  if (!Number.isSafeInteger(n)) throw new UsageError(`${flag} "${raw}" is too large: expected ${range}.`, bounds.hint);
  if (n < min || (bounds.max !== undefined && n > bounds.max)) throw new UsageError(`${flag} "${raw}" is out of range: expected ${range}.`, bounds.hint);
  return n;
}

/** A plain decimal: optional sign, digits, optional fraction. No exponent, no hex, no thousands separators. */
export const DECIMAL_RE = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/** A decimal's significant digits and the power of ten of the last one: `-0.50` and `5e-1` are both `5`, -1. */
function digitsOf(text: string): { digits: string; exponent: number } {
  const m = /^[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  const whole = m?.[1] ?? '';
  const fraction = m?.[2] ?? '';
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  const trimmed = digits.replace(/0+$/, '');
  if (trimmed === '') return { digits: '', exponent: 0 };
  return { digits: trimmed, exponent: Number(m?.[3] ?? 0) - fraction.length + (digits.length - trimmed.length) };
}

/** The number a decimal text would be sent as when that is not the number written (more digits than a double holds, or too large). */
export function inexactDecimal(text: string): number | undefined {
  const n = Number(text);
  if (!Number.isFinite(n)) return n;
  const written = digitsOf(text);
  const sent = digitsOf(String(n));
  return written.digits === sent.digits && written.exponent === sent.exponent ? undefined : n;
}

/** Why a decimal text cannot be sent as written, in the words of every message about one; undefined when it can. */
export function decimalPrecisionProblem(text: string): string | undefined {
  const sent = inexactDecimal(text);
  if (sent === undefined) return undefined;
  if (!Number.isFinite(sent)) return 'is too large for a number';
  return `has more digits than a number holds exactly (at most 15 significant digits), and would be sent as ${sent}`;
}

/** Parses a rate such as `40/s`, `120/m` or `40` (per second) into requests per second. */
export function parseRate(raw: string, flag: string): number {
  const text = String(raw).trim();
  const m = /^(\d+(?:\.\d+)?)(?:\s*\/\s*(s|m|h))?$/i.exec(text);
  const per = m ? { s: 1, m: 60, h: 3600 }[((m[2] ?? 's') as string).toLowerCase() as 's' | 'm' | 'h'] : 0;
  const rate = m ? Number(m[1]) / per : Number.NaN;
  if (!m || !(rate > 0)) throw new UsageError(`${flag} "${raw}" is not a rate.`, 'Expected requests per unit of time, such as 40/s or 600/m.');
  return rate;
}

/** Refuses a text value no one typed on purpose (`textProblem`): a usage error naming `what` (a flag, an argument) and what to pass. */
export function checkText(what: string, value: string | undefined, hint: string): void {
  const problem = value === undefined ? undefined : textProblem(value);
  if (problem) throw new UsageError(`${what} ${problem}.`, hint);
}

// What a flag's value or an argument completes to, said where it is declared (enum values from the
// schema or constant the flag is checked against, never listed again); read only by `opcli __complete`.

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
