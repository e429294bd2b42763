/** Validation of a claim built from a row, flags or a file, with messages a support agent can act on. */
import { fieldIssues, type FieldIssue, OfflineClaim } from '../schemas.js';

/** zod's terse messages, said as what is expected. */
const FRIENDLY: Record<string, string> = {
  'Invalid ISO duration': 'expected an ISO 8601 duration such as P1Y, P6M or P90D',
  'Invalid ISO datetime': 'expected a date-time with a time zone, such as 2024-05-01T10:00:00Z',
  'Invalid URL': 'expected a URL such as https://example.com/image.jpg',
  'Invalid email address': 'expected an e-mail address such as alice@example.com',
};

/** Rewrites zod's "received undefined" into "missing". */
function humanize(issue: FieldIssue): FieldIssue {
  const m = /^Invalid input: expected (\w+), received undefined$/.exec(issue.message);
  if (m) return { path: issue.path, message: `missing: expected ${m[1] === 'string' ? 'a value' : `a ${m[1]}`}` };
  const known = FRIENDLY[issue.message];
  if (known)
    return {
      path: issue.path,
      message: issue.path === 'signature' && issue.message === 'Invalid URL' ? 'expected a URL of the signature image, or an empty string' : known,
    };
  if (issue.message.startsWith('Invalid option: expected one of'))
    return { path: issue.path, message: issue.message.replace('Invalid option: expected', 'expected') };
  return issue;
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
  if (!parsed.success) for (const issue of fieldIssues(parsed.error)) if (!seen.has(issue.path)) issues.push(humanize(issue));
  return { ok: false, issues };
}
