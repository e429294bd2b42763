/**
 * The packed tarball carries no install-time script: `npm i -g ./opcli-x.tgz` runs nothing and warns
 * about nothing (dist/ is in the tarball already), while `npm ci` in a clone still builds dist/ (the
 * `dependencies` script, which npm runs only in the project itself) and `npm pack` builds it first
 * (`prepack`).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers.js';

/** The scripts npm runs when a package is installed (a file or git tarball runs `prepare` too). */
const INSTALL_TIME = ['preinstall', 'install', 'postinstall', 'prepare'];

const work = mkdtempSync(join(tmpdir(), 'opcli-pack-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function npm(args: string[], cwd: string): { status: number | null; output: string } {
  const r = spawnSync('npm', [...args, '--no-audit', '--no-fund', '--no-update-notifier'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_loglevel: 'warn' },
  });
  return { status: r.status, output: r.stdout + r.stderr };
}

describe('the packed package', () => {
  it('has no install-time script, and installs from the tarball without a warning', () => {
    // --ignore-scripts: dist/ is built already (test/global-setup.ts); prepack would build it again.
    const pack = npm(['pack', '--ignore-scripts', '--pack-destination', work], ROOT);
    expect(pack.status, pack.output).toBe(0);
    const tgz = join(work, pack.output.trim().split('\n').at(-1) as string);
    const manifest = JSON.parse(spawnSync('tar', ['xzf', tgz, '-O', 'package/package.json'], { encoding: 'utf8' }).stdout);
    expect(Object.keys(manifest.scripts ?? {}).filter((s) => INSTALL_TIME.includes(s))).toEqual([]);
    // The same builds still happen in a clone: npm ci (`dependencies`) and npm pack (`prepack`).
    expect(manifest.scripts).toMatchObject({ dependencies: 'node bin/build.mjs', prepack: 'node bin/build.mjs' });

    const install = npm(['install', '--global', '--prefix', join(work, 'global'), tgz], work);
    expect(install.status, install.output).toBe(0);
    expect(install.output).not.toMatch(/install-scripts|allowScripts/);
    const bin = spawnSync(join(work, 'global', 'bin', 'opcli'), ['--version'], { encoding: 'utf8' });
    expect(bin.stdout).toBe(`${manifest.version}\n`);
  });
});
