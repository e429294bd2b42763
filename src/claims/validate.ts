/** Validation of a claim built from a row, flags or a file, with messages a support agent can act on. */
import { fieldIssues, type FieldIssue, OfflineClaim } from '../schemas.js';

/** Rewrites zod's "received undefined" into "missing". */
function humanize(issue: FieldIssue): FieldIssue {
  const m = /^Invalid input: expected (\w+), received undefined$/.exec(issue.message);
  if (m) return { path: issue.path, message: `missing: expected ${m[1] === 'string' ? 'a value' : `a ${m[1]}`}` };
  if (issue.message.startsWith('Invalid option: expected one of')) return { path: issue.path, message: issue.message.replace('Invalid option: expected', 'expected') };
  return issue;
}

/** Validates with the shared schema; issues found while reading the row come first, each path once. */
export function validateClaim(value: unknown, readIssues: FieldIssue[] = []): { ok: true; claim: OfflineClaim } | { ok: false; issues: FieldIssue[] } {
  const parsed = OfflineClaim.safeParse(value);
  if (parsed.success && readIssues.length === 0) return { ok: true, claim: parsed.data };
  const seen = new Set(readIssues.map((i) => i.path));
  const issues = [...readIssues];
  if (!parsed.success) for (const issue of fieldIssues(parsed.error)) if (!seen.has(issue.path)) issues.push(humanize(issue));
  return { ok: false, issues };
}
