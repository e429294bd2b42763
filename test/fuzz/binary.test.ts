/**
 * Bytes that are not UTF-8 can only reach argv through a real process: the built binary, run by a
 * shell that writes the raw byte, must refuse them like the in-process cases (U+FFFD) do.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { BIN, sandboxProfile, tempConfigDir } from '../helpers.js';
import { hashTree } from './harness.js';

let sandbox: Sandbox;
let dir: string;
let cleanup: () => void;

beforeAll(async () => {
  sandbox = await startSandbox({ orders: 1 });
  ({ dir, cleanup } = tempConfigDir());
  await sandboxProfile(sandbox, dir);
});
afterAll(async () => {
  cleanup();
  await sandbox.close();
});

test('a Latin-1 byte in a flag value is refused by the built binary: exit 2, the flag named, nothing sent', () => {
  const before = hashTree(dir);
  sandbox.resetLog();
  // printf writes the byte 0xE9 ("é" in Latin-1), which is not UTF-8 on its own.
  const r = spawnSync(
    'bash',
    ['-c', `"$NODE" "$BIN" variants create prod_1 --status ACTIVE --name "Caf$(printf '\\351')" --price 1 --inventory-quantity 1 --product-type SIMPLE`],
    {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE: process.execPath, BIN, OPCLI_CONFIG_DIR: dir, CI: 'true' },
      encoding: 'utf8',
    },
  );
  expect(r.status).toBe(2);
  expect(r.stderr).toMatch(/^Error: Invalid product variant: name: --name holds U\+FFFD/m);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(sandbox.requests).toHaveLength(0);
  expect(hashTree(dir)).toEqual(before);
});
