/**
 * Generators of wrong files and environments: request bodies for every command with a `--data`
 * flag, batch rows for `claims file --from`, damaged settings and credentials files, and every
 * OPCLI_* variable the source reads. Each case is wrong in one way; the harness checks the promise.
 */
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { exampleClaim } from '../../src/commands/claims/template.js';
import type { FuzzContext } from './baselines.js';
import type { Case } from './harness.js';
import { isKnownOpen } from './known-open.js';

/** A file generator: draws a recipe, then builds the case. */
export interface FileGenerator {
  command: string;
  target: string;
  cls: string;
  arb: fc.Arbitrary<unknown>;
  build: (ctx: FuzzContext, draw: unknown) => Case;
}

const ROOT = join(import.meta.dirname, '..', '..');

/** A valid body for each command that takes `--data`, and the rest of its command line. */
export const DATA_BASELINES: Record<string, { body: (ctx: FuzzContext) => Record<string, unknown>; argv: string[]; amounts: string[] }> = {
  'orders update': {
    body: () => ({ sourceOrderNumber: '1001', currency: 'USD', total: 10.5, customerEmail: 'a@example.com' }),
    argv: ['orders', 'update', 'ord_000001'],
    amounts: ['total'],
  },
  'variants create': {
    body: () => ({ status: 'ACTIVE', name: 'Mug', price: 12.5, inventoryQuantity: 4, productType: 'SIMPLE', productImage: 'https://img.example/m.png' }),
    argv: ['variants', 'create', 'prod_fuzz'],
    amounts: ['price', 'inventoryQuantity'],
  },
  'claims file': {
    body: (ctx) => exampleClaim(ctx.sandbox.store.storeId) as unknown as Record<string, unknown>,
    argv: ['claims', 'file'],
    amounts: ['item.price'],
  },
};

/** Every leaf of a JSON value as a dotted path (array items by index). */
function leaves(value: unknown, prefix = ''): string[] {
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k));
  }
  return [prefix];
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(obj);
  const keys = path.split('.');
  let cur = copy as Record<string, unknown>;
  for (const k of keys.slice(0, -1)) cur = cur[k] as Record<string, unknown>;
  cur[keys.at(-1) as string] = value;
  return copy;
}

function getPath(obj: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((cur, k) => (cur as Record<string, unknown> | undefined)?.[k], obj);
}

/** A value of another JSON type than `v`. */
function otherType(v: unknown): unknown {
  if (typeof v === 'string') return 42;
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return 'yes';
  return true;
}

/** Bytes that are not UTF-8, as a file holds them when exported in another encoding. */
const NOT_UTF8 = Buffer.from([0x43, 0x61, 0x66, 0xe9]);

/** The generators over `--data` bodies, for every command of the tree with a `--data` flag. */
export function dataGenerators(commandsWithData: string[]): FileGenerator[] {
  const gens: FileGenerator[] = [];
  for (const command of commandsWithData) {
    const base = DATA_BASELINES[command];
    const argvOf = (extra: string[]) => [...(base?.argv ?? command.split(' ')), ...extra];
    const file = (ctx: FuzzContext) => join(ctx.inputs, 'data.json');
    const add = (
      target: string,
      cls: string,
      arb: fc.Arbitrary<unknown>,
      make: (ctx: FuzzContext, draw: unknown) => { bytes: Buffer | string; mentions: string[] },
    ) => {
      if (isKnownOpen(command, target, cls)) return;
      gens.push({
        command,
        target,
        cls,
        arb,
        build: (ctx, draw) => {
          const { bytes, mentions } = make(ctx, draw);
          const path = file(ctx);
          return {
            command,
            target,
            cls,
            code: 2,
            argv: command === 'api' ? ['api', 'POST', '/v1/claims/offline', '--data', `@${path}`] : argvOf(['--data', path]),
            mentions,
            prepare: () => writeFileSync(path, bytes),
          };
        },
      });
    };
    const whole = ['data.json', '--data'];
    add('--data', 'invalid-json', fc.integer({ min: 1, max: 30 }), (ctx, n) => {
      const text = JSON.stringify(base?.body(ctx) ?? { a: 1 });
      return { bytes: text.slice(0, Math.max(1, text.length - (n as number))), mentions: whole };
    });
    add('--data', 'empty-file', fc.constant(0), () => ({ bytes: '', mentions: whole }));
    add('--data', 'invalid-utf8', fc.constant(0), (ctx) => {
      // The bytes go inside a string the body already has, so the encoding is the one thing wrong.
      const body = base?.body(ctx) ?? { note: 'x' };
      const path = leaves(body).find((p) => typeof getPath(body, p) === 'string') as string;
      const [a, b] = JSON.stringify(setPath(body, path, '@@')).split('@@') as [string, string];
      return { bytes: Buffer.concat([Buffer.from(a), NOT_UTF8, Buffer.from(b)]), mentions: whole };
    });
    if (!base) continue;
    add('--data', 'not-an-object', fc.constantFrom('null', '[]', '42', '"text"', 'true'), (_ctx, v) => ({ bytes: v as string, mentions: whole }));
    add('--data', 'wrong-type', fc.nat(), (ctx, n) => {
      const body = base.body(ctx);
      const paths = leaves(body);
      const path = paths[(n as number) % paths.length] as string;
      return { bytes: JSON.stringify(setPath(body, path, otherType(getPath(body, path)))), mentions: [path, path.split('.').at(-1) as string] };
    });
    add('--data', 'negative', fc.integer({ min: 1, max: 10_000 }), (ctx, n) => {
      const body = base.body(ctx);
      const path = base.amounts[(n as number) % base.amounts.length] as string;
      return { bytes: JSON.stringify(setPath(body, path, -(n as number) / 100)), mentions: [path] };
    });
    add('--data', 'control', fc.tuple(fc.nat(), fc.constantFrom('\x1b[2J', '\x00', '\x07', '\uFFFD')), (ctx, draw) => {
      const [n, bad] = draw as [number, string];
      const body = base.body(ctx);
      const strings = leaves(body).filter((p) => typeof getPath(body, p) === 'string' && getPath(body, p) !== '');
      const path = strings[n % strings.length] as string;
      return { bytes: JSON.stringify(setPath(body, path, `${getPath(body, path)}${bad}`)), mentions: [path] };
    });
    add('--data', 'unknown-field', fc.constantFrom('pricee', 'Price', 'extra'), (ctx, k) => ({
      bytes: JSON.stringify({ ...base.body(ctx), [k as string]: 1 }),
      mentions: [k as string],
    }));
    add('--data', 'folder', fc.constant(0), () => ({ bytes: '', mentions: whole }));
  }
  // A folder given as --data: replace the file write by a folder.
  for (const g of gens.filter((x) => x.cls === 'folder')) {
    const build = g.build;
    g.build = (ctx, draw) => {
      const c = build(ctx, draw);
      const path = join(ctx.inputs, 'data.json');
      return {
        ...c,
        prepare: () => {
          rmSync(path, { recursive: true, force: true });
          mkdirSync(path);
        },
      };
    };
  }
  return gens;
}

/** JSONL and CSV batches for `claims file --from`, one row spoiled. */
export function batchGenerators(): FileGenerator[] {
  const gens: FileGenerator[] = [];
  const add = (target: string, cls: string, make: (ctx: FuzzContext, row: number) => { name: string; bytes: Buffer | string }) => {
    if (isKnownOpen('claims file', target, cls)) return;
    gens.push({
      command: 'claims file',
      target,
      cls,
      arb: fc.integer({ min: 1, max: 3 }),
      build: (ctx, draw) => {
        const row = draw as number;
        const { name, bytes } = make(ctx, row);
        const path = join(ctx.inputs, name);
        return {
          command: 'claims file',
          target,
          cls,
          // The journal lives beside the folders the harness watches: writing it is the batch's job.
          argv: ['claims', 'file', '--from', path, '--journal', join(ctx.inputs, '..', 'journal.jsonl')],
          // And so does the record of the claims it files (in the config folder otherwise).
          env: { OPCLI_RECORD_DIR: join(ctx.inputs, '..', 'records') },
          // Filing the valid rows leaves the record's witness (src/record/witness.ts) and the reader's
          // own index of the record (src/record/store.ts) in the config folder.
          writes: /^record-(witness|index)(\/|$)/,
          mentions: [`row ${row}`, `line ${row}`, `line ${row + 1}`, `:${row}`, `:${row + 1}`],
          // A batch files its valid rows and reports the others (exit 3, documented): the spoiled
          // row, and only it, must not be sent. A file that is not UTF-8 is refused whole before a
          // row is read (exit 2, nothing sent: docs/guides/batch-claims.md#what-the-reader-detects).
          code: cls === 'invalid-utf8' ? 2 : 3,
          sent: (bodies: string[]) =>
            cls === 'invalid-utf8'
              ? bodies.length === 0
                ? []
                : [`sent ${bodies.length} rows of a file that is not UTF-8, expected none`]
              : bodies.length === 2 && !bodies.some((b) => b.includes(`"SKU-${row}"`))
                ? []
                : [`sent ${bodies.length} rows, expected the 2 valid ones`],
          prepare: () => {
            mkdirSync(join(ctx.inputs, '..', 'records'), { recursive: true, mode: 0o700 });
            writeFileSync(path, bytes);
          },
        };
      },
    });
  };
  const rows = (ctx: FuzzContext) =>
    [1, 2, 3].map((i) => ({ ...exampleClaim(ctx.sandbox.store.storeId), signature: '', item: { ...exampleClaim('').item, sku: `SKU-${i}` } }));
  const jsonl = (ctx: FuzzContext, row: number, spoil: (r: Record<string, unknown>) => string | Buffer) =>
    Buffer.concat(rows(ctx).flatMap((r, i) => [i + 1 === row ? Buffer.from(spoil(r as never)) : Buffer.from(JSON.stringify(r)), Buffer.from('\n')]));
  add('jsonl row', 'invalid-json', (ctx, row) => ({ name: 'batch.jsonl', bytes: jsonl(ctx, row, (r) => JSON.stringify(r).slice(0, -5)) }));
  add('jsonl row', 'wrong-type', (ctx, row) => ({
    name: 'batch.jsonl',
    bytes: jsonl(ctx, row, (r) => JSON.stringify(setPath(r, 'item.price', '249.99 USD'))),
  }));
  add('jsonl row', 'negative', (ctx, row) => ({ name: 'batch.jsonl', bytes: jsonl(ctx, row, (r) => JSON.stringify(setPath(r, 'item.price', -5))) }));
  add('jsonl row', 'out-of-range', (ctx, row) => ({
    name: 'batch.jsonl',
    bytes: jsonl(ctx, row, (r) => JSON.stringify(setPath(r, 'shippingAddress.lat', 200))),
  }));
  add('jsonl row', 'invalid-utf8', (ctx, row) => ({
    name: 'batch.jsonl',
    bytes: jsonl(ctx, row, (r) => {
      const [a, b] = JSON.stringify(setPath(r, 'item.name', '@@')).split('@@') as [string, string];
      return Buffer.concat([Buffer.from(a), NOT_UTF8, Buffer.from(b)]);
    }),
  }));
  // CSV: the claim flattened to dotted columns, lists joined by `;` (the template's shape).
  const csvCell = (v: unknown) => {
    const text = Array.isArray(v) ? v.join(';') : String(v);
    return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  const csv = (ctx: FuzzContext, row: number, spoil: (cells: Map<string, string>) => void, raw?: Buffer) => {
    const flat = rows(ctx).map((r) => {
      const cells = new Map<string, string>();
      const walk = (v: unknown, prefix: string) => {
        if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) walk(x, prefix ? `${prefix}.${k}` : k);
        else cells.set(prefix, csvCell(v));
      };
      walk(r, '');
      return cells;
    });
    spoil(flat[row - 1] as Map<string, string>);
    const header = [...new Set(flat.flatMap((cells) => [...cells.keys()]))].filter((h) => h !== '__extra');
    const lines = flat.map((cells, i) => {
      return Buffer.from(header.map((h) => cells.get(h) ?? '').join(',') + (i + 1 === row && cells.has('__extra') ? `,${cells.get('__extra')}` : ''));
    });
    if (raw) {
      const [a, b] = (lines[row - 1] as Buffer).toString().split('@@') as [string, string];
      lines[row - 1] = Buffer.concat([Buffer.from(a), raw, Buffer.from(b)]);
    }
    return Buffer.concat([Buffer.from(`${header.join(',')}\n`), ...lines.flatMap((l) => [l, Buffer.from('\n')])]);
  };
  add('csv row', 'extra-column', (ctx, row) => ({ name: 'batch.csv', bytes: csv(ctx, row, (c) => c.set('__extra', 'surplus')) }));
  add('csv row', 'negative', (ctx, row) => ({ name: 'batch.csv', bytes: csv(ctx, row, (c) => c.set('item.price', '-5')) }));
  add('csv row', 'not-a-number', (ctx, row) => ({ name: 'batch.csv', bytes: csv(ctx, row, (c) => c.set('item.price', 'abc')) }));
  add('csv row', 'out-of-range', (ctx, row) => ({ name: 'batch.csv', bytes: csv(ctx, row, (c) => c.set('shippingAddress.lat', '200')) }));
  add('csv row', 'invalid-utf8', (ctx, row) => ({ name: 'batch.csv', bytes: csv(ctx, row, (c) => c.set('item.name', 'Mug @@'), NOT_UTF8) }));
  return gens;
}

/** Damaged settings and credentials files, read by a command that needs both. */
export function configGenerators(): FileGenerator[] {
  const gens: FileGenerator[] = [];
  const damage: Record<string, (path: string) => void> = {
    'invalid-json': (p) => writeFileSync(p, '{"profiles": {'),
    null: (p) => writeFileSync(p, 'null'),
    array: (p) => writeFileSync(p, '[]'),
    'wrong-type': (p) => writeFileSync(p, JSON.stringify({ profiles: 'default' })),
    'invalid-utf8': (p) => writeFileSync(p, Buffer.concat([Buffer.from('{"x": "'), NOT_UTF8, Buffer.from('"}')])),
    empty: (p) => writeFileSync(p, ''),
    folder: (p) => {
      rmSync(p, { force: true });
      mkdirSync(p);
    },
  };
  for (const file of ['settings.json', 'credentials.json']) {
    for (const [cls, spoil] of Object.entries(damage)) {
      if (isKnownOpen('orders list', file, cls)) continue;
      gens.push({
        command: 'orders list',
        target: file,
        cls,
        arb: fc.constant(0),
        build: () => ({
          command: 'orders list',
          target: file,
          cls,
          code: 2,
          argv: ['orders', 'list', '--size', '2'],
          mentions: [file],
          prepare: (dirs) => spoil(join(dirs.config, file)),
        }),
      });
    }
  }
  return gens;
}

/** Every OPCLI_* variable the source reads, found in the source so a new one is fuzzed too. */
export function envVariables(): string[] {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) for (const m of readFileSync(path, 'utf8').matchAll(/\bOPCLI_[A-Z][A-Z_]*[A-Z]\b/g)) names.add(m[0]);
    }
  };
  walk(join(ROOT, 'src'));
  // OPCLI_CONFIG_DIR is how the suite isolates itself; a wrong one is covered by the config cases.
  names.delete('OPCLI_CONFIG_DIR');
  // OPCLI_LEAN is not the user's: the bin shim sets it for the child it starts with heap flags.
  names.delete('OPCLI_LEAN');
  return [...names].sort();
}

/** Wrong values of each OPCLI_* variable, given to a command that reads them all. */
export function envGenerators(): FileGenerator[] {
  const gens: FileGenerator[] = [];
  const byName = (name: string): Record<string, fc.Arbitrary<string>> => {
    const common: Record<string, fc.Arbitrary<string>> = {
      blank: fc.constantFrom(' ', '\t'),
      control: fc.constantFrom('a\x1bb', 'x\x00y'),
      'invalid-utf8': fc.constant('caf\uFFFD'),
    };
    if (/TIMEOUT|RETRIES|DEADLINE|MAX_BODY|MAX_SMALL_BODY/.test(name)) return { ...common, 'not-a-number': fc.constantFrom('abc', '-1', '1e3', 'soon') };
    if (/URL/.test(name)) return { ...common, 'not-a-url': fc.constantFrom('not a url', 'javascript:alert(1)', 'ftp://x') };
    if (/PROFILE/.test(name)) return { ...common, 'bad-name': fc.constantFrom('../../etc/x', 'a/b', 'x'.repeat(65)) };
    return common;
  };
  for (const name of envVariables()) {
    for (const [cls, arb] of Object.entries(byName(name))) {
      if (isKnownOpen('orders list', name, cls)) continue;
      gens.push({
        command: 'orders list',
        target: name,
        cls,
        arb,
        build: (_ctx, value) => ({
          command: 'orders list',
          target: name,
          cls,
          code: 2,
          argv: ['orders', 'list', '--size', '2'],
          env: { [name]: value as string },
          mentions: [name],
        }),
      });
    }
  }
  return gens;
}
