#!/usr/bin/env node
// Bundles src/ into dist/ with esbuild: ESM, code splitting (each command group is its own chunk,
// loaded on use), every library inlined so the published package has no runtime dependencies.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

/**
 * commander requires child_process at load time for executable subcommands, which opcli never
 * uses; loading it (and net, dgram, ...) costs every start-up. Give commander a proxy that
 * requires the real module only if it is ever touched.
 */
const lazyChildProcessForCommander = {
  name: 'lazy-child-process-for-commander',
  setup(b) {
    b.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      /node_modules[\\/]commander[\\/]/.test(args.importer) ? { path: 'child_process', namespace: 'lazy-builtin' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, () => ({
      contents: "let real; module.exports = new Proxy({}, { get: (_, key) => (real ??= require('node:child_process'))[key] });",
      loader: 'js',
    }));
  },
};

/**
 * conf writes atomically through `atomically`, which registers its temp-file cleanup with
 * `when-exit`; when-exit hooks every signal and re-raises it, so the entry's Ctrl-C handler got
 * each Ctrl-C twice and took the echo for a second press. opcli handles SIGINT and SIGTERM itself
 * and always leaves through process 'exit', so the cleanup only needs that event.
 */
const whenExitOnExitOnly = {
  name: 'when-exit-on-exit-only',
  setup(b) {
    b.onResolve({ filter: /^when-exit$/ }, () => ({ path: 'when-exit', namespace: 'opcli-shim' }));
    b.onLoad({ filter: /.*/, namespace: 'opcli-shim' }, () => ({
      contents: "export default function whenExit(callback) { process.once('exit', callback); return () => process.off('exit', callback); }",
      loader: 'js',
    }));
  },
};

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: { main: 'src/main.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  minify: true,
  legalComments: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  // CommonJS libraries inside an ES module bundle still call require() for Node built-ins.
  banner: { js: "import{createRequire as __opcliRequire}from'node:module';const require=__opcliRequire(import.meta.url);" },
  logLevel: 'warning',
  plugins: [lazyChildProcessForCommander, whenExitOnExitOnly],
});

// The top-level help is the same text on every run: render it once (80 columns, as commander does
// for a pipe) so the shim can print it without loading the bundle at all.
const help = execFileSync(process.execPath, ['dist/main.js', '--help'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
writeFileSync('dist/help.txt', help);
