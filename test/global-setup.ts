import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The newest modification time of any file below `dir`. */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) latest = Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return latest;
}

/**
 * Builds dist/ before the tests that spawn the real binary, when it is missing or older than src/
 * or the build script, so those tests never run a stale bundle.
 */
export default function setup(): void {
  const root = join(import.meta.dirname, '..');
  const main = join(root, 'dist', 'main.js');
  const stale = !existsSync(main) || statSync(main).mtimeMs < Math.max(newest(join(root, 'src')), statSync(join(root, 'bin', 'build.mjs')).mtimeMs);
  if (stale || process.env.OPCLI_TEST_REBUILD === '1') {
    execFileSync(process.execPath, [join(root, 'bin', 'build.mjs')], { cwd: root, stdio: 'inherit' });
  }
}
