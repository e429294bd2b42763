/**
 * Issue 43 row 1: two names of one file are one file the platform's way, whether or not it exists
 * yet. The batch runs on Linux with Windows' or macOS' rules injected (`platform`); the rules
 * themselves are checked as properties over families of names.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sameFileName } from '../../src/core/file-names.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { claimBodies, claimsSuite, writeRows } from '../claims/fixtures.js';

let sandbox: Sandbox;
let dir: string;
const { env } = claimsSuite((s) => ({ sandbox, dir } = s));

describe('claims file: --journal Run.jsonl --out run.jsonl', () => {
  it('on Windows and macOS is refused before anything is sent or written (exit 2), naming the rule', async () => {
    for (const [platform, rule] of [
      ['win32', 'Windows does not tell file names apart by letter case'],
      ['darwin', "macOS's disks do not tell file names apart by letter case"],
    ] as const) {
      const work = join(dir, platform);
      mkdirSync(work);
      writeRows(join(work, 'c.csv'), 3);
      const r = await runOpcli(['claims', 'file', '--from', 'c.csv', '--journal', 'Run.jsonl', '--out', 'run.jsonl'], { env: env(), cwd: work, platform });
      expect(r.code, platform).toBe(2);
      expect(r.stderr).toContain('--out run.jsonl is the same file as --journal Run.jsonl');
      expect(r.stderr).toContain(rule);
      expect(r.stderr).toContain('nothing was sent or written');
      expect(readdirSync(work)).toEqual(['c.csv']);
    }
    expect(claimBodies(sandbox)).toEqual([]);
  });

  it('on macOS the two Unicode forms of one name are one file (é as one character or e + accent)', async () => {
    writeRows(join(dir, 'c.csv'), 1);
    const nfc = 'r\u00e9sultats.jsonl';
    const nfd = 're\u0301sultats.jsonl';
    const r = await runOpcli(['claims', 'file', '--from', 'c.csv', '--journal', nfc, '--out', nfd], { env: env(), cwd: dir, platform: 'darwin' });
    expect(r.code).toBe(2);
    expect(existsSync(join(dir, nfc))).toBe(false);
    expect(claimBodies(sandbox)).toEqual([]);
  });

  it('on Linux they are two files: the batch runs and writes the results (the journal is a name, no file)', async () => {
    writeRows(join(dir, 'c.csv'), 2);
    const r = await runOpcli(['claims', 'file', '--from', 'c.csv', '--journal', 'Run.jsonl', '--out', 'run.jsonl'], {
      env: env(),
      cwd: dir,
      platform: 'linux',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(dir, 'Run.jsonl'))).toBe(false);
    expect(existsSync(join(dir, 'run.jsonl'))).toBe(true);
    expect(claimBodies(sandbox)).toHaveLength(2);
  });

  it('an existing Run.jsonl and a new run.jsonl are two files on every platform (the disk would have found the first)', async () => {
    writeRows(join(dir, 'c.csv'), 1);
    const first = await runOpcli(['claims', 'file', '--from', 'c.csv', '--journal', 'Run.jsonl'], { env: env(), cwd: dir });
    expect(first.code).toBe(0);
    // A journal an earlier version left under that name (this version writes none).
    writeFileSync(join(dir, 'Run.jsonl'), '', { mode: 0o600 });
    const r = await runOpcli(['claims', 'file', '--from', 'c.csv', '--journal', 'Run.jsonl', '--out', 'run.jsonl'], {
      env: env(),
      cwd: dir,
      platform: 'win32',
    });
    expect(r.code, r.stderr).toBe(0);
  });
});

/** Every way of writing `name` in upper and lower case that a family of masks gives. */
function caseVariants(name: string): string[] {
  const out = new Set([name, name.toUpperCase(), name.toLowerCase()]);
  for (let mask = 1; mask < 64; mask += 7) out.add([...name].map((c, i) => (mask & (1 << (i % 6)) ? c.toUpperCase() : c.toLowerCase())).join(''));
  return [...out];
}

const NAMES = ['run.jsonl', 'Results 2024.jsonl', 'claims.csv.journal.jsonl', 'ÉTÉ-résultats.json', 'straße.txt', 'a', 'x.y.z', 'Ünïcödé name.log'];

describe('sameFileName: names of one file by the platform rules', () => {
  it('every case variant of a name is the same file on Windows and macOS, and another file on Linux', () => {
    for (const name of NAMES) {
      for (const other of caseVariants(name)) {
        expect(sameFileName(name, other, 'win32'), `${name} ${other}`).toBe(true);
        expect(sameFileName(name, other, 'darwin'), `${name} ${other}`).toBe(true);
        expect(sameFileName(name, other, 'linux'), `${name} ${other}`).toBe(name === other);
      }
    }
  });

  it('the NFC and NFD forms of a name are one file on macOS only', () => {
    for (const name of NAMES) {
      const [nfc, nfd] = [name.normalize('NFC'), name.normalize('NFD')];
      expect(sameFileName(nfc, nfd, 'darwin'), name).toBe(true);
      if (nfc !== nfd) {
        expect(sameFileName(nfc, nfd, 'linux')).toBe(false);
        // NTFS stores the code points it is given.
        expect(sameFileName(nfc, nfd, 'win32')).toBe(false);
      }
    }
  });

  it('trailing dots and spaces are dropped on Windows only', () => {
    for (const name of NAMES) {
      for (const tail of ['.', ' ', '. .', '...']) {
        expect(sameFileName(name, `${name}${tail}`, 'win32'), JSON.stringify(name + tail)).toBe(true);
        expect(sameFileName(name, `${name}${tail}`, 'linux')).toBe(false);
      }
    }
  });

  it('a short 8.3 name that Windows may give a long name is the same file, in any ~N and case', () => {
    const pairs: [string, string][] = [
      ['run-results.jsonl', 'RUN-RE~1.JSO'],
      ['claims.csv.journal.jsonl', 'CLAIMS~2.JSO'],
      ['Results 2024.jsonl', 'RESULT~1.JSO'],
      ['Results 2024.jsonl', 'REA1B2~5.JSO'],
      ['journal', 'JOURNA~1'],
    ];
    for (const [long, short] of pairs) {
      for (const variant of caseVariants(short)) {
        expect(sameFileName(long, variant, 'win32'), `${long} ${variant}`).toBe(true);
        expect(sameFileName(variant, long, 'win32')).toBe(true);
        expect(sameFileName(long, variant, 'darwin')).toBe(false);
        expect(sameFileName(long, variant, 'linux')).toBe(false);
      }
    }
  });

  it('names that differ in more than case, form, trailing dots or a possible short name are two files everywhere', () => {
    const pairs: [string, string][] = [
      ['run.jsonl', 'run.json'],
      ['run.jsonl', 'runs.jsonl'],
      ['run-results.jsonl', 'XUN-RE~1.JSO'],
      ['run-results.jsonl', 'RUN-RE~1.TXT'],
      ['RUN~1.JSO', 'RUN~2.JSO'],
      ['a', 'b'],
    ];
    for (const [a, b] of pairs) {
      for (const platform of ['win32', 'darwin', 'linux'] as const) expect(sameFileName(a, b, platform), `${platform} ${a} ${b}`).toBe(false);
    }
  });
});
