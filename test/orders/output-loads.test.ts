import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { runBinary, sandboxProfile, tempConfigDir } from '../helpers.js';

// Which bundle chunks a run of the built binary loads: a module resolve hook (registered with
// --import through NODE_OPTIONS, so the shim's child has it too) appends every resolved URL to a file.
// Rebuild with `node bin/build.mjs` after changing src/.
let sandbox: Sandbox;
let dir: string;
let cleanup: () => void;
let hooks: string;

beforeAll(async () => {
  sandbox = await startSandbox({ orders: 300 });
  ({ dir, cleanup } = tempConfigDir());
  await sandboxProfile(sandbox, dir);
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
afterAll(async () => {
  await sandbox.close();
  cleanup();
  rmSync(hooks, { recursive: true, force: true });
});

async function loads(argv: string[], name: string): Promise<{ code: number | null; stdout: string; chunks: string[] }> {
  const log = join(hooks, `${name}.log`);
  writeFileSync(log, '');
  const r = await runBinary(argv, {
    env: { OPCLI_CONFIG_DIR: dir, NODE_OPTIONS: `--import ${pathToFileURL(join(hooks, 'register.mjs')).href}`, OPCLI_TEST_LOADS: log },
  });
  const chunks = readFileSync(log, 'utf8')
    .split('\n')
    .filter((u) => u.includes('/dist/'))
    .map((u) => u.slice(u.lastIndexOf('/') + 1));
  return { code: r.code, stdout: r.stdout, chunks };
}

test('a one-off on a pipe prints TSV without loading cli-table3 or undici', async () => {
  const r = await loads(['orders', 'list', '--size', '3'], 'pipe');
  expect(r.code).toBe(0);
  expect(r.stdout.split('\n')[0]).toMatch(/^ord_000001\t/);
  expect(r.chunks.some((c) => c.startsWith('main'))).toBe(true);
  expect(r.chunks.filter((c) => /cli-table3|undici/.test(c))).toEqual([]);
});

test('a long run under the shim loads the bundled undici, and still no cli-table3', async () => {
  const r = await loads(['orders', 'list', '--all', '--jsonl', '--size', '100'], 'long');
  expect(r.code).toBe(0);
  expect(r.stdout.trim().split('\n')).toHaveLength(300);
  expect(r.chunks.some((c) => /^undici-/.test(c))).toBe(true);
  expect(r.chunks.filter((c) => /cli-table3/.test(c))).toEqual([]);
});
