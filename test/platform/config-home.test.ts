/**
 * Issue 43 row 4: the config folder in the platform's place (%APPDATA%\opcli on Windows, as gh;
 * ~/.config/opcli on Linux and macOS), `config path` in native separators, and the one-time move on
 * Windows from the earlier place that loses nothing: the move itself runs here on Linux folders.
 */
import { execFile as execFileCallback } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { configDirOf, earlierConfigDirOf } from '../../src/config/config-home.js';
import { settleConfigDir } from '../../src/config/config-move.js';
import { moveWitnesses, rememberPlace, witnessedPaths } from '../../src/record/witness.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { claimBodies, results, writeRows } from '../claims/fixtures.js';
import { bundleScript, ROOT, runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';

const run = async (file: string, args: string[]) => (await promisify(execFileCallback)(file, args, { encoding: 'utf8' })).stdout;

describe('where the config folder is', () => {
  it('on Windows: %APPDATA%\\opcli, else under %USERPROFILE%; XDG_CONFIG_HOME and OPCLI_CONFIG_DIR first; all in Windows separators', () => {
    const user = 'C:\\Users\\Ana Lima';
    const cases: [Record<string, string>, string][] = [
      [{ APPDATA: `${user}\\AppData\\Roaming`, USERPROFILE: user }, `${user}\\AppData\\Roaming\\opcli`],
      [{ APPDATA: 'C:/Users/ana/AppData/Roaming', USERPROFILE: user }, 'C:\\Users\\ana\\AppData\\Roaming\\opcli'],
      [{ USERPROFILE: user }, `${user}\\AppData\\Roaming\\opcli`],
      [{ APPDATA: 'relative\\x', USERPROFILE: user }, `${user}\\AppData\\Roaming\\opcli`],
      [{ XDG_CONFIG_HOME: 'D:/xdg', APPDATA: 'C:\\a' }, 'D:\\xdg\\opcli'],
      [{ OPCLI_CONFIG_DIR: 'E:\\opcli', APPDATA: 'C:\\a' }, 'E:\\opcli'],
    ];
    for (const [env, dir] of cases) expect(configDirOf(env, 'win32'), JSON.stringify(env)).toBe(dir);
    expect(earlierConfigDirOf({ APPDATA: `${user}\\AppData\\Roaming`, USERPROFILE: user }, 'win32')).toBe(`${user}\\.config\\opcli`);
    expect(earlierConfigDirOf({ APPDATA: 'C:\\a', HOME: 'C:/Users/ana' }, 'win32')).toBe('C:\\Users\\ana\\.config\\opcli');
    expect(earlierConfigDirOf({ OPCLI_CONFIG_DIR: 'E:\\opcli', USERPROFILE: user }, 'win32')).toBeUndefined();
    expect(earlierConfigDirOf({ XDG_CONFIG_HOME: 'D:\\xdg', USERPROFILE: user }, 'win32')).toBeUndefined();
  });

  it('on Linux and macOS: ~/.config/opcli as before, or an absolute XDG_CONFIG_HOME; nothing to move', () => {
    for (const platform of ['linux', 'darwin'] as const) {
      expect(configDirOf({ HOME: '/home/ana' }, platform)).toBe('/home/ana/.config/opcli');
      expect(configDirOf({ HOME: '/home/ana', XDG_CONFIG_HOME: '/x' }, platform)).toBe('/x/opcli');
      expect(configDirOf({ HOME: '/home/ana', XDG_CONFIG_HOME: 'rel', APPDATA: 'C:\\a' }, platform)).toBe('/home/ana/.config/opcli');
      expect(earlierConfigDirOf({ HOME: '/home/ana', APPDATA: 'C:\\a' }, platform)).toBeUndefined();
    }
  });

  it('`config path` prints Windows separators on Windows, never mixed ones', async () => {
    const { dir, cleanup } = tempConfigDir();
    try {
      // Windows takes either separator in OPCLI_CONFIG_DIR; the folder shown is in its own.
      const r = await runOpcli(['config', 'path', '--json'], { env: { OPCLI_CONFIG_DIR: dir }, platform: 'win32' });
      const files = JSON.parse(r.stdout) as Record<string, string>;
      for (const path of Object.values(files)) expect(path).not.toContain('/');
      expect(files.settings).toBe(`${dir.replaceAll('/', '\\')}\\settings.json`);
      const linux = await runOpcli(['config', 'path', '--json'], { env: { OPCLI_CONFIG_DIR: dir }, platform: 'linux' });
      expect(JSON.parse(linux.stdout).settings).toBe(join(dir, 'settings.json'));
    } finally {
      cleanup();
    }
  });
});

describe('witnesses follow the folder', () => {
  it("only the witnesses of records inside the moved folder are re-keyed; a team folder's stay as they are", () => {
    const { dir: config, cleanup } = tempConfigDir();
    try {
      const from = join(config, 'old-place');
      const team = join(config, 'team');
      for (const path of [join(from, 'giftcard-ledger.jsonl'), join(from, 'claims-record-ab.jsonl'), join(team, 'giftcard-ledger.jsonl')])
        rememberPlace(config, path);
      moveWitnesses(config, from);
      expect(witnessedPaths(config).sort()).toEqual(
        [join(config, 'claims-record-ab.jsonl'), join(config, 'giftcard-ledger.jsonl'), join(team, 'giftcard-ledger.jsonl')].sort(),
      );
      // Again (a run after a crash): nothing changes.
      moveWitnesses(config, from);
      expect(witnessedPaths(config)).toHaveLength(3);
    } finally {
      cleanup();
    }
  });
});

describe('the one-time move from the earlier place', () => {
  let sandbox: Sandbox;
  let root: string;
  let cleanup: () => void;
  let earlier: string;
  let dir: string;
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(async () => sandbox.close());
  beforeEach(async () => {
    ({ dir: root, cleanup } = tempConfigDir());
    earlier = join(root, '.config', 'opcli');
    dir = join(root, 'AppData', 'Roaming', 'opcli');
    mkdirSync(earlier, { recursive: true, mode: 0o700 });
    await sandboxProfile(sandbox, earlier);
    sandbox.resetLog();
    return cleanup;
  });

  /** Files two claims with the config folder `config`; the CSV is in the test's folder. */
  async function fileTwo(config: string): Promise<string> {
    const csv = join(root, 'claims.csv');
    writeRows(csv, 2);
    const r = await runOpcli(['claims', 'file', '--from', csv, '--jsonl'], { env: { OPCLI_CONFIG_DIR: config } });
    expect(r.code, r.stderr).toBe(0);
    return csv;
  }

  /** The same rows again as another batch (another --journal name): the record must hold both (exit 3), nothing sent twice. */
  async function expectHeld(csv: string, config: string): Promise<void> {
    const again = await runOpcli(['claims', 'file', '--from', csv, '--journal', `${csv}.other.journal.jsonl`, '--jsonl'], {
      env: { OPCLI_CONFIG_DIR: config },
    });
    expect(again.stderr).not.toContain('is gone');
    expect(again.code, again.stderr).toBe(3);
    expect(results(again.stdout).map((r) => r.status)).toEqual(['held', 'held']);
    expect(claimBodies(sandbox)).toHaveLength(2);
  }

  it('moves the whole folder once: settings, credentials, the record and its witnesses; the record still holds what was filed', async () => {
    const csv = await fileTwo(earlier);
    const before = readdirSync(earlier).sort();
    const notices: string[] = [];
    expect(settleConfigDir(dir, earlier, (l) => notices.push(l))).toBe(dir);
    expect(existsSync(earlier)).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(before);
    expect(notices).toEqual([`Moved opcli's config folder from ${earlier} to ${dir}, its place on Windows.`]);
    // Each witness now names the record where it is.
    for (const name of readdirSync(join(dir, 'record-witness'))) expect(readFileSync(join(dir, 'record-witness', name), 'utf8')).toContain(dir);
    // Once moved, nothing more happens.
    expect(settleConfigDir(dir, earlier, (l) => notices.push(l))).toBe(dir);
    expect(notices).toHaveLength(1);
    await expectHeld(csv, dir);
  });

  it('eight opcli processes starting at once move the folder once, and every one uses the new place', async () => {
    const csv = await fileTwo(earlier);
    const before = readdirSync(earlier).sort();
    // The move as each run does it, in processes of their own (bundled from src/ by the build's esbuild).
    const script = join(root, 'settle.mjs');
    const source = `import { settleConfigDir } from ${JSON.stringify(join(ROOT, 'src', 'config', 'config-move.ts'))};
      const notes = [];
      const used = settleConfigDir(process.argv[2], process.argv[3], (line) => notes.push(line));
      process.stdout.write(JSON.stringify({ used, notes }));`;
    await bundleScript(source, script);
    const runs = await Promise.all(
      Array.from({ length: 8 }, () => run(process.execPath, [script, dir, earlier]).then((out) => JSON.parse(out) as { used: string; notes: string[] })),
    );
    expect(runs.map((r) => r.used)).toEqual(Array(8).fill(dir));
    expect(runs.flatMap((r) => r.notes)).toEqual([`Moved opcli's config folder from ${earlier} to ${dir}, its place on Windows.`]);
    expect(existsSync(earlier)).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(before);
    await expectHeld(csv, dir);
  });

  it('a crash after the rename, before the witnesses followed, is finished by the next run', async () => {
    const csv = await fileTwo(earlier);
    // What a run killed right after its rename leaves: the folder moved, its mark inside.
    writeFileSync(join(earlier, 'moving-from.json'), `${JSON.stringify({ from: earlier })}\n`, { mode: 0o600 });
    mkdirSync(join(root, 'AppData', 'Roaming'), { recursive: true });
    renameSync(earlier, dir);
    expect(settleConfigDir(dir, earlier, () => {})).toBe(dir);
    expect(existsSync(join(dir, 'moving-from.json'))).toBe(false);
    await expectHeld(csv, dir);
  });

  it('an empty folder in the new place (made by hand) is replaced by the move', async () => {
    mkdirSync(dir, { recursive: true });
    const csv = await fileTwo(earlier);
    expect(settleConfigDir(dir, earlier, () => {})).toBe(dir);
    expect(existsSync(join(dir, 'settings.json'))).toBe(true);
    await expectHeld(csv, dir);
  });

  it('when both places hold files, the new one is used, the old one is named and its record still holds what was filed', async () => {
    const csv = await fileTwo(earlier);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    await sandboxProfile(sandbox, dir);
    const notices: string[] = [];
    expect(settleConfigDir(dir, earlier, (l) => notices.push(l))).toBe(dir);
    expect(notices.join('\n')).toContain(`${earlier}, where it kept it before, still holds files`);
    expect(existsSync(join(earlier, 'settings.json'))).toBe(true);
    await expectHeld(csv, dir);
  });

  it('a move that cannot happen leaves the earlier folder whole and in use for this run, and says so', async () => {
    const csv = await fileTwo(earlier);
    const before = readdirSync(earlier).sort();
    // The new place's parent is a file: the folder cannot be made there.
    writeFileSync(join(root, 'AppData'), 'not a folder');
    const notices: string[] = [];
    expect(settleConfigDir(dir, earlier, (l) => notices.push(l))).toBe(earlier);
    expect(readdirSync(earlier).sort()).toEqual(before);
    expect(notices.join('\n')).toContain(`could not move its config folder from ${earlier}`);
    await expectHeld(csv, earlier);
  });
});
