import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { profileSuite, runBinary } from '../helpers.js';

// Which bundle chunks a run of the built binary loads: a module resolve hook (registered with
// --import through NODE_OPTIONS, so the shim's child has it too) appends every resolved URL to a file.
// Rebuild with `node bin/build.mjs` after changing src/.
let sandbox: Sandbox;
let dir: string;
let hooks: string;

profileSuite((s) => ({ sandbox, dir } = s), { sandbox: { orders: 300 } });

beforeAll(() => {
  hooks = mkdtempSync(join(tmpdir(), 'opcli-loads-'));
  writeFileSync(
    join(hooks, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.OPCLI_TEST_LOADS, result.url + '\\n');
  return result;
}
`,
  );
  writeFileSync(
    join(hooks, 'register.mjs'),
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(hooks, 'hooks.mjs')).href)});\n`,
  );
});
afterAll(() => {
  rmSync(hooks, { recursive: true, force: true });
});

async function loads(
  argv: string[],
  name: string,
  extraEnv: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; chunks: string[]; builtins: string[] }> {
  const log = join(hooks, `${name}.log`);
  writeFileSync(log, '');
  const r = await runBinary(argv, {
    env: { OPCLI_CONFIG_DIR: dir, NODE_OPTIONS: `--import ${pathToFileURL(join(hooks, 'register.mjs')).href}`, OPCLI_TEST_LOADS: log, ...extraEnv },
  });
  const urls = readFileSync(log, 'utf8').split('\n');
  const chunks = urls.filter((u) => u.includes('/dist/')).map((u) => u.slice(u.lastIndexOf('/') + 1));
  return { code: r.code, stdout: r.stdout, chunks, builtins: [...new Set(urls.filter((u) => u.startsWith('node:')))] };
}

test('a one-off on a pipe prints TSV on undici (the one HTTP engine) without loading cli-table3', async () => {
  const r = await loads(['orders', 'list', '--size', '3'], 'pipe');
  expect(r.code).toBe(0);
  expect(r.stdout.split('\n')[0]).toMatch(/^ord_000001\t/);
  expect(r.chunks.some((c) => c.startsWith('main'))).toBe(true);
  expect(loaded(r.chunks, 'UND_ERR_SOCKET')).toBe(true);
  expect(r.chunks.filter((c) => /cli-table3/.test(c))).toEqual([]);
});

test('a long run under the shim carries its pages on undici, and still no cli-table3', async () => {
  const r = await loads(['orders', 'list', '--all', '--jsonl', '--size', '100'], 'long');
  expect(r.code).toBe(0);
  expect(r.stdout.trim().split('\n')).toHaveLength(300);
  // The bundle ran in the shim's child (the resolve hook reaches it through NODE_OPTIONS).
  expect(r.chunks).toContain('main.js');
  expect(loaded(r.chunks, 'UND_ERR_SOCKET')).toBe(true);
  expect(r.chunks.filter((c) => /cli-table3/.test(c))).toEqual([]);
});

/** Whether a loaded chunk holds `marker` (library code is recognised by a string it carries). */
function loaded(chunks: string[], marker: string): boolean {
  return chunks.some((c) => existsSync(join(DIST, c)) && readFileSync(join(DIST, c), 'utf8').includes(marker));
}
const DIST = new URL('../../dist/chunks/', import.meta.url).pathname;

test('a one-off --json on a pipe loads no width tables, no settings writer and no colour library', async () => {
  const r = await loads(['orders', 'list', '--size', '3', '--json'], 'json');
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toHaveLength(3);
  // string-width builds Unicode tables and an emoji regex at load; conf (the writer of settings and
  // credentials) is for writes; chalk only for a colour terminal.
  expect(loaded(r.chunks, 'RGI_Emoji')).toBe(false);
  expect(loaded(r.chunks, '_ensureDirectory')).toBe(false);
  expect(loaded(r.chunks, 'ansi256')).toBe(false);
  // The same markers are found where the libraries are used: a check that can fail.
  const write = await loads(['config', 'set', 'base-url', sandbox.url], 'write');
  expect(write.code).toBe(0);
  expect(loaded(write.chunks, '_ensureDirectory')).toBe(true);
});

test('a one-off --json whose settings, credentials and page pass the checks compiled from the schemas loads no zod', async () => {
  const r = await loads(['orders', 'list', '--size', '5', '--json'], 'zod');
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toHaveLength(5);
  // zod's chunk names its classes ("$ZodObject"); the checks compiled from the schemas (src/core/schema-checks.ts) vouched for
  // the files, the query and the page, so nothing needed the schemas.
  expect(loaded(r.chunks, '$ZodObject')).toBe(false);
  // A table reads every record's fields, so it checks them with OrderRecord: the marker is found where zod loads.
  const table = await loads(['orders', 'list', '--size', '5'], 'zod-table');
  expect(table.code).toBe(0);
  expect(loaded(table.chunks, '$ZodObject')).toBe(true);
});

test('a one-off with no CA file loads neither node:tls nor node:http (the trust module)', async () => {
  const r = await loads(['orders', 'list', '--size', '5', '--json'], 'trust');
  expect(r.code).toBe(0);
  // node:http's module facade loads Node's own fetch, node:tls its TLS layer: a third of a one-off's
  // CPU (bench/startup.mjs), for a sandbox reached over plain HTTP with no CA file named.
  expect(r.builtins).not.toContain('node:http');
  expect(r.builtins).not.toContain('node:tls');
  // Naming a CA file loads the trust module (here to say the file is missing): a check that can fail.
  const ca = await loads(['orders', 'list', '--size', '5', '--json'], 'trust-ca', { OPCLI_CA_FILE: join(dir, 'no-such-ca.pem') });
  expect(ca.code).toBe(2);
  expect(ca.builtins).toContain('node:tls');
});

/** A string only each command group's own code carries (a verb's description), so its chunk is recognised whatever the bundler names it. */
const GROUP_MARKERS = {
  claims: 'Print a CSV header and example row',
  giftcard: 'Issue store credit for a claim',
  sandbox: 'trigger-delay',
};

test('a one-off loads its own command group and no other', async () => {
  const r = await loads(['orders', 'list', '--size', '5', '--json'], 'entries');
  expect(r.code).toBe(0);
  for (const [group, marker] of Object.entries(GROUP_MARKERS)) expect(loaded(r.chunks, marker), group).toBe(false);
  // The marker is found where its group runs: a check that can fail.
  const claims = await loads(['claims', 'template', '--json'], 'entries-claims');
  expect(claims.code).toBe(0);
  expect(loaded(claims.chunks, GROUP_MARKERS.claims)).toBe(true);
});

test('the code every run needs is one file besides the entry, not a chunk per set of command groups using it', async () => {
  // Node's module loader costs about as much per file as per 10 KiB of code (bench/startup.mjs): the
  // build puts everything main.js imports statically (the CLI, commander, the config readers, the
  // HTTP client and undici) in one chunk (bin/merge-chunks.mjs). A run that loads no command group
  // (an unknown command) loads that chunk and the entry alone (a bundler's runtime helpers of under
  // 1 KiB aside, should they ever be a file of their own).
  const none = await loads(['no-such-command'], 'core-none');
  expect(none.code).toBe(2);
  const files = [...new Set(none.chunks)];
  const code = files.filter((c) => c !== 'main.js' && readFileSync(join(DIST, c), 'utf8').length > 1024);
  expect(files).toContain('main.js');
  expect(code).toHaveLength(1);
  expect(files.length).toBeLessThanOrEqual(3);
  expect(loaded(code, 'UND_ERR_SOCKET')).toBe(true);
  // A one-off loads the same files first, then its group's.
  const list = await loads(['orders', 'list', '--size', '5', '--json'], 'core');
  expect(list.code).toBe(0);
  expect(list.chunks.slice(0, files.length).sort()).toEqual([...files].sort());
});
