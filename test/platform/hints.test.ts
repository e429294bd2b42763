/**
 * Issue 43 row 9: hints fit the platform (PowerShell's commands on Windows, never chmod, mkdir -m,
 * rm -r), and user names come from the operating system, not from parsing /etc/passwd.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeUid } from '../../src/config/user-name.js';
import { shellAdvice, shellQuote } from '../../src/core/platform.js';
import { runOpcli } from '../helpers.js';
import { sourceFiles } from '../structure/source.js';
import { createOsUser, osUsersWhy, removeOsUser } from '../os-users.js';

/** Paths people have: spaces, quotes, a dollar, non-ASCII, separators of both kinds. */
const PATHS = [
  '/tmp/plain/file.lock',
  '/home/Ana Lima/.config/opcli',
  "/srv/o'brien/records",
  '/tmp/$HOME `x` "q"/a b',
  '/Users/zoë/Library/Application Support/opcli',
  'C:\\Users\\Ana Lima\\AppData\\Roaming\\opcli',
  "C:\\Users\\o'brien\\opcli\\credentials.lock",
];

/** Every command of the advice for `path` (and a pid, a variable). */
const commands = (platform: NodeJS.Platform, path: string) => {
  const a = shellAdvice(platform);
  return [
    a.removeFolder(path),
    a.makeFolder(path),
    a.makePrivateFolder(path),
    a.showOwner(path),
    a.moveAside(path),
    a.showProcess(42),
    a.showLink(path),
    a.unsetEnv('OPCLI_TOKEN'),
    a.makeTeamFolder(path),
  ];
};

describe('advice in the platform shell', () => {
  it('on Windows: PowerShell commands, never chmod, mkdir -m, rm -r, ls or mv', () => {
    for (const path of PATHS) {
      for (const line of commands('win32', path)) {
        expect(line, line).not.toMatch(/\b(chmod|chgrp|rm -r|mkdir -|ls -|mv |unset |ps -p)\b/);
        expect(line).toMatch(/^(Remove-Item|New-Item|Get-Acl|Move-Item|Get-Process|Get-Item)\b/);
      }
    }
  });

  it('on Linux and macOS: POSIX commands, each path one word to sh whatever it holds', () => {
    for (const platform of ['linux', 'darwin'] as const) {
      for (const path of PATHS) {
        // sh reads the quoted path back as exactly one argument, the path itself.
        expect(execFileSync('sh', ['-c', `printf '%s' ${shellQuote(path, platform)}`], { encoding: 'utf8' })).toBe(path);
        expect(shellAdvice(platform).removeFolder(path)).toBe(`rm -r ${shellQuote(path, platform)}`);
      }
    }
  });

  it("PowerShell's quoting: a path with a space or quote is one single-quoted word, quotes doubled", () => {
    for (const path of PATHS) {
      const quoted = shellQuote(path, 'win32');
      if (quoted === path) expect(path).toMatch(/^[\w@%+=:,./\\-]+$/);
      else expect(quoted.slice(1, -1).replaceAll("''", "'")).toBe(path);
    }
  });

  it('claims file --journal in a missing folder says how to create it: New-Item on Windows, mkdir -p elsewhere', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opcli-hint-'));
    try {
      const csv = join(dir, 'c.csv');
      writeFileSync(csv, 'customer.email\n');
      const win = await runOpcli(['claims', 'file', '--from', csv, '--journal', join(dir, 'missing', 'j.jsonl')], {
        env: { OPCLI_CONFIG_DIR: dir },
        platform: 'win32',
      });
      expect(win.code).toBe(2);
      expect(win.stderr).toContain(`New-Item -ItemType Directory -Force ${join(dir, 'missing')}`);
      expect(win.stderr).not.toContain('mkdir');
      const linux = await runOpcli(['claims', 'file', '--from', csv, '--journal', join(dir, 'missing', 'j.jsonl')], {
        env: { OPCLI_CONFIG_DIR: dir },
        platform: 'linux',
      });
      expect(linux.stderr).toContain(`mkdir -p ${join(dir, 'missing')}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('user names from the operating system', () => {
  it('no source file reads /etc/passwd (macOS keeps its users elsewhere)', () => {
    for (const file of sourceFiles()) expect(readFileSync(file, 'utf8'), file).not.toMatch(/['"`]\/etc\/passwd['"`]/);
  });

  it.runIf(typeof process.getuid === 'function')("this process's user is named as os.userInfo() names it; a uid with no user is its number", () => {
    const uid = process.getuid?.() as number;
    expect(describeUid(uid)).toBe(`${userInfo().username} (uid ${uid})`);
    expect(describeUid(3_999_999)).toBe('uid 3999999');
  });

  it.skipIf(osUsersWhy !== undefined)("another user's uid is named by the system's user database", () => {
    const user = createOsUser('opcli-name');
    try {
      expect(describeUid(user.uid)).toBe(`${user.name} (uid ${user.uid})`);
    } finally {
      removeOsUser(user);
    }
  });
});
