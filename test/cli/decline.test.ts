/**
 * Answering no at a confirmation, at a real terminal: a plain sentence and exit 1, which a script or
 * a wrapper tells apart from Ctrl-C (130, "Cancelled."). docs/exit-codes.md.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { havePty, runInPty } from '../auth/pty.js';
import { runOpcli, tempConfigDir } from '../helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempConfigDir());
});
afterEach(() => cleanup());

describe.skipIf(!havePty)('a declined confirmation at a terminal', () => {
  test('profiles remove: "n" keeps the profile, says so plainly, exits 1', async () => {
    const env = { PATH: process.env.PATH ?? '', HOME: dir, OPCLI_CONFIG_DIR: join(dir, 'cfg') };
    expect((await runOpcli(['--profile', 'old', 'config', 'set', 'base-url', 'https://api.example'], { env })).code).toBe(0);
    const before = readFileSync(join(dir, 'cfg', 'settings.json'), 'utf8');
    const pty = runInPty(['profiles', 'remove', 'old'], env);
    await pty.waitFor('Remove profile "old"');
    pty.write('n');
    pty.write('\r');
    expect(await pty.exit).toBe(1);
    expect(pty.output()).toMatch(/Nothing was removed\.\r?\n/);
    expect(pty.output()).not.toMatch(/Error|Cancelled/);
    expect(readFileSync(join(dir, 'cfg', 'settings.json'), 'utf8')).toBe(before);
  });
});
