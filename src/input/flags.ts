/** One flag per field of a request body (Order, ProductVariant), derived from the shared schemas. */
import type { Command } from 'commander';
import { completeValues, DECIMAL_RE, decimalPrecisionProblem } from '../core/flags.js';
import type { z } from 'zod';
import type { FieldIssue } from '../schemas.js';
import { textProblem } from '../text/safe.js';
import { kebab, type SchemaField, schemaFields } from './schema.js';
import { quoteInput } from '../text/excerpt.js';
import { expectedValue } from '../core/field-issues.js';

/** A top-level body field and the flag that sets it. */
export interface FieldKind extends SchemaField {
  /** The field's name in the body. */
  name: string;
  /** The kebab-case flag name, without dashes (a repeatable list's takes one item: `bundle-product-id`). */
  flag: string;
}

/** Flag names that are not the plain kebab-case of the field (repeatable arrays take one item). */
const SINGULAR: Record<string, string> = { bundleProductIds: 'bundle-product-id' };

/** Reads the kind of every top-level field of an object schema. */
export function fieldKinds(schema: z.ZodObject): FieldKind[] {
  return schemaFields(schema).map((field) => ({ ...field, name: field.key, flag: SINGULAR[field.key] ?? kebab(field.key) }));
}

/** A field flag's help: what the field takes, in the words of its error messages (core/field-issues.ts). */
function describe(kind: FieldKind): string {
  const takes = kind.type === 'boolean' ? 'true when given' : kind.type === 'array' ? 'repeat the flag for each item' : expectedValue(kind);
  // A plain text field ("a value") is told by its name alone.
  return `${kind.name}${takes.startsWith('a value') ? '' : `: ${takes}`}${kind.optional ? '' : ' (required)'}`;
}

/** Declares one flag per field on a command. */
export function addFieldFlags(cmd: Command, kinds: FieldKind[]): void {
  for (const kind of kinds) {
    if (kind.type === 'boolean') {
      cmd.option(`--${kind.flag}`, describe(kind));
      cmd.option(`--no-${kind.flag}`, `${kind.name}: false`);
    } else if (kind.type === 'array') {
      cmd.option(`--${kind.flag} <value>`, describe(kind), (v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
    } else {
      cmd.option(`--${kind.flag} <value>`, describe(kind));
      if (kind.values) completeValues(cmd, { [`--${kind.flag}`]: kind.values });
    }
  }
}

/** Turns `bundle-product-id` into `bundleProductId`, as commander names a flag's value. */
function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The flag values commander collected as body fields; one that cannot be converted becomes an issue naming the flag. */
export function fieldsFromFlags(flags: Record<string, unknown>, kinds: FieldKind[]): { fields: Record<string, unknown>; issues: FieldIssue[] } {
  const fields: Record<string, unknown> = {};
  const issues: FieldIssue[] = [];
  for (const kind of kinds) {
    const raw = flags[camel(kind.flag)];
    if (raw === undefined) continue;
    const flag = `--${kind.flag}`;
    if (kind.type === 'boolean') {
      fields[kind.name] = raw;
      continue;
    }
    if (kind.type === 'array') {
      const bad = (raw as string[]).map((item) => textProblem(item)).find((p) => p !== undefined);
      if (bad) issues.push({ path: kind.name, message: `${flag} ${bad}` });
      else fields[kind.name] = raw;
      continue;
    }
    const text = String(raw);
    const problem = textProblem(text);
    if (problem) {
      issues.push({ path: kind.name, message: `${flag} ${problem}` });
      continue;
    }
    if (kind.nullable && text === 'null') {
      fields[kind.name] = null;
      continue;
    }
    if (kind.type === 'number' || kind.type === 'integer') {
      const n = Number(text.trim());
      if (!DECIMAL_RE.test(text.trim()) || !Number.isFinite(n)) {
        const exponent = /^[+-]?(\d+(\.\d*)?|\.\d+)[eE]/.test(text.trim()) ? ' (write it without an exponent)' : '';
        issues.push({
          path: kind.name,
          message: `${flag} expects a finite ${kind.type === 'integer' ? 'whole number' : 'number'}, got ${quoteInput(text)}${exponent}`,
        });
        continue;
      }
      const precision = decimalPrecisionProblem(text.trim());
      if (precision) {
        issues.push({ path: kind.name, message: `${flag} ${quoteInput(text)} ${precision}: give it to the precision you mean` });
        continue;
      }
      fields[kind.name] = n;
      continue;
    }
    fields[kind.name] = text;
  }
  return { fields, issues };
}
