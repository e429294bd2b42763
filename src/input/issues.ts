/**
 * A request body checked with its schema, the messages from the one place that words them
 * (src/core/field-issues.ts), and the text checks every input passes: flags, --data bodies, prompts.
 */
import type { z } from 'zod';
import { ValidationError } from '../core/errors.js';
import { bodyIssues, type FieldIssue } from '../core/field-issues.js';
import { textProblem } from '../text/safe.js';
import { fieldKinds } from './flags.js';

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

/** Validates an assembled body with its schema, throwing a ValidationError naming every bad field (`what`: "order"...). */
export function validateBody<S extends z.ZodObject>(schema: S, body: Record<string, unknown>, what: string, flagIssues: FieldIssue[] = []): z.infer<S> {
  const parsed = schema.safeParse(body);
  // A --data file can carry what a flag cannot: text no one typed on purpose.
  const early = [...flagIssues, ...garbledText(body).filter((i) => !flagIssues.some((f) => f.path === i.path))];
  if (parsed.success && early.length === 0) return parsed.data as z.infer<S>;
  const flagged = new Set(early.map((i) => i.path));
  const issues = [
    ...early,
    ...(parsed.success ? [] : bodyIssues(parsed.error, body, new Map(fieldKinds(schema).map((k) => [k.name, k]))).filter((i) => !flagged.has(i.path))),
  ];
  const first = issues[0];
  const message =
    issues.length === 1 && first
      ? `Invalid ${what}: ${first.path ? `${first.path}: ` : ''}${first.message}`
      : `Invalid ${what}: ${issues.length} fields need fixing`;
  throw new ValidationError(message, issues, 'Nothing was sent. Correct the fields and run the command again (see --help for every flag).');
}
