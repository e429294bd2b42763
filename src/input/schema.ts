/**
 * What a zod schema accepts, read through zod's public API (`schema.def`, the typed accessors), so
 * flags, coercion and messages are derived from the shared schemas and no resource shape is written
 * twice. One kind vocabulary for every command that takes fields: orders, variants, claims.
 */
import type { z } from 'zod';

/** What a field's schema accepts, as far as reading flags, cells and messages needs to know. */
export type FieldType = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'array';

/** One leaf field of an object schema. */
export interface SchemaField {
  /** Property names from the root: `['item', 'price']`. */
  path: string[];
  /** The path joined with dots: `item.price`; a top-level field's own name. */
  key: string;
  type: FieldType;
  /** The string format zod checks (`datetime`, `email`, `url`), if any. */
  format?: string;
  /** Allowed values of an enum. */
  values?: readonly string[];
  /** The field may be left out (optional or defaulted), on its own or through an object above it. */
  optional: boolean;
  nullable: boolean;
  /** The leaf schema, unwrapped, for checking one value (prompts, flags). */
  schema: z.ZodType;
}

/** The public definition of any zod schema: every schema carries `def.type`. */
type Def = { type: string; innerType?: z.ZodType; shape?: Record<string, z.ZodType>; entries?: Record<string, string> };

function defOf(schema: z.ZodType): Def {
  return schema.def as unknown as Def;
}

/** Turns `sourceOrderNumber` (or `phoneNumber2`) into `source-order-number`. */
export function kebab(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}

/** Peels optional, default and nullable wrappers off a schema. */
function unwrap(schema: z.ZodType): { inner: z.ZodType; optional: boolean; nullable: boolean } {
  let inner = schema;
  let optional = false;
  let nullable = false;
  for (;;) {
    const def = defOf(inner);
    if (def.type === 'optional' || def.type === 'default') optional = true;
    else if (def.type === 'nullable') nullable = true;
    else return { inner, optional, nullable };
    inner = def.innerType as z.ZodType;
  }
}

function typeOf(schema: z.ZodType): Pick<SchemaField, 'type' | 'format' | 'values'> {
  const def = defOf(schema);
  switch (def.type) {
    case 'number':
      return { type: (schema as z.ZodNumber).isInt ? 'integer' : 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'array':
      return { type: 'array' };
    case 'enum':
      return { type: 'enum', values: (schema as z.ZodEnum).options.map(String) };
    case 'string':
      return { type: 'string', format: (schema as z.ZodString).format ?? undefined };
    default:
      return { type: 'string' };
  }
}

/** Every leaf field of an object schema, in order; `nested` walks into object fields (`item.price`), else one is a field. */
export function schemaFields(schema: z.ZodObject, options: { nested?: boolean } = {}): SchemaField[] {
  const out: SchemaField[] = [];
  const walk = (shape: Record<string, z.ZodType>, path: string[], parentOptional: boolean) => {
    for (const [name, child] of Object.entries(shape)) {
      const { inner, optional, nullable } = unwrap(child);
      const here = [...path, name];
      const def = defOf(inner);
      if (options.nested && def.type === 'object') {
        walk(def.shape ?? {}, here, parentOptional || optional);
        continue;
      }
      out.push({ path: here, key: here.join('.'), ...typeOf(inner), optional: parentOptional || optional, nullable, schema: inner });
    }
  };
  walk(schema.shape as Record<string, z.ZodType>, [], false);
  return out;
}
