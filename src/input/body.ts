/** Request bodies from `--data` plus field flags, validated before anything is sent, and --dry-run. */
import type { z } from 'zod';
import type { Deps } from '../deps.js';
import { readDataObject } from './data.js';
import { type FieldKind, fieldsFromFlags } from './flags.js';
import { validateBody } from './issues.js';

/** Reads --data (a path, `-`, or an already read object), lays the flags over it and validates the result with `schema`. */
export async function buildBody<S extends z.ZodObject>(
  deps: Deps,
  schema: S,
  kinds: FieldKind[],
  data: string | Record<string, unknown> | undefined,
  flags: Record<string, unknown>,
  what: string,
  fixed: Record<string, unknown> = {},
): Promise<z.infer<S>> {
  const base = typeof data === 'string' ? await readDataObject(deps, data) : (data ?? {});
  const { fields, issues } = fieldsFromFlags(flags, kinds);
  return validateBody(schema, { ...base, ...fields, ...fixed }, what, issues);
}

/** Prints the request a command would send: method, path and body; nothing is sent. */
export function printDryRun(deps: Deps, method: string, path: string, body: unknown, json: boolean): void {
  if (json) deps.out(`${JSON.stringify({ method, path, body }, null, 2)}\n`);
  else deps.out(`${method} ${path}\nContent-Type: application/json\n\n${JSON.stringify(body, null, 2)}\n`);
  deps.err('Dry run: nothing was sent.\n');
}
