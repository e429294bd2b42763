/**
 * Schemas compiled by zod (`z.compile`) for a batch's hot path: a generated validator runs first
 * and, on any value it does not accept, zod's own parser decides, so answers and error messages are
 * the schema's own (test/claims/compiled-schema.test.ts holds them to it). A claim row checks ~5
 * times quicker (3.7 to 0.7 µs a parse). Compiling OfflineClaim costs ~8 ms, which one claim would
 * not win back, so only a batch compiles; a one-off keeps the plain schemas. (zod's compiler adds
 * 30 KB to zod's chunk, which a one-off loads only when it needs zod at all.)
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
