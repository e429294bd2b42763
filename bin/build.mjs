#!/usr/bin/env node
// Bundles src/ into dist/ with esbuild: ESM, code splitting (each command group is its own chunk,
// loaded on use), every library inlined so the published package has no runtime dependencies.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { generateChecks } from './gen-checks.mjs';
import { mergeStartupChunks } from './merge-chunks.mjs';

const execFileAsync = promisify(execFile);

/**
 * Each patch below swaps one module for a smaller one. A library update that imports the module
 * another way would make the swap silently do nothing, so every patch counts its hits and the build
 * fails when one never applied.
 */
const applied = new Map();
function hit(name, result) {
  applied.set(name, (applied.get(name) ?? 0) + 1);
  return result;
}

/**
 * commander requires child_process at load time for executable subcommands, which opcli never
 * uses; loading it (and net, dgram, ...) costs every start-up. Give commander a proxy that
 * requires the real module only if it is ever touched.
 */
const lazyChildProcessForCommander = {
  name: 'lazy-child-process-for-commander',
  setup(b) {
    b.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      /node_modules[\\/]commander[\\/]/.test(args.importer)
        ? hit('lazy-child-process-for-commander', { path: 'child_process', namespace: 'lazy-builtin' })
        : undefined,
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
    b.onResolve({ filter: /^when-exit$/ }, (args) =>
      /node_modules[\\/]atomically[\\/]/.test(args.importer) ? hit('when-exit-on-exit-only', { path: 'when-exit', namespace: 'opcli-shim' }) : undefined,
    );
    b.onLoad({ filter: /^when-exit$/, namespace: 'opcli-shim' }, () => ({
      contents: "export default function whenExit(callback) { process.once('exit', callback); return () => process.off('exit', callback); }",
      loader: 'js',
    }));
  },
};

/**
 * conf imports ajv (and ajv-formats) at load time for JSON-schema validation, which it only uses
 * when given a `schema`; opcli never passes one (zod checks every config file). The two are ~200 KB
 * of code that every command reading the config paid for at start-up. They are replaced by a stub
 * that fails loudly if conf ever does try to validate.
 */
const confWithoutAjv = {
  name: 'conf-without-ajv',
  setup(b) {
    b.onResolve({ filter: /^ajv(-formats)?([\\/].*)?$/ }, (args) =>
      /node_modules[\\/]conf[\\/]/.test(args.importer) ? hit('conf-without-ajv', { path: args.path, namespace: 'opcli-no-ajv' }) : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'opcli-no-ajv' }, () => ({
      contents:
        "const refuse = () => { throw new Error('opcli is built without conf schema validation (ajv); validate with zod instead'); };" +
        'export class Ajv2020 { constructor() { refuse(); } } export default { default: refuse };',
      loader: 'js',
    }));
  },
};

/**
 * undici's HTTP/2 client requires node:http2 when it loads, to read header-name constants, though
 * opcli never speaks HTTP/2 (its Agent is made without `allowH2`). node:http2 brings node:tls and
 * a dozen internal modules with it into every run. undici is given the constants as they are in the
 * Node that builds (the same values in every Node: they are HTTP/2's names and error codes), and the
 * real module only if it ever calls anything else.
 */
const lazyHttp2ForUndici = {
  name: 'lazy-http2-for-undici',
  setup(b) {
    b.onResolve({ filter: /^(node:)?http2$/ }, (args) =>
      /node_modules[\\/]undici[\\/]/.test(args.importer) ? hit('lazy-http2-for-undici', { path: 'http2', namespace: 'lazy-http2' }) : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-http2' }, async () => {
      const { constants } = await import('node:http2');
      return {
        contents:
          `const constants = ${JSON.stringify(constants)}; let real;` +
          "module.exports = new Proxy({ constants }, { get: (own, key) => (key === 'constants' ? own.constants : (real ??= require('node:http2'))[key]) });",
        loader: 'js',
      };
    });
  },
};

/**
 * undici calls `assert(condition)` on its request path; node:assert (with its diff printer and
 * colour helpers) is loaded only when a condition fails, which then throws the same AssertionError.
 */
const lazyAssertForUndici = {
  name: 'lazy-assert-for-undici',
  setup(b) {
    b.onResolve({ filter: /^(node:)?assert$/ }, (args) =>
      /node_modules[\\/]undici[\\/]/.test(args.importer) ? hit('lazy-assert-for-undici', { path: 'assert', namespace: 'lazy-assert' }) : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-assert' }, () => ({
      contents:
        "let real; const load = () => (real ??= require('node:assert'));" +
        'function assert(value, message) { if (!value) load()(value, message); }' +
        // Called directly (no proxy on the request path); any other member is looked up on the real module.
        'Object.setPrototypeOf(assert, new Proxy(Function.prototype, { get: (proto, key, self) => (key in proto ? Reflect.get(proto, key, self) : load()[key]) }));' +
        'module.exports = assert;',
      loader: 'js',
    }));
  },
};

/**
 * The start-up checks (src/core/schema-checks.ts, which says false to everything) replaced by predicates
 * generated from the zod schemas (bin/gen-checks.mjs), so a one-off reading files and a page that
 * pass them never loads zod.
 */
const generatedChecks = {
  name: 'generated-checks',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/]core[\\/]schema-checks\.ts$/ }, async () => ({ contents: await generateChecks(), loader: 'js' }));
  },
};

/** Each patch and the library whose import it rewrites. */
const patches = {
  'lazy-child-process-for-commander': 'commander',
  'when-exit-on-exit-only': 'atomically',
  'conf-without-ajv': 'conf',
  'lazy-http2-for-undici': 'undici',
  'lazy-assert-for-undici': 'undici',
};

/** The first line of every output file: a `require` for the CommonJS code inside the bundle. */
const REQUIRE_LINE = "const require=process.getBuiltinModule('node:module').createRequire(import.meta.url);";

/**
 * esbuild puts the banner on every file, but only the one holding its runtime (`__require`) calls
 * `require`; on each other file it cost a createRequire() per module loaded (~36 for a one-off).
 * The line is blanked, not removed, so the source maps still match.
 */
function keepRequireWhereUsed(outputs) {
  for (const file of Object.keys(outputs).filter((f) => f.endsWith('.js'))) {
    const text = readFileSync(file, 'utf8');
    if (!text.startsWith(`${REQUIRE_LINE}\n`)) throw new Error(`build: ${file} does not start with the require line`);
    if (!/\brequire\b/.test(text.slice(REQUIRE_LINE.length))) writeFileSync(file, text.slice(REQUIRE_LINE.length));
  }
}

/** How every output file is written, by this build and by the merge of the start-up chunks (bin/merge-chunks.mjs). */
const OUTPUT = {
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  minify: true,
  legalComments: 'linked',
  // Linked maps (dist/**/*.map): only read when source maps are enabled, which the bin shim does
  // for --verbose, so a stack trace names src/ lines without slowing an ordinary start-up. The npm
  // tarball leaves them out (CONTRIBUTING.md, "The package").
  sourcemap: 'linked',
  sourcesContent: false,
};

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
const result = await build({
  ...OUTPUT,
  metafile: true,
  entryPoints: { main: 'src/cli/main.ts', 'help-pages': 'src/cli/help-pages.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  // CommonJS libraries inside an ES module bundle still call require() for Node built-ins; only the
  // files that use it keep this line (see keepRequireWhereUsed below).
  banner: { js: REQUIRE_LINE },
  // The record's migrations are numbered SQL files (src/record-pg/migrations/), bundled as text.
  loader: { '.sql': 'text' },
  logLevel: 'warning',
  plugins: [generatedChecks, lazyChildProcessForCommander, whenExitOnExitOnly, confWithoutAjv, lazyHttp2ForUndici, lazyAssertForUndici],
});
keepRequireWhereUsed(result.metafile.outputs);
await mergeStartupChunks(result.metafile, 'dist/main.js', 'dist/chunks/core.js', OUTPUT);
// A patch that never applied while its library is in the bundle means the library changed: stop.
// A patch whose library is no longer bundled at all is only dead code here: say so.
const bundled = (pkg) => Object.keys(result.metafile.inputs).some((file) => file.includes(`node_modules/${pkg}/`));
const missed = Object.entries(patches).filter(([name, pkg]) => !applied.has(name) && bundled(pkg));
for (const [name, pkg] of Object.entries(patches)) {
  if (!applied.has(name) && !bundled(pkg)) console.warn(`build: ${pkg} is no longer bundled; remove the patch ${name} from bin/build.mjs.`);
}
if (missed.length > 0) {
  console.error(`build: the patch(es) ${missed.map(([name]) => name).join(', ')} did not apply: a bundled library changed how it imports the patched module.`);
  console.error('Update the patch in bin/build.mjs to match the library, or remove it if it is no longer needed.');
  process.exit(1);
}

// Help is the same text on every run: render every page once (80 columns, as commander does for a
// pipe) so the shim prints `opcli [group [verb]] --help` without loading the bundle at all.
const { stdout: rendered } = await execFileAsync(process.execPath, ['dist/help-pages.js'], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
rmSync('dist/help-pages.js');
rmSync('dist/help-pages.js.map', { force: true });
const pages = JSON.parse(rendered);
if (!pages[''] || Object.keys(pages).length < 10) {
  console.error(`build: the help pages did not render (${Object.keys(pages).length}).`);
  process.exit(1);
}
writeFileSync('dist/help.txt', pages['']);
mkdirSync('dist/help', { recursive: true });
for (const [words, text] of Object.entries(pages)) if (words) writeFileSync(`dist/help/${words}.txt`, text);
