/**
 * Flags for the fields of a request body (Order, ProductVariant), derived from the shared zod
 * schemas so no resource shape is written twice, plus readable validation of the assembled body.
 */
import type { Command } from 'commander';
import type { z } from 'zod';
import { UsageError, ValidationError } from '../errors.js';
import { CURRENCY_CODES, type FieldIssue, fieldIssues } from '../schemas.js';
import { textProblem } from '../text/flag-text.js';

/** What a field's schema accepts, as far as flag parsing needs to know. */
export interface FieldKind {
  name: string;
  /** kebab-case flag name without dashes. */
  flag: string;
  type: 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'array';
  format?: string;
  values?: string[];
  optional: boolean;
  nullable: boolean;
}

type AnySchema = z.ZodType & { _zod: { def: Record<string, unknown> & { type: string } } };

/** Turns `sourceOrderNumber` into `source-order-number`. */
export function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Turns `bundle-product-id` into `bundleProductId`, as commander does. */
function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Reads the kind of every field of an object schema. */
export function fieldKinds(schema: z.ZodObject): FieldKind[] {
  return Object.entries(schema.shape).map(([name, s]) => {
    let cur = s as unknown as AnySchema;
    let optional = false;
    let nullable = false;
    for (;;) {
      const t = cur._zod.def.type;
      if (t === 'optional') optional = true;
      else if (t === 'nullable') nullable = true;
      else break;
      cur = cur._zod.def.innerType as AnySchema;
    }
    const def = cur._zod.def;
    let type: FieldKind['type'] = 'string';
    let values: string[] | undefined;
    if (def.type === 'number') {
      const checks = (def.checks as { _zod: { def: { check?: string; format?: string } } }[] | undefined) ?? [];
      type = checks.some((c) => c._zod.def.format === 'safeint' || c._zod.def.check === 'number_format') ? 'integer' : 'number';
    } else if (def.type === 'boolean') type = 'boolean';
    else if (def.type === 'array') type = 'array';
    else if (def.type === 'enum') {
      type = 'enum';
      values = Object.keys(def.entries as Record<string, unknown>);
    }
    return { name, flag: kebab(name), type, format: def.format as string | undefined, values, optional, nullable };
  });
}

/** Flag names that are not the plain kebab-case of the field (repeatable arrays take one item). */
const SINGULAR: Record<string, string> = { bundleProductIds: 'bundle-product-id' };

function flagName(kind: FieldKind): string {
  return SINGULAR[kind.name] ?? kind.flag;
}

function describe(kind: FieldKind): string {
  const req = kind.optional ? '' : ' (required)';
  switch (kind.type) {
    case 'number':
      return `${kind.name}: a number${req}`;
    case 'integer':
      return `${kind.name}: a whole number of 0 or more${req}`;
    case 'boolean':
      return `${kind.name}: true when given${req}`;
    case 'array':
      return `${kind.name}: repeat the flag for each item${req}`;
    case 'enum':
      return kind.values && kind.values.length <= 10
        ? `${kind.name}: one of ${kind.values.join(', ')}${req}`
        : `${kind.name}: a ${kind.values?.[0]?.length === 3 ? 'three-letter code such as USD' : 'listed value'}${req}`;
    default:
      if (kind.format === 'datetime') return `${kind.name}: ISO 8601 date-time with a zone, e.g. 2024-05-01T12:00:00Z${kind.nullable ? ', or null' : ''}${req}`;
      if (kind.format === 'email') return `${kind.name}: an e-mail address${req}`;
      return `${kind.name}${req}`;
  }
}

/** Declares one flag per field on a command. */
export function addFieldFlags(cmd: Command, kinds: FieldKind[]): void {
  for (const kind of kinds) {
    const name = flagName(kind);
    if (kind.type === 'boolean') {
      cmd.option(`--${name}`, describe(kind));
      cmd.option(`--no-${name}`, `${kind.name}: false`);
    } else if (kind.type === 'array') {
      cmd.option(`--${name} <value>`, describe(kind), (v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
    } else {
      cmd.option(`--${name} <value>`, describe(kind));
    }
  }
}

/** A plain decimal number, refusing '', 'Infinity', '0x10' and exponents ('1e3' is a typo more often than a price). */
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/**
 * Converts the flag values commander collected into body fields; a value that cannot be converted
 * becomes an issue naming the flag.
 */
export function fieldsFromFlags(flags: Record<string, unknown>, kinds: FieldKind[]): { fields: Record<string, unknown>; issues: FieldIssue[] } {
  const fields: Record<string, unknown> = {};
  const issues: FieldIssue[] = [];
  for (const kind of kinds) {
    // commander names a flag's value after the flag: --bundle-product-id → bundleProductId.
    const raw = flags[camel(flagName(kind))];
    if (raw === undefined) continue;
    const flag = `--${flagName(kind)}`;
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
      if (!NUMBER.test(text.trim()) || !Number.isFinite(n)) {
        const exponent = /^[+-]?(\d+(\.\d*)?|\.\d+)[eE]/.test(text.trim()) ? ' (write it without an exponent)' : '';
        issues.push({ path: kind.name, message: `${flag} expects a finite ${kind.type === 'integer' ? 'whole number' : 'number'}, got "${text}"${exponent}` });
        continue;
      }
      fields[kind.name] = n;
      continue;
    }
    fields[kind.name] = text;
  }
  return { fields, issues };
}

/** Levenshtein distance between two short strings. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0] as number;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j] as number;
      prev[j] = Math.min(up + 1, (prev[j - 1] as number) + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length] as number;
}

/** Codes used most, offered first among equally close suggestions. */
const COMMON = ['USD', 'EUR', 'GBP', 'CAD', 'AUD', 'JPY', 'CHF', 'CNY', 'SEK', 'NZD', 'MXN', 'INR', 'BRL'];

/** The closest of `candidates` to `value` (at most `max`, distance at most 2), common ones first. */
export function closest(value: string, candidates: readonly string[], max = 3): string[] {
  const upper = value.toUpperCase();
  const scored = candidates
    .map((c) => ({ c, d: editDistance(upper, c.toUpperCase()) }))
    .filter((x) => x.d <= Math.max(1, Math.min(2, Math.floor(value.length / 2))));
  const rank = (c: string) => {
    const i = COMMON.indexOf(c);
    return i < 0 ? COMMON.length : i;
  };
  scored.sort((x, y) => x.d - y.d || rank(x.c) - rank(y.c) || x.c.localeCompare(y.c));
  return scored.slice(0, max).map((x) => x.c);
}

function orList(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

/** Rewrites zod's issues into messages a user can act on: currencies, date-times, enums, unknown fields. */
export function explainIssues(schema: z.ZodObject, value: Record<string, unknown>, error: z.ZodError): FieldIssue[] {
  const kinds = new Map(fieldKinds(schema).map((k) => [k.name, k]));
  const out: FieldIssue[] = [];
  for (const [i, issue] of error.issues.entries()) {
    const path = fieldIssues({ issues: [issue] } as z.ZodError)[0]?.path ?? '';
    const name = String(issue.path[0] ?? '');
    const kind = kinds.get(name);
    const got = name ? value[name] : undefined;
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const near = closest(key, [...kinds.keys()], 1);
        out.push({ path: key, message: `unknown field "${key}"${near.length ? `; did you mean ${near[0]}?` : ''}` });
      }
      continue;
    }
    if (kind && issue.path.length === 1 && got === undefined && !kind.optional) {
      out.push({ path, message: `${name} is required (--${flagName(kind)})` });
      continue;
    }
    if (kind?.type === 'enum' && typeof got === 'string' && kind.values) {
      if (kind.values === (CURRENCY_CODES as readonly string[]) || kind.values.length === CURRENCY_CODES.length) {
        // A lower-case code is one letter case away from the right one: offer just that.
        const near = (CURRENCY_CODES as readonly string[]).includes(got.toUpperCase()) ? [got.toUpperCase()] : closest(got, CURRENCY_CODES);
        out.push({ path, message: `${got} is not a currency the API accepts${near.length ? `; did you mean ${orList(near)}?` : ' (expected a three-letter code from the spec\'s list, such as USD)'}` });
      } else {
        const near = closest(got, kind.values, 1);
        out.push({ path, message: `expected one of ${kind.values.join(', ')}, got "${got}"${near.length ? `; did you mean ${near[0]}?` : ''}` });
      }
      continue;
    }
    if (kind?.format === 'datetime' && typeof got === 'string') {
      out.push({
        path,
        message: `expected an ISO 8601 date-time with a time zone such as 2024-05-01T12:00:00Z or 2024-05-01T14:00:00+02:00${kind.nullable ? ' (or null)' : ''}, got "${got}"`,
      });
      continue;
    }
    if ((kind?.type === 'number' || kind?.type === 'integer') && typeof got !== 'number' && got !== undefined) {
      out.push({ path, message: `expected a ${kind.type === 'integer' ? 'whole number' : 'number'}, got ${JSON.stringify(got)}` });
      continue;
    }
    if (kind?.type === 'integer' && typeof got === 'number') {
      out.push({ path, message: `expected a whole number of 0 or more, got ${got}` });
      continue;
    }
    out.push({ path, message: `${issue.message}${got !== undefined && issue.path.length === 1 ? ` (got ${JSON.stringify(got)})` : ''}` });
    void i;
  }
  return out;
}

/** Control characters or U+FFFD in the body's strings (top level and lists), by field path. */
function garbledText(body: Record<string, unknown>): FieldIssue[] {
  const out: FieldIssue[] = [];
  const visit = (value: unknown, path: string) => {
    if (typeof value === 'string' && value !== '') {
      const problem = textProblem(value);
      if (problem) out.push({ path, message: problem });
    } else if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) visit(v, `${path}.${i}`);
    }
  };
  for (const [key, value] of Object.entries(body)) visit(value, key);
  return out;
}

/**
 * Validates an assembled body with its schema; throws a ValidationError naming every bad field.
 * `what` names the resource in the message ("order", "product variant").
 */
export function validateBody<S extends z.ZodObject>(schema: S, body: Record<string, unknown>, what: string, flagIssues: FieldIssue[] = []): z.infer<S> {
  const parsed = schema.safeParse(body);
  // A --data file can carry what a flag cannot: text no one typed on purpose.
  const early = [...flagIssues, ...garbledText(body).filter((i) => !flagIssues.some((f) => f.path === i.path))];
  if (parsed.success && early.length === 0) return parsed.data as z.infer<S>;
  const flagged = new Set(early.map((i) => i.path));
  const issues = [...early, ...(parsed.success ? [] : explainIssues(schema, body, parsed.error).filter((i) => !flagged.has(i.path)))];
  const first = issues[0];
  const message =
    issues.length === 1 && first
      ? `Invalid ${what}: ${first.path ? `${first.path}: ` : ''}${first.message}`
      : `Invalid ${what}: ${issues.length} fields need fixing`;
  throw new ValidationError(message, issues, 'Nothing was sent. Correct the fields and run the command again (see --help for every flag).');
}

/** Parses the text of a --data document: a JSON object. */
export function parseDataDocument(text: string, source: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${source} is not valid JSON: ${(error as Error).message}`, 'Pass a JSON object such as {"currency":"USD"}.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError(`${source} must hold a JSON object, not ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}.`, 'Pass a JSON object such as {"currency":"USD"}.');
  }
  return value as Record<string, unknown>;
}
