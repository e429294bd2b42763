import { expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { profileSuite, runBinary } from '../helpers.js';

// The built binary (dist/ via bin/opcli.cjs): bundling must not break the HTTP core or the lazy
// command chunks. Rebuild with `node bin/build.mjs` after changing src/.
let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

profileSuite((s) => ({ sandbox, dir, env } = s), { sandbox: { orders: 600 } });

test('built binary: orders list --all --jsonl streams every order once', async () => {
  const r = await runBinary(['orders', 'list', '--all', '--jsonl', '--size', '250'], { env });
  expect(r.stderr).toContain('600 of 600 orders in 3 pages');
  expect(r.code).toBe(0);
  const ids = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).sourceOrderId);
  expect(ids).toHaveLength(600);
  expect(new Set(ids).size).toBe(600);
  expect(ids.at(-1)).toBe('ord_000600');
});

test('built binary: session verify --stdin needs only the base URL', async () => {
  const r = await runBinary(['session', 'verify', '--stdin', '--json'], {
    env: { OPCLI_CONFIG_DIR: `${dir}/empty`, OPCLI_BASE_URL: sandbox.url },
    input: sandbox.mintSessionToken(),
  });
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout).installationId).toBe(sandbox.store.installationId);
});

test('built binary: an invalid order update exits 2 and sends nothing', async () => {
  const before = sandbox.requests.length;
  const r = await runBinary(['orders', 'update', 'ord_000001', '--source-order-number', '#1', '--currency', 'USX'], { env });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('USX is not a currency the API accepts; did you mean USD');
  expect(sandbox.requests.length).toBe(before);
});
