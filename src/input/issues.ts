/**
 * The one place zod's issues become messages a user can act on (field path + what was expected),
 * and the text checks every input passes: flags, --data bodies, prompts.
 */
import type { z } from 'zod';
import { ValidationError } from '../errors.js';
import { CURRENCY_CODES, type FieldIssue, fieldIssues } from '../schemas.js';
import { textProblem } from '../text/flag-text.js';
import { type FieldKind, fieldKinds } from './flags.js';
import { excerpt, quoteInput } from '../text/excerpt.js';

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

function explainEnum(kind: FieldKind, got: string): string {
  const values = kind.values ?? [];
  if (values.length === CURRENCY_CODES.length) {
    // A lower-case code is one letter case away from the right one: offer just that.
    const near = (CURRENCY_CODES as readonly string[]).includes(got.toUpperCase()) ? [got.toUpperCase()] : closest(got, CURRENCY_CODES);
    return `${excerpt(got)} is not a currency the API accepts${near.length ? `; did you mean ${orList(near)}?` : " (expected a three-letter code from the spec's list, such as USD)"}`;
  }
  const near = closest(got, values, 1);
  return `expected one of ${values.join(', ')}, got ${quoteInput(got)}${near.length ? `; did you mean ${near[0]}?` : ''}`;
}

/** Rewrites zod's issues into messages a user can act on: currencies, date-times, enums, unknown fields. */
function explainIssues(schema: z.ZodObject, value: Record<string, unknown>, error: z.ZodError): FieldIssue[] {
  const kinds = new Map(fieldKinds(schema).map((k) => [k.name, k]));
  const out: FieldIssue[] = [];
  for (const issue of error.issues) {
    const path = fieldIssues({ issues: [issue] } as z.ZodError)[0]?.path ?? '';
    const name = String(issue.path[0] ?? '');
    const kind = kinds.get(name);
    const got = name ? value[name] : undefined;
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const near = closest(key, [...kinds.keys()], 1);
        out.push({ path: excerpt(key, 60), message: `unknown field ${quoteInput(key, 60)}${near.length ? `; did you mean ${near[0]}?` : ''}` });
      }
    } else if (kind && issue.path.length === 1 && got === undefined && !kind.optional) {
      out.push({ path, message: `${name} is required (--${kind.flag})` });
    } else if (kind?.type === 'enum' && typeof got === 'string') {
      out.push({ path, message: explainEnum(kind, got) });
    } else if (kind?.format === 'datetime' && typeof got === 'string') {
      out.push({
        path,
        message: `expected an ISO 8601 date-time with a time zone such as 2024-05-01T12:00:00Z or 2024-05-01T14:00:00+02:00${kind.nullable ? ' (or null)' : ''}, got ${quoteInput(got)}`,
      });
    } else if ((kind?.type === 'number' || kind?.type === 'integer') && typeof got !== 'number' && got !== undefined) {
      out.push({ path, message: `expected a ${kind.type === 'integer' ? 'whole number' : 'number'}, got ${excerpt(JSON.stringify(got))}` });
    } else if (kind?.type === 'integer' && typeof got === 'number') {
      out.push({ path, message: `expected a whole number of 0 or more, got ${got}` });
    } else {
      out.push({
        path,
        message: `${issue.message}${got !== undefined && issue.path.length === 1 ? ` (got ${excerpt(JSON.stringify(got) ?? String(got))})` : ''}`,
      });
    }
  }
  return out;
}

/**
 * Text no one typed on purpose anywhere in a body (control characters, U+FFFD, blank), by field
 * path, into nested objects and lists. `mayBeEmpty` names the paths where "" is a value (a claim's
 * signature); elsewhere an empty string is refused too when `refuseEmpty` is set.
 */
export function garbledText(body: unknown, options: { refuseEmpty?: boolean; mayBeEmpty?: ReadonlySet<string> } = {}): FieldIssue[] {
  const out: FieldIssue[] = [];
  const visit = (value: unknown, path: string, key: string) => {
    if (typeof value === 'string') {
      if (value === '' && (!options.refuseEmpty || options.mayBeEmpty?.has(key))) return;
      const problem = textProblem(value);
      if (problem) out.push({ path, message: problem });
    } else if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) visit(v, `${path}.${i}`, key);
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) visit(v, path ? `${path}.${k}` : k, key ? `${key}.${k}` : k);
    }
  };
  visit(body, '', '');
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
