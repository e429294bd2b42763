/** Request bodies from `--data` plus field flags, validated before anything is sent (--dry-run prints in src/commands/body-verb.ts). */
import type { z } from 'zod';
import { type DataPorts, readDataObject } from './data.js';
import { type FieldKind, fieldsFromFlags } from './flags.js';
import { validateBody } from './issues.js';

/** Reads --data (a path, `-`, or an already read object), lays the flags over it and validates the result with `schema`. */
export async function buildBody<S extends z.ZodObject>(
  deps: DataPorts,
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
