/** Issue 43 row 2: environment names are case-insensitive on Windows, as Node's own process.env is there. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { platformEnv } from '../../src/core/platform.js';
import { runOpcli, tempConfigDir } from '../helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(async () => {
  ({ dir, cleanup } = tempConfigDir());
  expect((await runOpcli(['config', 'set', 'store-id', 'st_default'], { env: { OPCLI_CONFIG_DIR: dir } })).code).toBe(0);
  expect((await runOpcli(['--profile', 'zzz', 'config', 'set', 'store-id', 'st_zzz'], { env: { OPCLI_CONFIG_DIR: dir } })).code).toBe(0);
});
afterEach(() => cleanup());

describe('environment names on Windows', () => {
  it('opcli_profile=zzz selects profile zzz on Windows, as OPCLI_PROFILE does; on Linux and macOS it is another variable', async () => {
    for (const name of ['OPCLI_PROFILE', 'opcli_profile', 'Opcli_Profile']) {
      const win = await runOpcli(['config', 'get', 'store-id'], { env: { OPCLI_CONFIG_DIR: dir, [name]: 'zzz' }, platform: 'win32' });
      expect(win.stdout, name).toBe('st_zzz\n');
    }
    for (const platform of ['linux', 'darwin'] as const) {
      const r = await runOpcli(['config', 'get', 'store-id'], { env: { OPCLI_CONFIG_DIR: dir, opcli_profile: 'zzz' }, platform });
      expect(r.stdout, platform).toBe('st_default\n');
    }
  });

  it('opcli_config_dir names the config folder on Windows', async () => {
    const r = await runOpcli(['config', 'get', 'store-id'], { env: { opcli_config_dir: dir, OPCLI_PROFILE: 'zzz' }, platform: 'win32' });
    expect(r.stdout).toBe('st_zzz\n');
  });
});

describe('platformEnv', () => {
  const names = ['PATH', 'OPCLI_TOKEN', 'no_color', 'ÄRGER_X', 'a_b-c.d'];
  const spellings = (name: string) => [
    name,
    name.toLowerCase(),
    name.toUpperCase(),
    [...name].map((c, i) => (i % 2 ? c.toLowerCase() : c.toUpperCase())).join(''),
  ];

  it('on Windows finds every spelling of every name, and enumerates the names as they were set', () => {
    for (const name of names) {
      const env = platformEnv({ [name]: 'v', OTHER: 'o' }, 'win32');
      for (const spelt of spellings(name)) {
        expect(env[spelt], spelt).toBe('v');
        expect(spelt in env).toBe(true);
      }
      expect(Object.keys(env)).toEqual([name, 'OTHER']);
      expect({ ...env }).toEqual({ [name]: 'v', OTHER: 'o' });
    }
  });

  it('on Windows an exact name wins over another spelling, and setting or deleting acts on the one variable', () => {
    const env = platformEnv({ opcli_token: 'lower', OPCLI_TOKEN: undefined }, 'win32');
    expect(env.OPCLI_TOKEN).toBeUndefined();
    expect(env.opcli_token).toBe('lower');
    const one = platformEnv({ Path: '/bin' }, 'win32');
    one.PATH = '/usr/bin';
    expect(Object.keys(one)).toEqual(['Path']);
    expect(one.path).toBe('/usr/bin');
    delete one.PATH;
    expect(Object.keys(one)).toEqual([]);
  });

  it('on Linux and macOS names keep their case', () => {
    for (const platform of ['linux', 'darwin'] as const) {
      const env = platformEnv({ opcli_profile: 'zzz' }, platform);
      expect(env.OPCLI_PROFILE).toBeUndefined();
      expect(env.opcli_profile).toBe('zzz');
    }
  });
});
