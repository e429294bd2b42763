#!/usr/bin/env node
// A tiny shim: the bundle in dist/ does the work (built by `npm run build`, or on `npm ci` by `prepare`).
// `--version` and every `--help` page are answered without loading the bundle.
import { readFileSync } from 'node:fs';
import module from 'node:module';

const argv = process.argv.slice(2);
const only = argv.length === 1 ? argv[0] : argv.length === 0 ? '' : undefined;
/** `[group [verb]] --help`: the words of a help page rendered at build time (dist/help/). */
const last = argv[argv.length - 1];
const words = (last === '--help' || last === '-h') && argv.length <= 3 ? argv.slice(0, -1) : undefined;
// The pages are 80 columns wide, as commander renders for a pipe; a narrower terminal gets the
// bundle's own rendering.
const fits = !process.stdout.isTTY || (process.stdout.columns ?? 80) >= 80;
let answered = false;
if (only === '--version' || only === '-V') {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`${pkg.version}\n`);
  answered = true;
} else if (fits && (only === '' || words?.every((w) => /^[a-z][a-z-]*$/.test(w)))) {
  const page = only === '' || words.length === 0 ? '../dist/help.txt' : `../dist/help/${words.join(' ')}.txt`;
  try {
    process.stdout.write(readFileSync(new URL(page, import.meta.url), 'utf8'));
    answered = true;
  } catch {
    // Not built yet, an older build, or not a command: the bundle answers.
  }
}
if (!answered) {
  // Node 22.1+ keeps the compiled bundle on disk, which saves most of the module compile time of
  // every later run. Never fatal: an unwritable cache folder only means no cache.
  if (typeof module.enableCompileCache === 'function' && !process.env.NODE_COMPILE_CACHE) {
    try {
      const home = process.env.HOME || process.env.USERPROFILE;
      const base = process.env.XDG_CACHE_HOME || (home ? `${home}/.cache` : undefined);
      if (base) module.enableCompileCache(`${base}/opcli/compile-cache`);
    } catch {
      // no cache
    }
  }
  // With --verbose a stack trace names src/ lines (dist/ ships linked source maps). Enabled only
  // then: reading the maps costs start-up time.
  if (argv.includes('--verbose') && typeof process.setSourceMapsEnabled === 'function') process.setSourceMapsEnabled(true);
  await import('../dist/main.js').catch((error) => {
    if (error && error.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/main.js')) {
      console.error('opcli is not built yet: run `npm run build` in the opcli folder.');
      process.exitCode = 1;
      return;
    }
    throw error;
  });
}
