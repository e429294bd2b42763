/** Field selection of `--json [fields]` and `--jsonl [fields]`, gh's form (docs/json.md). */
import { UsageError } from './errors.js';
import { closest } from './field-issues.js';
import { safeLine } from '../text/safe.js';

/** A `--json [fields]` or `--jsonl [fields]` value as commander gives it. */
export type JsonFlag = boolean | string | undefined;

/** Whether every comma-separated name of `value` is one of `known` (to tell a field list from an argument). */
export function isFieldList(value: string, known: readonly string[]): boolean {
  const names = value.split(',').map((s) => s.trim());
  return names.length > 0 && names.every((n) => known.includes(n));
}

/**
 * The fields a `--json`/`--jsonl` value selects: undefined for every field (the flag alone), else the
 * names in the order given. An unknown or empty name is a usage error listing the valid ones (exit 2).
 */
export function jsonFields(value: JsonFlag, flag: string, known: readonly string[]): string[] | undefined {
  if (value === undefined || value === true || value === false) return undefined;
  const names = value.split(',').map((s) => s.trim());
  const valid = `Valid fields: ${known.join(', ')}.`;
  if (names.every((n) => n === '')) throw new UsageError(`${flag} was given an empty field list.`, `Leave the list out for every field. ${valid}`);
  const chosen: string[] = [];
  for (const name of names) {
    if (name === '') throw new UsageError(`${flag}: an empty field name in "${safeLine(value)}".`, valid);
    if (!known.includes(name)) {
      const near = closest(name, known, 1);
      throw new UsageError(`${flag}: unknown field "${safeLine(name)}"${near.length ? `; did you mean ${near[0]}?` : '.'}`, valid);
    }
    if (!chosen.includes(name)) chosen.push(name);
  }
  return chosen;
}

/** The record with only `fields` (in their order; an absent one as null), or the record itself when `fields` is undefined. */
export function pickFields<T>(record: T, fields: readonly string[] | undefined): T | Record<string, unknown> {
  if (!fields) return record;
  const source = record as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const name of fields) out[name] = source[name] ?? null;
  return out;
}
