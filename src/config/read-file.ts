import type { z } from 'zod';
import { OpcliError } from '../errors.js';
import { fieldIssues } from '../schemas.js';

/**
 * Reads a conf-backed file through its schema. A file that is not JSON, or holds a value the schema
 * refuses, is reported with its path, the field and what to do, instead of failing deep inside.
 */
export function readConfFile<T>(conf: { readonly store: unknown; readonly path: string }, schema: z.ZodType<T>, what: string): T {
  let raw: unknown;
  try {
    raw = conf.store;
  } catch (error) {
    throw new OpcliError(`The ${what} file ${conf.path} cannot be read: ${(error as Error).message}.`, {
      hint: `Fix it by hand, or move it aside to start afresh: \`mv ${conf.path} ${conf.path}.bak\`.`,
      cause: error,
    });
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = fieldIssues(parsed.error)[0];
  throw new OpcliError(`The ${what} file ${conf.path} has an invalid value at ${issue?.path || '(top level)'}: ${issue?.message ?? 'invalid'}.`, {
    hint: `Correct it with \`opcli config set\`, edit the file, or move it aside: \`mv ${conf.path} ${conf.path}.bak\`.`,
  });
}

/** Constructs a conf store; conf parses the file at once, so a damaged one is reported here too. */
export function openConf<T>(make: () => T, path: string, what: string): T {
  try {
    return make();
  } catch (error) {
    throw new OpcliError(`The ${what} file ${path} cannot be read: ${(error as Error).message}.`, {
      hint: `Fix it by hand, or move it aside to start afresh: \`mv ${path} ${path}.bak\`.`,
      cause: error,
    });
  }
}
