/**
 * A release is consistent (CONTRIBUTING.md, "Making a release"): `opcli --version`, package.json,
 * package-lock.json, the man pages and the README's tarball name say one version, and the CHANGELOG
 * has a dated section for it under an `## Unreleased` heading for the work that lands after it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runBinary } from '../helpers.js';

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as { version: string };

describe('the release', () => {
  it('says one version everywhere a user reads it', async () => {
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(JSON.parse(read('package-lock.json')).version).toBe(pkg.version);
    expect(await runBinary(['--version'])).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
    expect(read('man/opcli.1')).toContain(`"opcli ${pkg.version}"`);
    expect(read('README.md')).toContain(`opcli-${pkg.version}.tgz`);
  });

  it('has a dated CHANGELOG section for the version, below an Unreleased heading', () => {
    const headings = read('CHANGELOG.md')
      .split('\n')
      .filter((line) => line.startsWith('## '));
    expect(headings[0]).toBe('## Unreleased');
    expect(headings[1]).toMatch(new RegExp(`^## ${pkg.version.replace(/\./g, '\\.')} - \\d{4}-\\d{2}-\\d{2}$`));
  });
});
