/**
 * Issue 27, smaller findings: secrets never need to be arguments. `config set` reads a value from
 * `--stdin` or `--from-file`; a secret given as an argument still works, with a warning that names
 * the safer forms; the secret itself is never printed.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, runOpcli, tempConfigDir } from '../helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempConfigDir());
});
afterEach(() => cleanup());

const cfg = () => join(dir, 'cfg');
const env = () => ({ OPCLI_CONFIG_DIR: cfg() });
const SECRET = 'svc_secret_Fr0mF1leXy7q';
const stored = () => (existsSync(join(cfg(), 'credentials.json')) ? readFileSync(join(cfg(), 'credentials.json'), 'utf8') : '');
const WARNING = 'given as an argument is visible to other users in `ps` and stays in your shell history; next time use `--stdin` or `--from-file PATH`';

/** A file holding `text`, with `mode`. */
function file(name: string, text: string, mode = 0o600): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

describe('config set: a secret from a file or standard input, a warning for an argument', () => {
  it('--from-file stores the secret (one trailing line break dropped) with no warning and never prints it', async () => {
    const set = await runOpcli(['config', 'set', 'client-secret', '--from-file', file('secret', `${SECRET}\n`)], { env: env() });
    expect(set.code).toBe(0);
    expect(set.stderr).toBe('Creating profile "default".\nSet client-secret for profile "default".\n');
    expect(set.stdout).toBe('');
    expect(JSON.parse(stored()).profiles.default.clientSecret).toBe(SECRET);
  });

  it('a secret as an argument is stored, with the warning on stderr naming --stdin and --from-file; a plain setting gets none', async () => {
    const set = await runOpcli(['config', 'set', 'client-secret', SECRET], { env: env() });
    expect(set.code).toBe(0);
    expect(set.stderr).toContain(`Warning: the client-secret value ${WARNING}.`);
    expect(set.stderr + set.stdout).not.toContain(SECRET);
    expect(JSON.parse(stored()).profiles.default.clientSecret).toBe(SECRET);
    const token = await runOpcli(['config', 'set', 'provider-token', 'gly_argument_token_123'], { env: env() });
    expect(token.stderr).toContain(`Warning: the provider-token value ${WARNING}.`);
    const plain = await runOpcli(['config', 'set', 'base-url', 'https://api.example.com'], { env: env() });
    expect(plain.code).toBe(0);
    expect(plain.stderr).not.toContain('Warning');
  });

  it('a file other users can read is used, with a warning naming its mode and the fix', async () => {
    const path = file('loose', SECRET, 0o644);
    const set = await runOpcli(['config', 'set', 'client-secret', '--from-file', path], { env: env() });
    expect(set.code).toBe(0);
    expect(set.stderr).toContain(`Warning: ${path} can be read by every user (mode 0644); \`chmod 600 ${path}\` keeps the secret yours.`);
    const group = file('group', SECRET, 0o640);
    expect((await runOpcli(['config', 'set', 'client-secret', '--from-file', group], { env: env() })).stderr).toContain('can be read by its group (mode 0640)');
  });

  it('a pipe works as the file: bash process substitution <(…) with the real binary', () => {
    const run = spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" config set client-secret --from-file <(printf '%s\\n' "$S")`], {
      env: { ...env(), PATH: process.env.PATH, HOME: dir, S: SECRET },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('Creating profile "default".\nSet client-secret for profile "default".\n');
    expect(run.status).toBe(0);
    expect(JSON.parse(stored()).profiles.default.clientSecret).toBe(SECRET);
  });

  it.each([
    ['a missing file', (d: string) => ['--from-file', join(d, 'nope')], /--from-file .*nope does not exist\./],
    ['a folder', (d: string) => ['--from-file', d], /--from-file .* is a folder, not a file\./],
    ['an argument and --stdin', () => [SECRET, '--stdin'], /Give the client-secret value one way: an argument and --stdin were both given\./],
    ['--stdin and --from-file', (d: string) => ['--stdin', '--from-file', join(d, 'x')], /--stdin and --from-file were both given/],
  ])('%s: exit 2 naming the flag, nothing stored', async (_name, args, message) => {
    const set = await runOpcli(['config', 'set', 'client-secret', ...args(dir)], { env: env(), stdin: SECRET });
    expect(set.code).toBe(2);
    expect(set.stderr).toMatch(message);
    expect(set.stderr).not.toContain(SECRET);
    expect(stored()).toBe('');
  });

  it('a file too big to be one value is refused', async () => {
    const set = await runOpcli(['config', 'set', 'client-secret', '--from-file', file('big', 'x'.repeat(70_000))], { env: env() });
    expect(set.code).toBe(2);
    expect(set.stderr).toMatch(/is 70000 bytes: too big to be one value/);
    expect(stored()).toBe('');
  });

  it('no value and nobody to ask: exit 2 naming --stdin and --from-file for a secret', async () => {
    mkdirSync(cfg(), { mode: 0o700 });
    const set = await runOpcli(['config', 'set', 'client-secret'], { env: env() });
    expect(set.code).toBe(2);
    expect(set.stderr).toContain('opcli config set client-secret --stdin');
    expect(set.stderr).toContain('opcli config set client-secret --from-file PATH');
  });
});
