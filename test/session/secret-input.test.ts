/**
 * Issue 27, smaller findings: a session token need not be an argument. `session verify` reads it from
 * `--stdin` or `--from-file`; as an argument it still works, with a warning naming the safer forms.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { profileSuite, runOpcli } from '../helpers.js';

let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

const verifies = () => sandbox.requests.filter((r) => r.path === '/v1/oauth/session/verify');
const WARNING =
  'Warning: the session token given as an argument is visible to other users in `ps` and stays in your shell history; next time use `--stdin` or `--from-file PATH`.';

profileSuite(
  (s) => {
    ({ sandbox, dir } = s);
    env = { ...s.env, OPCLI_BASE_URL: s.sandbox.url };
  },
  { sandbox: { orders: 1 }, profile: 'none' },
);

describe('session verify: the token from a file, or a warning for an argument', () => {
  test('--from-file verifies the token the file holds, with no warning; the sandbox received exactly it', async () => {
    const token = sandbox.mintSessionToken();
    const file = join(dir, 'token.txt');
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    const r = await runOpcli(['session', 'verify', '--from-file', file, '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).storeId).toBe(sandbox.store.storeId);
    expect(r.stderr).toBe('');
    expect(verifies()).toHaveLength(1);
    expect(JSON.parse(verifies()[0]?.body ?? '')).toEqual({ session_token: token });
  });

  test('a token as an argument is verified, with the warning; the token is never printed', async () => {
    const token = sandbox.mintSessionToken();
    const r = await runOpcli(['session', 'verify', token], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(WARNING);
    expect(r.stderr).not.toContain(token);
    expect(verifies()).toHaveLength(1);
  });

  test('a missing file, or a file and --stdin, are usage errors (exit 2) and nothing is sent', async () => {
    const missing = await runOpcli(['session', 'verify', '--from-file', join(dir, 'nope.txt')], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--from-file ${join(dir, 'nope.txt')} does not exist.`);
    const both = await runOpcli(['session', 'verify', '--stdin', '--from-file', join(dir, 'nope.txt')], { env, stdin: 'x' });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--stdin and --from-file were both given');
    const none = await runOpcli(['session', 'verify'], { env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--from-file PATH');
    expect(verifies()).toHaveLength(0);
  });
});
