// Generates, at build time, plain JS predicates from the zod schemas of the files a one-off reads
// (the settings and credentials files, a page of GET /v1/orders and its query), so start-up can
// vouch for the common case without loading zod (ARCHITECTURE.md, "The fast path"; bench/startup.mjs).
// bin/build.mjs puts the result in the bundle in place of src/core/schema-checks.ts.
//
// A predicate says true only when it is certain the schema accepts the value; with `unchanged`
// (the default) also that zod returns it as it is: every key known, every type exact, no default to
// fill, no transform. A construct the generator does not know (a union, a transform, a refinement, a
// check it cannot reproduce) becomes `false`, so zod decides and names the problem.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The predicates the bundle gets: name, the schema's module and export, and whether unknown keys of a non-strict object may pass. */
export const CHECKS = [
  { name: 'settingsFile', module: './src/config/settings-schema.ts', schema: 'SettingsFile' },
  { name: 'credentialsFile', module: './src/config/credentials-schema.ts', schema: 'CredentialsFile' },
  // The pager returns the page body itself (not zod's output), so only acceptance counts: its records
  // (`edges`) are not part of the shell and pass as the server sent them.
  { name: 'ordersPageShell', module: './src/schemas.ts', schema: 'OrdersPageShell', acceptOnly: true },
  { name: 'ordersQuery', module: './src/schemas.ts', schema: 'OrdersQuery' },
];

const HELPERS = `const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
const isUrl = (v) => typeof v === 'string' && v === v.trim() && !/[\\t\\n\\r]/.test(v) && URL.canParse(v);
`;

/**
 * The source of a JS module exporting one predicate per entry of `schemas` ({ name: zod schema }).
 * `acceptOnly` names the predicates that may pass unknown keys of a non-strict object (zod strips
 * them, so the value is accepted but not returned unchanged).
 */
export function emitChecks(schemas, acceptOnly = []) {
  const lines = [];
  let count = 0;
  const memo = new Map();

  /** The name of a function checking one value against `schema`. */
  function fn(schema, loose) {
    const key = memo.get(schema)?.[loose ? 1 : 0];
    if (key) return key;
    const name = `c${count++}`;
    const pair = memo.get(schema) ?? [undefined, undefined];
    pair[loose ? 1 : 0] = name;
    memo.set(schema, pair);
    lines.push(`function ${name}(v) { return ${expr(schema, loose)}; }`);
    return name;
  }

  /** A JS expression over `v` that is true only when `schema` certainly accepts `v` (unchanged unless `loose`). */
  function expr(schema, loose) {
    const def = schema?._zod?.def;
    if (!def) return 'false';
    const checks = def.checks ?? [];
    switch (def.type) {
      case 'string': {
        if (def.coerce) return 'false';
        const parts = ["typeof v === 'string'"];
        if (def.format === 'url') {
          // z.url() without options returns a value trimming and tab/newline removal leave alone.
          if ('normalize' in def || 'hostname' in def || 'protocol' in def) return 'false';
          parts.push('isUrl(v)');
        } else if (def.format !== undefined) return 'false';
        for (const check of checks) {
          const c = check._zod.def;
          if (c.check === 'string_format' && c.format === 'regex' && c.pattern instanceof RegExp && !/[gy]/.test(c.pattern.flags)) {
            parts.push(`${new RegExp(c.pattern.source, c.pattern.flags)}.test(v)`);
          } else return 'false';
        }
        return parts.join(' && ');
      }
      case 'number': {
        // z.coerce.number() returns a finite number as it is.
        const parts = ["typeof v === 'number'", 'Number.isFinite(v)'];
        for (const check of checks) {
          const c = check._zod.def;
          if (c.check === 'number_format' && c.format === 'safeint') parts.push('Number.isSafeInteger(v)');
          else if ((c.check === 'greater_than' || c.check === 'less_than') && typeof c.value === 'number') {
            const op = c.check === 'greater_than' ? (c.inclusive ? '>=' : '>') : c.inclusive ? '<=' : '<';
            parts.push(`v ${op} ${c.value}`);
          } else return 'false';
        }
        return parts.join(' && ');
      }
      case 'boolean':
        return checks.length ? 'false' : "typeof v === 'boolean'";
      case 'null':
        return 'v === null';
      case 'unknown':
      case 'any':
        return checks.length ? 'false' : 'true';
      case 'enum':
      case 'literal': {
        const values = def.type === 'enum' ? Object.values(def.entries) : def.values;
        if (checks.length || !values.every((x) => typeof x === 'string' || typeof x === 'boolean' || Number.isFinite(x))) return 'false';
        return `(${values.map((x) => `v === ${JSON.stringify(x)}`).join(' || ') || 'false'})`;
      }
      case 'optional':
        return checks.length ? 'false' : `(v === undefined || ${fn(def.innerType, loose)}(v))`;
      case 'nullable':
        return checks.length ? 'false' : `(v === null || ${fn(def.innerType, loose)}(v))`;
      case 'default':
        // An absent value would be filled: only a present one is returned as it is.
        return checks.length ? 'false' : `(v !== undefined && ${fn(def.innerType, loose)}(v))`;
      case 'array':
        return checks.length ? 'false' : `(Array.isArray(v) && v.every(${fn(def.element, loose)}))`;
      case 'record': {
        const keyType = def.keyType?._zod?.def?.type;
        if (checks.length || keyType !== 'string') return 'false';
        // zod assigns each key of a record, so `__proto__` would become the prototype: left to zod.
        return `(isObject(v) && Object.keys(v).every((k) => k !== '__proto__' && ${fn(def.keyType, loose)}(k) && ${fn(def.valueType, loose)}(v[k])))`;
      }
      case 'object': {
        if (checks.length) return 'false';
        const shape = def.shape;
        const fields = Object.keys(shape).map((key) => [key, shape[key], shape[key]._zod.def.type === 'optional']);
        const catchall = def.catchall?._zod?.def?.type;
        // A non-strict object strips (or keeps) unknown keys: they may pass only where acceptance is all that counts.
        const unknownOk = loose && catchall !== 'never' && (catchall === undefined || catchall === 'unknown');
        const table = `t${count++}`;
        lines.push(`const ${table} = { ${fields.map(([key, field]) => `${JSON.stringify(key)}: ${fn(field, loose)}`).join(', ')} };`);
        const required = fields.filter(([, , optional]) => !optional).map(([key]) => `Object.hasOwn(v, ${JSON.stringify(key)})`);
        const known = `Object.keys(v).every((k) => (Object.hasOwn(${table}, k) ? ${table}[k](v[k]) : ${unknownOk}))`;
        return `(${['isObject(v)', ...required, known].join(' && ')})`;
      }
      default:
        return 'false';
    }
  }

  const exported = Object.entries(schemas).map(([name, schema]) => `export const ${name} = ${fn(schema, acceptOnly.includes(name))};`);
  return `// Generated by bin/gen-checks.mjs from the zod schemas; do not edit.\n${HELPERS}${lines.join('\n')}\n${exported.join('\n')}\n`;
}

/**
 * Loads the schemas named in CHECKS from src/ (bundled with esbuild into a temporary module, as
 * Node cannot import TypeScript) and returns the generated module's source.
 */
export async function generateChecks(root = process.cwd()) {
  const { build } = await import('esbuild');
  const dir = mkdtempSync(join(tmpdir(), 'opcli-gen-checks-'));
  try {
    const out = join(dir, 'schemas.mjs');
    await build({
      stdin: {
        contents: CHECKS.map((c) => `export { ${c.schema} as ${c.name} } from ${JSON.stringify(c.module)};`).join('\n'),
        resolveDir: root,
        loader: 'ts',
      },
      outfile: out,
      bundle: true,
      format: 'esm',
      platform: 'node',
      packages: 'bundle',
      banner: { js: "import{createRequire as __opcliRequire}from'node:module';const require=__opcliRequire(import.meta.url);" },
      logLevel: 'warning',
    });
    const schemas = await import(pathToFileURL(out).href);
    return emitChecks(
      Object.fromEntries(CHECKS.map((c) => [c.name, schemas[c.name]])),
      CHECKS.filter((c) => c.acceptOnly).map((c) => c.name),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
