import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runOpcli, scriptedPrompter, tempConfigDir } from '../helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempConfigDir());
});
afterEach(() => cleanup());

const env = () => ({ OPCLI_CONFIG_DIR: dir });
const SECRET = 'svc_secret_Zq9xT2pLw8';

describe('config set/get/unset/list', () => {
  it('round-trips settings and keeps files 0600 in a 0700 folder', async () => {
    expect((await runOpcli(['config', 'set', 'base-url', 'https://api.example.com'], { env: env() })).code).toBe(0);
    expect((await runOpcli(['config', 'set', 'scopes', 'read_orders, write_orders'], { env: env() })).code).toBe(0);
    const get = await runOpcli(['config', 'get', 'base-url'], { env: env() });
    expect(get).toMatchObject({ code: 0, stdout: 'https://api.example.com\n' });
    expect((await runOpcli(['config', 'get', 'scopes'], { env: env() })).stdout).toBe('read_orders,write_orders\n');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'settings.json')).mode & 0o777).toBe(0o600);
    const unset = await runOpcli(['config', 'unset', 'base-url'], { env: env() });
    expect(unset.code).toBe(0);
    const missing = await runOpcli(['config', 'get', 'base-url'], { env: env() });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('base-url is not set');
  });

  it('takes a secret on stdin, stores it apart from settings, and masks it everywhere', async () => {
    const set = await runOpcli(['config', 'set', 'client-secret', '--stdin'], { env: env(), stdin: `${SECRET}\n` });
    expect(set.code).toBe(0);
    expect(readFileSync(join(dir, 'credentials.json'), 'utf8')).toContain(SECRET);
    expect(existsSync(join(dir, 'settings.json')) ? readFileSync(join(dir, 'settings.json'), 'utf8') : '').not.toContain(SECRET);
    expect(statSync(join(dir, 'credentials.json')).mode & 0o777).toBe(0o600);
    const list = await runOpcli(['config', 'list', '--json'], { env: env() });
    const row = JSON.parse(list.stdout).settings.find((r: { key: string }) => r.key === 'client-secret');
    expect(row.value).toBe('svc_secret_***');
    const get = await runOpcli(['config', 'get', 'client-secret'], { env: env() });
    expect(get.stdout).toBe('svc_secret_***\n');
    const reveal = await runOpcli(['config', 'get', 'client-secret', '--reveal'], { env: env() });
    expect(reveal.stdout).toBe(`${SECRET}\n`);
    for (const r of [set, list, get]) expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it('warns when a secret is typed on the command line, without echoing it', async () => {
    const r = await runOpcli(['config', 'set', 'provider-token', 'tok_ABCDEFGHIJ'], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('shell history');
    expect(r.stderr).not.toContain('tok_ABCDEFGHIJ');
  });

  it('asks for a missing value on a terminal, and refuses without one', async () => {
    const prompter = scriptedPrompter({ 'OAuth client secret': SECRET });
    const asked = await runOpcli(['config', 'set', 'client-secret'], { env: env(), tty: true, prompter });
    expect(asked.code).toBe(0);
    expect(prompter.asked).toHaveLength(1);
    const piped = await runOpcli(['config', 'set', 'client-id'], { env: env() });
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain('--stdin');
  });

  it('rejects invalid values naming the key and what is expected, and unknown keys listing the known ones', async () => {
    const url = await runOpcli(['config', 'set', 'base-url', 'not a url'], { env: env() });
    expect(url.code).toBe(2);
    expect(url.stderr).toMatch(/base-url.*expected a URL/);
    const uuid = await runOpcli(['config', 'set', 'trigger-id', 'https://flows.example.com/execute/abc'], { env: env() });
    expect(uuid.code).toBe(2);
    expect(uuid.stderr).toContain('last path segment');
    const unknown = await runOpcli(['config', 'set', 'colour', 'red'], { env: env() });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('base-url, authorize-url');
  });

  it('shows environment overrides and which source wins', async () => {
    await runOpcli(['config', 'set', 'base-url', 'https://profile.example.com'], { env: env() });
    const list = await runOpcli(['config', 'list', '--json'], { env: { ...env(), OPCLI_BASE_URL: 'https://env.example.com' } });
    const row = JSON.parse(list.stdout).settings.find((r: { key: string }) => r.key === 'base-url');
    expect(row).toMatchObject({ value: 'https://env.example.com', source: 'env OPCLI_BASE_URL' });
  });

  it('prints the folder with `config path`', async () => {
    const r = await runOpcli(['config', 'path', '--json'], { env: env() });
    expect(JSON.parse(r.stdout)).toEqual({ dir, settings: join(dir, 'settings.json'), credentials: join(dir, 'credentials.json') });
  });
});

describe('damaged files', () => {
  it('names the file, the problem and what to do, for invalid JSON and for an invalid value', async () => {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'settings.json'), '{bad');
    const json = await runOpcli(['config', 'list'], { env: env() });
    expect(json.code).toBe(1);
    expect(json.stderr).toContain(`The settings file ${join(dir, 'settings.json')} cannot be read`);
    expect(json.stderr).toContain('.bak');
    writeFileSync(join(dir, 'settings.json'), JSON.stringify({ profiles: { default: { baseUrl: 'not a url' } } }));
    const value = await runOpcli(['config', 'get', 'base-url'], { env: env() });
    expect(value.code).toBe(1);
    expect(value.stderr).toContain('has an invalid value at profiles.default.baseUrl');
    expect(value.stderr).not.toContain('unexpected failure');
  });
});

describe('profiles', () => {
  it('keeps settings per profile, selected by --profile, OPCLI_PROFILE or `profiles use`', async () => {
    await runOpcli(['config', 'set', 'base-url', 'https://a.example.com'], { env: env() });
    await runOpcli(['--profile', 'staging', 'config', 'set', 'base-url', 'https://b.example.com'], { env: env() });
    expect((await runOpcli(['config', 'get', 'base-url'], { env: env() })).stdout).toBe('https://a.example.com\n');
    expect((await runOpcli(['config', 'get', 'base-url'], { env: { ...env(), OPCLI_PROFILE: 'staging' } })).stdout).toBe('https://b.example.com\n');
    expect((await runOpcli(['profiles', 'use', 'staging'], { env: env() })).code).toBe(0);
    expect((await runOpcli(['config', 'get', 'base-url'], { env: env() })).stdout).toBe('https://b.example.com\n');
    // --profile beats OPCLI_PROFILE, which beats the current profile.
    expect((await runOpcli(['-p', 'default', 'config', 'get', 'base-url'], { env: { ...env(), OPCLI_PROFILE: 'staging' } })).stdout).toBe(
      'https://a.example.com\n',
    );
    const list = await runOpcli(['profiles', 'list', '--json'], { env: env() });
    expect(JSON.parse(list.stdout)).toEqual([
      { name: 'default', active: false, baseUrl: 'https://a.example.com', loggedIn: false },
      { name: 'staging', active: true, baseUrl: 'https://b.example.com', loggedIn: false },
    ]);
    const plain = await runOpcli(['profiles', 'list'], { env: env() });
    expect(plain.stdout).toBe('\tdefault\thttps://a.example.com\tno\n*\tstaging\thttps://b.example.com\tno\n');
  });

  it('removes a profile only with --yes when nobody can be asked', async () => {
    await runOpcli(['--profile', 'old', 'config', 'set', 'client-secret', '--stdin'], { env: env(), stdin: SECRET });
    const refused = await runOpcli(['profiles', 'remove', 'old'], { env: env() });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    const removed = await runOpcli(['profiles', 'remove', 'old', '--yes'], { env: env() });
    expect(removed.code).toBe(0);
    expect(readFileSync(join(dir, 'credentials.json'), 'utf8')).not.toContain(SECRET);
    expect((await runOpcli(['profiles', 'remove', 'old', '--yes'], { env: env() })).code).toBe(1);
  });

  it('refuses a profile name that could escape the folder', async () => {
    const r = await runOpcli(['profiles', 'use', '../etc'], { env: env() });
    expect(r.code).toBe(2);
  });
});
