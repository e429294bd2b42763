/**
 * The `record-url` setting and OPCLI_RECORD_URL (issue 42): the URL goes to settings.json without its
 * password, the password to the credential store, and neither `config get`, `config list`, a
 * warning nor an error ever shows it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveProfile } from '../../src/config/profile.js';
import { runOpcli, tempConfigDir } from '../helpers.js';
import { deadPort } from '../infra/index.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempConfigDir());
});
afterEach(() => cleanup());

const env = (more: Record<string, string> = {}) => ({ OPCLI_CONFIG_DIR: dir, ...more });
const PASSWORD = 'Pw-9f3k!x q';
const WITH_PASSWORD = `postgresql://alice:${encodeURIComponent(PASSWORD)}@db.example.com:5432/opcli?sslmode=verify-full`;
const read = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : '');
const listed = async (more: Record<string, string> = {}) =>
  JSON.parse((await runOpcli(['config', 'list', '--json'], { env: env(more) })).stdout).settings.find((r: { key: string }) => r.key === 'record-url');

describe('record-url', () => {
  it('keeps the URL in the settings and its password in the credential store, masked in get and list', async () => {
    const set = await runOpcli(['config', 'set', 'record-url', '--stdin'], { env: env(), stdin: `${WITH_PASSWORD}\n` });
    expect(set).toMatchObject({ code: 0, stderr: 'Creating profile "default".\nSet record-url for profile "default".\n' });
    expect(JSON.parse(read('settings.json')).profiles.default.recordUrl).toBe('postgresql://alice@db.example.com:5432/opcli?sslmode=verify-full');
    expect(JSON.parse(read('credentials.json')).profiles.default.recordPassword).toBe(PASSWORD);
    expect(read('settings.json')).not.toContain(encodeURIComponent(PASSWORD));

    const get = await runOpcli(['config', 'get', 'record-url'], { env: env() });
    expect(get.stdout).toBe('postgresql://alice@db.example.com:5432/opcli?sslmode=verify-full\n');
    expect(await listed()).toMatchObject({ value: 'postgresql://alice:***@db.example.com:5432/opcli?sslmode=verify-full', source: 'profile' });
  });

  it('warns when the password came as an argument, and a URL without one forgets the stored password', async () => {
    const set = await runOpcli(['config', 'set', 'record-url', WITH_PASSWORD], { env: env() });
    expect(set.code).toBe(0);
    expect(set.stderr).toContain('Warning: the password in the URL can be seen by other users of this computer (`ps`)');
    expect(set.stderr).not.toContain(encodeURIComponent(PASSWORD));

    expect((await runOpcli(['config', 'set', 'record-url', 'postgres://bob@db.example.com/opcli'], { env: env() })).code).toBe(0);
    expect(JSON.parse(read('credentials.json')).profiles.default?.recordPassword).toBeUndefined();
    expect(await listed()).toMatchObject({ value: 'postgres://bob@db.example.com/opcli' });

    expect((await runOpcli(['config', 'set', 'record-url', '--stdin'], { env: env(), stdin: WITH_PASSWORD })).code).toBe(0);
    expect((await runOpcli(['config', 'unset', 'record-url'], { env: env() })).code).toBe(0);
    expect(read('credentials.json')).not.toContain(PASSWORD);
    expect(JSON.parse(read('settings.json')).profiles.default.recordUrl).toBeUndefined();
  });

  it.each([
    ['https://db.example.com/opcli', 'expected a postgres:// or postgresql:// URL'],
    ['postgresql://alice:hunter2-secret@db1.example.com,db2.example.com/opcli', 'names several hosts; opcli connects to one'],
    ['not a url hunter2-secret', 'expected a postgres:// or postgresql:// URL'],
  ])('refuses %s (exit 2, naming record-url, never echoing a password)', async (value, words) => {
    const set = await runOpcli(['config', 'set', 'record-url', '--stdin'], { env: env(), stdin: value });
    expect(set.code).toBe(2);
    expect(set.stderr).toContain(words);
    expect(set.stderr).toContain('record-url');
    expect(set.stderr).not.toContain('hunter2-secret');
    expect(read('settings.json')).not.toContain('db');
  });

  it('OPCLI_RECORD_URL wins, masked in list; its password is the one used, a ?password= parameter split off too', async () => {
    expect((await runOpcli(['config', 'set', 'record-url', '--stdin'], { env: env(), stdin: WITH_PASSWORD })).code).toBe(0);
    const fromEnv = 'postgresql://carol@127.0.0.1:5433/team?password=env-secret-77';
    expect(await listed({ OPCLI_RECORD_URL: fromEnv })).toMatchObject({
      value: 'postgresql://carol@127.0.0.1:5433/team?password=***',
      source: 'env OPCLI_RECORD_URL',
    });

    const profile = resolveProfile(
      'default',
      { recordUrl: 'postgresql://alice@db.example.com/opcli' },
      { recordPassword: PASSWORD },
      { OPCLI_RECORD_URL: fromEnv },
    );
    expect(profile.record).toEqual({ url: 'postgresql://carol@127.0.0.1:5433/team', password: 'env-secret-77', passwordSource: 'OPCLI_RECORD_URL' });
    expect(profile.sources.recordUrl).toBe('env');
    const stored = resolveProfile('default', { recordUrl: 'postgresql://alice@db.example.com/opcli' }, { recordPassword: PASSWORD }, {});
    expect(stored.record).toEqual({ url: 'postgresql://alice@db.example.com/opcli', password: PASSWORD, passwordSource: 'the stored record-url' });
    expect(() => resolveProfile('default', {}, {}, { OPCLI_RECORD_URL: 'mysql://root:topsecret99@h/db' })).toThrow(
      /OPCLI_RECORD_URL: expected a postgres:\/\/ or postgresql:\/\/ URL.*mysql:\/\/root:\*\*\*@h\/db/,
    );
  });
});

describe('a profile whose record is in PostgreSQL', () => {
  it('never falls back to the file record: a database that cannot be reached stops claims and credit in one line', async () => {
    for (const [key, value] of [
      ['base-url', 'https://api.example.com'],
      ['store-id', 'st_1'],
    ]) {
      expect((await runOpcli(['config', 'set', key as string, value as string], { env: env() })).code).toBe(0);
    }
    expect((await runOpcli(['config', 'set', 'record-url', '--stdin'], { env: env(), stdin: WITH_PASSWORD })).code).toBe(0);
    // The record of claims reads the database too (src/record-pg/claims.ts): no file record is read or made.
    const dead = await deadPort();
    const at = `postgresql://alice:${encodeURIComponent(PASSWORD)}@127.0.0.1:${dead}/opcli`;
    const claims = await runOpcli(['claims', 'history'], { env: env({ OPCLI_RECORD_URL: at, HOME: '/nonexistent' }) });
    expect(claims.code).toBe(1);
    expect(claims.stderr).toContain(`Error: Record database 127.0.0.1:${dead}/opcli: connection refused`);
    expect(claims.stderr).not.toContain(PASSWORD);
    expect(readdirSync(dir).filter((f) => f.startsWith('claims-record-'))).toEqual([]);
    // The gift card ledger reads the database (src/giftcard/ledger-db.ts): one that cannot be reached
    // (on loopback: tests send nothing elsewhere) stops it in one line, and no ledger file is read or made.
    const port = await deadPort();
    const url = `postgresql://alice:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/opcli`;
    const history = await runOpcli(['--verbose', 'giftcard', 'history'], { env: env({ OPCLI_RECORD_URL: url, HOME: '/nonexistent' }) });
    expect(history.code).toBe(1);
    expect(history.stderr).toContain(`Error: Record database 127.0.0.1:${port}/opcli: connection refused`);
    expect(history.stderr).not.toContain(PASSWORD);
    expect(existsSync(join(dir, 'giftcard-ledger.jsonl'))).toBe(false);
  });
});
