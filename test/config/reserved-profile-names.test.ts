/**
 * Issue 38 row 12: `--profile __proto__ config set …` said "Set" and stored nothing. Names that
 * JavaScript objects carry are refused as profile names wherever a name comes in, with the rule.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { runOpcli, tempConfigDir } from '../helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempConfigDir());
});
afterEach(() => cleanup());

const RULE =
  /(is not a profile name|Invalid profile name "[^"]*"): .*not a name JavaScript reserves \(__proto__, constructor, prototype, toString and the like\)/;

describe('profile names JavaScript reserves', () => {
  test.each(['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'])('--profile %s is refused, nothing written', async (name) => {
    const r = await runOpcli(['--profile', name, 'config', 'set', 'base-url', 'https://api.example.com'], { env: { OPCLI_CONFIG_DIR: dir } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(RULE);
    expect(r.stderr).not.toMatch(/^Set /m);
    expect(existsSync(join(dir, 'settings.json'))).toBe(false);
  });

  test('OPCLI_PROFILE=constructor and `profiles use prototype` are refused too', async () => {
    const fromEnv = await runOpcli(['config', 'set', 'base-url', 'https://api.example.com'], { env: { OPCLI_CONFIG_DIR: dir, OPCLI_PROFILE: 'constructor' } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toMatch(/OPCLI_PROFILE: "constructor" is not a profile name/);
    const use = await runOpcli(['profiles', 'use', 'prototype'], { env: { OPCLI_CONFIG_DIR: dir } });
    expect(use.code).toBe(2);
    expect(use.stderr).toMatch(RULE);
  });

  test('names that only resemble them are profiles like any other', async () => {
    for (const name of ['proto', 'Constructor', '__proto', 'to-string']) {
      const r = await runOpcli(['--profile', name, 'config', 'set', 'base-url', `https://${name.toLowerCase().replace(/_/g, '')}.example.com`], {
        env: { OPCLI_CONFIG_DIR: dir },
      });
      expect(r.code, r.stderr).toBe(0);
    }
    const profiles = JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')).profiles;
    expect(Object.keys(profiles).sort()).toEqual(['Constructor', '__proto', 'proto', 'to-string']);
  });
});
