/**
 * Schemas compiled by zod (`z.compile`) for a batch's hot path: a generated validator runs first
 * and, on any value it does not accept, zod's own parser decides, so answers and error messages are
 * the schema's own (test/claims/compiled-schema.test.ts holds them to it). A claim row checks
 * several times quicker, but compiling costs more than one claim would win back
 * (docs/benchmarks.md#figures-behind-the-code), so only a batch compiles; a one-off keeps the plain
 * schemas. (zod's compiler adds 30 KB to zod's chunk, which a one-off loads only when it needs zod
 * at all.)
 */
import { compile } from 'zod';

const COMPILED = new WeakMap<object, unknown>();

/** The schema compiled, built once per schema. */
export function compiled<T extends object>(schema: T): T {
  let fast = COMPILED.get(schema) as T | undefined;
  if (!fast) {
    fast = compile(schema as Parameters<typeof compile>[0]) as T;
    COMPILED.set(schema, fast);
  }
  return fast;
}
