/**
 * Issue 27, smaller findings: a credentials file others can read is made private with a warning; a
 * relative XDG_CONFIG_HOME is ignored (XDG Base Directory spec); a plain-http URL that is not
 * loopback is refused when it is set, by the HTTP client's own rule.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { CredentialStore } from '../../src/config/credentials.js';
import { runOpcli, tempConfigDir } from '../helpers.js';

const SECRET = 'svc_secret_Loose0644xyz';
let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempConfigDir());
});
afterEach(() => cleanup());

const run = (argv: string[], stdin?: string, env: Record<string, string> = {}) => runOpcli(argv, { env: { OPCLI_CONFIG_DIR: dir, ...env }, stdin });

describe('a credentials file others can read', () => {
  test('0644 in a 0755 folder is made 0600, with a warning that names it (and no secret)', async () => {
    expect((await run(['config', 'set', 'base-url', 'https://api.example.com'])).code).toBe(0);
    expect((await run(['config', 'set', 'client-secret', '--stdin'], SECRET)).code).toBe(0);
    const file = join(dir, 'credentials.json');
    chmodSync(dir, 0o755);
    chmodSync(file, 0o644);
    const res = await run(['config', 'list']);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`Warning: the credentials file ${file} could be read by other users (mode 0644); opcli made it private (0600).`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(res.stdout + res.stderr).not.toContain(SECRET);
    // Once private, nothing more is said.
    const again = await run(['config', 'list']);
    expect(again.stderr).not.toContain('could be read by other users');
    // The settings file holds no secret: its mode is left alone (a writable one is refused as before).
    chmodSync(join(dir, 'settings.json'), 0o644);
    expect((await run(['config', 'list'])).stderr).not.toContain('Warning');
    expect(statSync(join(dir, 'settings.json')).mode & 0o777).toBe(0o644);
  });
});

describe('XDG_CONFIG_HOME', () => {
  test('a relative value is ignored: the config folder is ~/.config/opcli, not one under the current folder', async () => {
    const home = mkdtempSync(join(tmpdir(), 'opcli-home-'));
    const cwd = mkdtempSync(join(tmpdir(), 'opcli-cwd-'));
    try {
      const env = { HOME: home, XDG_CONFIG_HOME: 'relative/config', OPCLI_CONFIG_DIR: undefined };
      const path = await runOpcli(['config', 'path'], { env, cwd });
      expect(path.stdout.trim()).toBe(`${home}/.config/opcli`);
      const set = await runOpcli(['config', 'set', 'client-secret', '--stdin'], { env, cwd, stdin: SECRET });
      expect(set.code).toBe(0);
      expect(existsSync(join(home, '.config', 'opcli', 'credentials.json'))).toBe(true);
      expect(existsSync(join(cwd, 'relative'))).toBe(false);
      expect(existsSync(join(process.cwd(), 'relative'))).toBe(false);
      // An absolute one is used as before.
      const absolute = await runOpcli(['config', 'path'], { env: { ...env, XDG_CONFIG_HOME: join(home, 'xdg') }, cwd });
      expect(absolute.stdout.trim()).toBe(join(home, 'xdg', 'opcli'));
    } finally {
      rmSync(home, { recursive: true, force: true });
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe('plain http URLs', () => {
  test('`config set base-url http://<not loopback>` is refused when set (exit 2, the https hint), nothing written', async () => {
    for (const [key, value] of [
      ['base-url', 'http://api.example.com'],
      ['base-url', 'http://10.0.0.1:8080'],
      ['provider-api-url', 'http://giftly.example/api'],
      ['native-url', 'http://shop.example'],
    ]) {
      const res = await run(['config', 'set', key as string, value as string]);
      expect(res.code, `${key} ${value}`).toBe(2);
      expect(res.stderr).toContain(`Invalid value for ${key}: plain http is allowed only to 127.0.0.1, localhost or [::1]`);
      expect(res.stderr).toContain('use https://');
    }
    expect(existsSync(join(dir, 'settings.json'))).toBe(false);
    // Loopback http (the sandbox) and https are taken; the consent page only opens in a browser.
    for (const value of ['http://127.0.0.1:4010', 'http://localhost:4010', 'http://[::1]:4010', 'https://api.example.com']) {
      expect((await run(['config', 'set', 'base-url', value])).code, value).toBe(0);
    }
    expect((await run(['config', 'set', 'authorize-url', 'http://login.example/authorize'])).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')).profiles.default.baseUrl).toBe('https://api.example.com');
  });
});

describe('origins are compared as URL.origin gives them', () => {
  test('case of the host, a default port and the path do not move a login; another port does, with a warning at set time', async () => {
    expect((await run(['config', 'set', 'base-url', 'https://api.example.com'])).code).toBe(0);
    const store = await CredentialStore.open(dir);
    await store.update('default', (cur) => ({
      ...cur,
      token: { accessToken: 'svc_at_origin_case', scopes: [], grant: 'token', obtainedAt: 0, origin: 'https://api.example.com' },
    }));
    const same = await run(['config', 'set', 'base-url', 'HTTPS://Api.Example.COM:443/api/']);
    expect(same.code).toBe(0);
    expect(same.stderr).not.toContain('Warning');
    const other = await run(['config', 'set', 'base-url', 'https://api.example.com:8443']);
    expect(other.stderr).toContain(
      'Warning: the login of profile "default" was issued by https://api.example.com; it does not apply to https://api.example.com:8443',
    );
    expect(other.stdout + other.stderr).not.toContain('svc_at_origin_case');
  });
});
