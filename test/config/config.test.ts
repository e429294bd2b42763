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

/** `config set KEY VALUE` refused for each case (exit 2, the key named, the reason matched), and no settings file written. */
async function refusesEach(cases: readonly (readonly [string, string, RegExp])[]) {
  for (const [key, value, why] of cases) {
    const r = await runOpcli(['config', 'set', key, value], { env: env() });
    expect(r.code, `${key} ${value}`).toBe(2);
    expect(r.stderr).toContain(`Invalid value for ${key}:`);
    expect(r.stderr).toMatch(why);
  }
  expect(existsSync(join(dir, 'settings.json'))).toBe(false);
}

/** `config set KEY VALUE` taken for each case, and `config get KEY` printing what was stored. */
async function storesEach(cases: readonly (readonly [string, string, string])[]) {
  for (const [key, value, stored] of cases) {
    expect((await runOpcli(['config', 'set', key, value], { env: env() })).code, `${key} ${value}`).toBe(0);
    expect((await runOpcli(['config', 'get', key], { env: env() })).stdout).toBe(`${stored}\n`);
  }
}

describe('config set/get/unset/list', () => {
  it('round-trips settings and keeps files 0600 in a 0700 folder', async () => {
    expect((await runOpcli(['config', 'set', 'base-url', 'https://api.example.com'], { env: env() })).code).toBe(0);
    expect((await runOpcli(['config', 'set', 'scopes', 'read_orders, read_claims'], { env: env() })).code).toBe(0);
    const get = await runOpcli(['config', 'get', 'base-url'], { env: env() });
    expect(get).toMatchObject({ code: 0, stdout: 'https://api.example.com\n' });
    expect((await runOpcli(['config', 'get', 'scopes'], { env: env() })).stdout).toBe('read_orders,read_claims\n');
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

  it('refuses a blank or garbled value naming the key, and changes nothing (F5)', async () => {
    expect((await runOpcli(['config', 'set', 'store-id', 'st_1'], { env: env() })).code).toBe(0);
    const before = readFileSync(join(dir, 'settings.json'), 'utf8');
    for (const [key, value] of [
      ['store-id', ' '],
      ['store-id', '\t'],
      ['store-id', 'st\x1b[2J_1'],
      ['client-id', 'svc_app\x07_1'],
      ['store-id', 'st\uFFFD_1'],
      ['scopes', '   '],
      ['shop-url', 'shop\r.example'],
    ] as const) {
      const r = await runOpcli(['config', 'set', key, value], { env: env() });
      expect(r.code, `${key} ${JSON.stringify(value)}`).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^Error: Invalid value for ${key}: the value (is blank|holds)`, 'm'));
      expect(r.stderr).not.toContain('\x1b');
    }
    // A secret: refused the same way, and the value is not echoed.
    const secret = await runOpcli(['config', 'set', 'client-secret', '--stdin'], { env: env(), stdin: 'svc_secret_\x1bZq9' });
    expect(secret.code).toBe(2);
    expect(secret.stderr).toMatch(/client-secret: the value holds a control character/);
    expect(secret.stderr).not.toContain('Zq9');
    expect(readFileSync(join(dir, 'settings.json'), 'utf8')).toBe(before);
    expect(existsSync(join(dir, 'credentials.json'))).toBe(false);
  });

  it("takes only http(s) URLs, a currency of the spec's list and a domain alone for shop-url (F3)", async () => {
    await refusesEach([
      ['base-url', 'file:///etc/passwd', /expected an http\(s\) URL/],
      ['provider-api-url', 'javascript:alert(1)', /expected an http\(s\) URL/],
      ['native-url', 'ftp://files.example/', /expected an http\(s\) URL/],
      ['currency', 'ZZZ', /"ZZZ" is not a currency code of the spec's list/],
      ['shop-url', 'https://shop.example/', /expected the store's domain alone/],
      ['shop-url', 'shop.example/path', /expected the store's domain alone/],
      ['shop-url', 'shop example', /expected the store's domain alone/],
    ]);
    await storesEach([
      ['base-url', 'http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
      ['currency', 'eur', 'EUR'],
      ['shop-url', 'shop.example', 'shop.example'],
      ['shop-url', 'shop.example:8443', 'shop.example:8443'],
    ]);
  });

  it('takes an amount above zero for max-amount, true or false for the switches and an absolute record-dir', async () => {
    await refusesEach([
      ['max-amount', '0.00', /expected an amount above zero with at most two decimals, such as 1000 or 2500\.00, got "0\.00"/],
      ['max-amount', '1.234', /expected an amount above zero with at most two decimals/],
      ['max-amount', '1,00', /expected an amount above zero with at most two decimals/],
      ['accessible', 'yes', /expected true or false, got "yes"/],
      ['trigger-sends-token', ' true', /expected true or false, got " true"/],
      ['record-dir', '', /expected a folder, such as \/srv\/opcli-records/],
      ['record-dir', 'records', /expected an absolute path, such as \/srv\/opcli-records, got "records"/],
    ]);
    await storesEach([
      ['max-amount', ' 2,500.5 ', '2500.50'],
      ['max-amount', '007', '7.00'],
      ['accessible', 'true', 'true'],
      ['proxy-loopback', 'false', 'false'],
      ['record-dir', ' /srv/opcli-records ', '/srv/opcli-records'],
    ]);
  });

  it('shows environment overrides and which source wins', async () => {
    await runOpcli(['config', 'set', 'base-url', 'https://profile.example.com'], { env: env() });
    const list = await runOpcli(['config', 'list', '--json'], { env: { ...env(), OPCLI_BASE_URL: 'https://env.example.com' } });
    const row = JSON.parse(list.stdout).settings.find((r: { key: string }) => r.key === 'base-url');
    expect(row).toMatchObject({ value: 'https://env.example.com', source: 'env OPCLI_BASE_URL' });
  });

  it('keeps a dotted profile name as one key, written atomically with no temporary file left', async () => {
    const { readdirSync } = await import('node:fs');
    expect((await runOpcli(['--profile', 'eu.prod', 'config', 'set', 'base-url', 'https://eu.example.com'], { env: env() })).code).toBe(0);
    expect((await runOpcli(['--profile', 'eu.prod', 'config', 'set', 'client-secret', '--stdin'], { env: env(), stdin: SECRET })).code).toBe(0);
    const text = readFileSync(join(dir, 'settings.json'), 'utf8');
    expect(JSON.parse(text)).toEqual({ profiles: { 'eu.prod': { baseUrl: 'https://eu.example.com' } } });
    expect(text.endsWith('}\n')).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8')).profiles['eu.prod']).toEqual({
      clientSecret: SECRET,
      clientSecretOrigin: 'https://eu.example.com',
    });
    expect((await runOpcli(['--profile', 'eu.prod', 'config', 'get', 'base-url'], { env: env() })).stdout).toBe('https://eu.example.com\n');
    expect(
      readdirSync(dir)
        .filter((f) => !f.endsWith('.lock-target'))
        .sort(),
    ).toEqual(['credentials.json', 'settings.json']);
  });

  it('opens a missing file as empty, and a read never creates or rewrites a file', async () => {
    const { writeFileSync } = await import('node:fs');
    const list = await runOpcli(['config', 'list', '--json'], { env: env() });
    expect(list.code).toBe(0);
    expect(existsSync(join(dir, 'settings.json'))).toBe(false);
    expect(existsSync(join(dir, 'credentials.json'))).toBe(false);
    writeFileSync(join(dir, 'credentials.json'), '{"profiles":{},"extra":1}', { mode: 0o600 });
    expect((await runOpcli(['auth', 'status'], { env: env() })).stderr).not.toContain('damaged');
    expect(existsSync(join(dir, 'settings.json'))).toBe(false);
    expect(readFileSync(join(dir, 'credentials.json'), 'utf8')).toBe('{"profiles":{},"extra":1}');
  });

  it('prints the folder with `config path`', async () => {
    const r = await runOpcli(['config', 'path', '--json'], { env: env() });
    expect(JSON.parse(r.stdout)).toEqual({ dir, settings: join(dir, 'settings.json'), credentials: join(dir, 'credentials.json') });
  });
});

describe('damaged files', () => {
  it('names the file, the problem and what to do, exits 2, and never overwrites it', async () => {
    const { writeFileSync } = await import('node:fs');
    const settings = join(dir, 'settings.json');
    const cases: [string, string][] = [
      ['{bad', 'is not valid JSON'],
      ['null', 'it holds null where an object'],
      ['[1,2]', 'it holds an array where an object'],
      ['"text"', 'it holds a string where an object'],
      [JSON.stringify({ profiles: { default: { baseUrl: 'not a url' } } }), 'profiles.default.baseUrl'],
      [JSON.stringify({ profiles: { '../../etc/x': {} } }), 'profiles'],
    ];
    for (const [content, problem] of cases) {
      writeFileSync(settings, content);
      for (const argv of [
        ['config', 'list'],
        ['config', 'set', 'base-url', 'https://a.example.com'],
        ['orders', 'list'],
      ]) {
        const r = await runOpcli(argv, { env: env() });
        expect(r.code, `${argv.join(' ')} with ${content}`).toBe(2);
        expect(r.stderr).toContain(`The settings file ${settings} is damaged`);
        expect(r.stderr).toContain(problem);
        expect(r.stderr).toContain(`mv ${settings} ${settings}.bak`);
        expect(r.stderr).not.toContain('unexpected failure');
        expect(readFileSync(settings, 'utf8')).toBe(content);
      }
    }
  });

  it('reads a file opcli did not write as it is through the schema, and refuses one changed by hand into such a form during a command', async () => {
    const { writeFileSync } = await import('node:fs');
    const { SettingsStore } = await import('../../src/config/settings.js');
    const path = join(dir, 'settings.json');
    // A key opcli never writes: the schema accepts the file (and drops the key).
    const byHand = (url: string) => `${JSON.stringify({ profiles: { default: { baseUrl: url } }, note: 'by hand' })}\n`;
    writeFileSync(path, byHand('https://a.example'), { mode: 0o600 });
    expect((await SettingsStore.openForReading(dir)).getProfile('default')).toEqual({ baseUrl: 'https://a.example' });

    // Opened over a file opcli wrote (the compiled check vouches for it, zod is not loaded); the file
    // then changes by hand into a form only the schema can judge: the command says to run again.
    writeFileSync(path, `${JSON.stringify({ profiles: { default: { baseUrl: 'https://b.example' } } })}\n`);
    const store = await SettingsStore.openForReading(dir);
    expect(store.getProfile('default')).toEqual({ baseUrl: 'https://b.example' });
    writeFileSync(path, byHand('https://c.example'));
    expect(() => store.getProfile('default')).toThrow(`The settings file ${path} changed while this command ran`);
    // Nothing was rewritten.
    expect(readFileSync(path, 'utf8')).toBe(byHand('https://c.example'));
    const get = await runOpcli(['config', 'get', 'base-url'], { env: env() });
    expect(get).toMatchObject({ code: 0, stdout: 'https://c.example\n' });
  });

  it('says so for a damaged credentials file instead of "Not logged in"', async () => {
    const { writeFileSync } = await import('node:fs');
    const credentials = join(dir, 'credentials.json');
    for (const content of ['[]', 'null', '{"profiles":{"default":{"token":{"accessToken":5}}}}']) {
      writeFileSync(credentials, content);
      const r = await runOpcli(['auth', 'status'], { env: env() });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`The credentials file ${credentials} is damaged`);
      expect(r.stderr).not.toContain('Not logged in');
      const set = await runOpcli(['config', 'set', 'client-secret', '--stdin'], { env: env(), stdin: SECRET });
      expect(set.code).toBe(2);
      expect(readFileSync(credentials, 'utf8')).toBe(content);
    }
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

  it('answering no to `profiles remove` keeps the profile: a plain sentence, exit 1, not 130 (the code of Ctrl-C)', async () => {
    await runOpcli(['--profile', 'old', 'config', 'set', 'client-secret', '--stdin'], { env: env(), stdin: SECRET });
    const before = readFileSync(join(dir, 'credentials.json'), 'utf8');
    const prompter = scriptedPrompter({ 'Remove profile "old"': false });
    const r = await runOpcli(['profiles', 'remove', 'old'], { env: env(), tty: true, prompter });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('Nothing was removed.\n');
    expect(readFileSync(join(dir, 'credentials.json'), 'utf8')).toBe(before);
  });

  it('refuses a profile name that could escape the folder', async () => {
    const r = await runOpcli(['profiles', 'use', '../etc'], { env: env() });
    expect(r.code).toBe(2);
  });

  it('answers `profiles remove` with an impossible name as a usage error, not "No profile named" (F6)', async () => {
    await runOpcli(['--profile', 'keep', 'config', 'set', 'store-id', 'st_1'], { env: env() });
    const before = readFileSync(join(dir, 'settings.json'), 'utf8');
    for (const name of ['', ' ', '.hidden', '../../etc/x', 'a/b', 'x'.repeat(65), 'has space', 'k\x1b[2Jeep', 'k\uFFFDeep']) {
      const r = await runOpcli(['profiles', 'remove', name, '--yes'], { env: env() });
      expect(r.code, JSON.stringify(name)).toBe(2);
      expect(r.stderr).toMatch(/^Error: Invalid profile name ".*": expected letters, digits/m);
      expect(r.stderr).not.toContain('\x1b');
    }
    expect(readFileSync(join(dir, 'settings.json'), 'utf8')).toBe(before);
    // A valid name that is not there is still exit 1, "No profile named".
    const missing = await runOpcli(['profiles', 'remove', 'gone', '--yes'], { env: env() });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No profile named "gone"');
  });
});

describe('files and folders that are not safe to use', () => {
  it('never follows a planted symlink for settings or credentials, and sends nothing', async () => {
    const { startSandbox } = await import('../../src/sandbox/index.js');
    const { sandboxProfile } = await import('../helpers.js');
    const { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, renameSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const sandbox = await startSandbox();
    const elsewhere = mkdtempSync(join(tmpdir(), 'opcli-attacker-'));
    try {
      await sandboxProfile(sandbox, dir);
      for (const name of ['settings.json', 'credentials.json']) {
        const real = join(dir, name);
        const planted = join(elsewhere, name);
        renameSync(real, planted);
        symlinkSync(planted, real);
        const before = readFileSync(planted, 'utf8');
        for (const argv of [
          ['orders', 'list'],
          ['auth', 'status'],
          ['config', 'list'],
          ['config', 'set', name === 'settings.json' ? 'store-id' : 'client-secret', 'st_x'],
        ]) {
          const r = await runOpcli(argv, { env: env() });
          expect(r.code, `${argv.join(' ')} with ${name} linked`).toBe(2);
          expect(r.stderr).toContain(`${real} is a symbolic link`);
          expect(r.stderr).not.toContain('unexpected failure');
        }
        expect(readFileSync(planted, 'utf8')).toBe(before);
        rmSync(real);
        renameSync(planted, real);
      }
      expect(sandbox.requests.filter((r) => !r.path.startsWith('/__admin'))).toEqual([]);
      // The lock is a folder; a link planted in its place (to a folder elsewhere) is refused.
      mkdirSync(join(elsewhere, 'victim'));
      symlinkSync(join(elsewhere, 'victim'), join(dir, 'credentials.lock'));
      const lock = await runOpcli(['config', 'set', 'client-secret', '--stdin'], { env: env(), stdin: SECRET });
      expect(lock.code).toBe(2);
      expect(lock.stderr).toContain(`The lock ${join(dir, 'credentials.lock')} is a symbolic link`);
      expect(readdirSync(join(elsewhere, 'victim'))).toEqual([]);
    } finally {
      await sandbox.close();
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('refuses a group- or world-writable folder with the reason, and never changes its mode', async () => {
    const { chmodSync } = await import('node:fs');
    for (const mode of [0o1777, 0o777, 0o770]) {
      chmodSync(dir, mode);
      const r = await runOpcli(['auth', 'status'], { env: env() });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`The config folder ${dir} can be written by`);
      expect(r.stderr).toContain(`mode 0${mode.toString(8)}`);
      expect(statSync(dir).mode & 0o7777).toBe(mode);
      expect(existsSync(join(dir, 'settings.json'))).toBe(false);
    }

    // A settings file others can write is refused too, and left as it is.
    chmodSync(dir, 0o700);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'settings.json'), '{}');
    chmodSync(join(dir, 'settings.json'), 0o666);
    const shared = await runOpcli(['config', 'list'], { env: env() });
    expect(shared.code).toBe(2);
    expect(shared.stderr).toContain(`The settings file ${join(dir, 'settings.json')} can be written by other users (mode 0666)`);
    expect(statSync(join(dir, 'settings.json')).mode & 0o777).toBe(0o666);
    chmodSync(join(dir, 'settings.json'), 0o600);
    // A folder only its owner can write is used as it is: 0755 stays 0755.
    chmodSync(dir, 0o755);
    expect((await runOpcli(['config', 'set', 'store-id', 'st_1'], { env: env() })).code).toBe(0);
    expect(statSync(dir).mode & 0o7777).toBe(0o755);
    // A folder opcli creates is 0700.
    const fresh = join(dir, 'new', 'opcli');
    expect((await runOpcli(['config', 'set', 'store-id', 'st_1'], { env: { OPCLI_CONFIG_DIR: fresh } })).code).toBe(0);
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
  });

  it('refuses a settings file that is a FIFO or a folder without hanging', async () => {
    const { execFileSync } = await import('node:child_process');
    const { mkdirSync, rmSync } = await import('node:fs');
    execFileSync('mkfifo', [join(dir, 'settings.json')]);
    const fifo = await runOpcli(['config', 'list'], { env: env() });
    expect(fifo.code).toBe(2);
    expect(fifo.stderr).toContain(`The settings file ${join(dir, 'settings.json')} is a named pipe, not a regular file`);
    rmSync(join(dir, 'settings.json'));
    mkdirSync(join(dir, 'credentials.json'));
    const folder = await runOpcli(['auth', 'status'], { env: env() });
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain(`The credentials file ${join(dir, 'credentials.json')} is a folder, not a regular file`);
  });

  it('refuses a folder or a file owned by another user', async () => {
    const { chownSync, writeFileSync } = await import('node:fs');
    const asRoot = process.getuid?.() === 0;
    // As root the test hands the folder to "nobody"; otherwise a root-owned folder is foreign.
    const foreign = asRoot ? dir : '/usr';
    if (asRoot) chownSync(dir, 65534, 65534);
    const r = await runOpcli(['auth', 'status'], { env: { OPCLI_CONFIG_DIR: foreign } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`The config folder ${foreign} is owned by another user`);
    if (!asRoot) return;
    chownSync(dir, 0, 0);
    writeFileSync(join(dir, 'settings.json'), '{}', { mode: 0o600 });
    chownSync(join(dir, 'settings.json'), 65534, 65534);
    const file = await runOpcli(['config', 'list'], { env: env() });
    expect(file.code).toBe(2);
    expect(file.stderr).toContain(`The settings file ${join(dir, 'settings.json')} is owned by another user`);
  });
});

describe('files cut short and variables that are not text', () => {
  it('an empty settings file (a write cut short by a full disk) names the file, exit 2, and is left as it is', async () => {
    const { writeFileSync } = await import('node:fs');
    expect((await runOpcli(['config', 'set', 'base-url', 'https://api.example.com'], { env: env() })).code).toBe(0);
    const path = join(dir, 'settings.json');
    writeFileSync(path, '', { mode: 0o600 });
    const r = await runOpcli(['orders', 'list'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`The settings file ${path} is damaged: it is empty`);
    expect(readFileSync(path, 'utf8')).toBe('');
  });

  it('a credentials file that is not UTF-8 is named as damaged, not read as "not logged in"', async () => {
    const { writeFileSync } = await import('node:fs');
    expect((await runOpcli(['config', 'set', 'base-url', 'https://api.example.com'], { env: env() })).code).toBe(0);
    const path = join(dir, 'credentials.json');
    writeFileSync(path, Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]), { mode: 0o600 });
    const r = await runOpcli(['orders', 'list'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`The credentials file ${path} is damaged: it is not UTF-8 text`);
  });

  it.each(['OPCLI_TOKEN', 'OPCLI_CLIENT_ID', 'OPCLI_CLIENT_SECRET'])('%s holding U+FFFD is a usage error naming it', async (name) => {
    const r = await runOpcli(['orders', 'list'], { env: { ...env(), OPCLI_BASE_URL: 'http://127.0.0.1:9', [name]: 'svc_at_ab\uFFFDcd' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${name} holds characters that are not valid text`);
    expect(r.stderr).not.toContain('\uFFFD');
  });

  it('a blank OPCLI_HTTP_TIMEOUT is a usage error, not ignored', async () => {
    const r = await runOpcli(['orders', 'list'], {
      env: { ...env(), OPCLI_BASE_URL: 'http://127.0.0.1:9', OPCLI_TOKEN: 'svc_at_x', OPCLI_HTTP_TIMEOUT: '  ' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('OPCLI_HTTP_TIMEOUT is set but holds only whitespace');
  });
});
