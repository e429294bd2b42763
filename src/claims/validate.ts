/** Validation of a claim built from a row, flags or a file, with messages a support agent can act on. */
import { fieldIssues, fieldMessage, missingMessage } from '../core/field-issues.js';
import { type FieldIssue, OfflineClaim } from '../schemas.js';
import { excerpt, quoteInput } from '../text/excerpt.js';
import { CLAIM_FIELDS, FIELD_BY_KEY, getPath } from './fields.js';

/** The claim field a zod path points into: `item.images.0` is in `item.images`. */
function fieldAt(path: string) {
  const parts = path.split('.');
  for (let n = parts.length; n > 0; n--) {
    const field = FIELD_BY_KEY.get(parts.slice(0, n).join('.'));
    if (field) return field;
  }
  return undefined;
}

/** One zod issue as the messages a person reads (src/core/field-issues.ts): a missing object is its missing fields. */
function explain(value: unknown, issue: FieldIssue): FieldIssue[] {
  const field = fieldAt(issue.path);
  if (field?.type === 'array' && issue.path !== field.key) {
    // One item of a list (`item.images.0`): named by its place, with the schema's words.
    const item = getPath(value, issue.path.split('.'));
    return [{ path: issue.path, message: `${issue.message}, got ${typeof item === 'string' ? quoteInput(item) : excerpt(JSON.stringify(item) ?? '')}` }];
  }
  if (field && !issue.message.startsWith('unknown field')) {
    return [{ path: field.key, message: fieldMessage(field, getPath(value, field.path)) ?? issue.message }];
  }
  const below = issue.path ? CLAIM_FIELDS.filter((f) => f.required && f.key.startsWith(`${issue.path}.`)) : [];
  const here = getPath(value, issue.path.split('.'));
  if (below.length && here === undefined) return below.map((f) => ({ path: f.key, message: missingMessage(f) }));
  const fields = CLAIM_FIELDS.filter((f) => f.key.startsWith(`${issue.path}.`));
  if (fields.length && (here === null || typeof here !== 'object' || Array.isArray(here))) {
    // A JSON row with `"customer": "alice@example.com"`: the object's fields are what to write.
    const names = fields.map((f) => f.path.at(-1)).slice(0, 4);
    return [
      {
        path: issue.path,
        message: `expected an object of fields (${names.join(', ')}${fields.length > 4 ? ', …' : ''}), got ${excerpt(JSON.stringify(here) ?? '')}`,
      },
    ];
  }
  return [issue];
}

/**
 * Validates with the shared schema (a batch passes it compiled: compiled.ts); issues found
 * while reading the row come first, each path once.
 */
export function validateClaim(
  value: unknown,
  readIssues: FieldIssue[] = [],
  schema: typeof OfflineClaim = OfflineClaim,
): { ok: true; claim: OfflineClaim } | { ok: false; issues: FieldIssue[] } {
  const parsed = schema.safeParse(value);
  if (parsed.success && readIssues.length === 0) return { ok: true, claim: parsed.data };
  const seen = new Set(readIssues.map((i) => i.path));
  const issues = [...readIssues];
  if (!parsed.success) {
    for (const issue of fieldIssues(parsed.error).flatMap((i) => explain(value, i))) {
      if (seen.has(issue.path)) continue;
      seen.add(issue.path);
      issues.push(issue);
    }
  }
  return { ok: false, issues };
}
