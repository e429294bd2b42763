/**
 * Field issues: what a zod error says, as dotted paths and messages. Apart from the schemas
 * (schemas.ts re-exports it) so that a reader that only formats an error does not load zod.
 */
import type { z } from 'zod';

export interface FieldIssue {
  /** Dotted field path such as `item.price` or `customer.email`; empty for the whole value. */
  path: string;
  message: string;
}

/** Turns a zod error into field issues with dotted paths; an unknown key is named in the path. */
export function fieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.flatMap((issue) => {
    const path = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: [...path, key].join('.'), message: 'unknown field: the API does not accept it' }));
    }
    return [{ path: path.join('.'), message: issue.message }];
  });
}
