#!/usr/bin/env node
// Bundles src/ into dist/ with Rolldown: ESM, code splitting (each command group is its own chunk,
// loaded on use; the code every run loads is one chunk, `core`), every library inlined so the
// published package has no runtime dependencies.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'rolldown';

const execFileAsync = promisify(execFile);

/**
 * Each patch below swaps one module for a smaller one. A library update that imports the module
 * another way would make the swap silently do nothing, so every patch counts its hits and the build
 * fails when one never applied.
 */
const applied = new Map();

/** A plugin that gives `pkg`'s imports of a module matching `source` the module `code` instead. */
function swap(name, pkg, source, code) {
  const id = `\0opcli-${name}`;
  const inside = new RegExp(`node_modules[\\\\/]${pkg}[\\\\/]`);
  return {
    name,
    resolveId(specifier, importer) {
      if (!source.test(specifier) || !importer || !inside.test(importer)) return undefined;
      applied.set(name, (applied.get(name) ?? 0) + 1);
      return id;
    },
    load(loading) {
      return loading === id ? code() : undefined;
    },
  };
}

/**
 * commander requires child_process at load time for executable subcommands, which opcli never
 * uses; loading it (and net, dgram, ...) costs every start-up. Give commander a proxy that
 * requires the real module only if it is ever touched.
 */
const lazyChildProcessForCommander = swap(
  'lazy-child-process-for-commander',
  'commander',
  /^(node:)?child_process$/,
  () => "let real; module.exports = new Proxy({}, { get: (_, key) => (real ??= require('node:child_process'))[key] });",
);

/**
 * conf writes atomically through `atomically`, which registers its temp-file cleanup with
 * `when-exit`; when-exit hooks every signal and re-raises it, so the entry's Ctrl-C handler got
 * each Ctrl-C twice and took the echo for a second press. opcli handles SIGINT and SIGTERM itself
 * and always leaves through process 'exit', so the cleanup only needs that event.
 */
const whenExitOnExitOnly = swap(
  'when-exit-on-exit-only',
  'atomically',
  /^when-exit$/,
  () => "export default function whenExit(callback) { process.once('exit', callback); return () => process.off('exit', callback); }",
);

/**
 * conf imports ajv (and ajv-formats) at load time for JSON-schema validation, which it only uses
 * when given a `schema`; opcli never passes one (zod checks every config file). The two are ~200 KB
 * of code that every command reading the config paid for at start-up. They are replaced by a stub
 * that fails loudly if conf ever does try to validate.
 */
const confWithoutAjv = swap(
  'conf-without-ajv',
  'conf',
  /^ajv(-formats)?([\\/].*)?$/,
  () =>
    "const refuse = () => { throw new Error('opcli is built without conf schema validation (ajv); validate with zod instead'); };" +
    'export class Ajv2020 { constructor() { refuse(); } } export default { default: refuse };',
);

/**
 * undici's HTTP/2 client requires node:http2 when it loads, to read header-name constants, though
 * opcli never speaks HTTP/2 (its Agent is made without `allowH2`). node:http2 brings node:tls and
 * a dozen internal modules with it into every run. undici is given the constants as they are in the
 * Node that builds (the same values in every Node: they are HTTP/2's names and error codes), and the
 * real module only if it ever calls anything else.
 */
const lazyHttp2ForUndici = swap('lazy-http2-for-undici', 'undici', /^(node:)?http2$/, async () => {
  const { constants } = await import('node:http2');
  return (
    `const constants = ${JSON.stringify(constants)}; let real;` +
    "module.exports = new Proxy({ constants }, { get: (own, key) => (key === 'constants' ? own.constants : (real ??= require('node:http2'))[key]) });"
  );
});

/**
 * undici calls `assert(condition)` on its request path; node:assert (with its diff printer and
 * colour helpers) is loaded only when a condition fails, which then throws the same AssertionError.
 */
const lazyAssertForUndici = swap(
  'lazy-assert-for-undici',
  'undici',
  /^(node:)?assert$/,
  () =>
    "let real; const load = () => (real ??= require('node:assert'));" +
    'function assert(value, message) { if (!value) load()(value, message); }' +
    // Called directly (no proxy on the request path); any other member is looked up on the real module.
    'Object.setPrototypeOf(assert, new Proxy(Function.prototype, { get: (proto, key, self) => (key in proto ? Reflect.get(proto, key, self) : load()[key]) }));' +
    'module.exports = assert;',
);

/**
 * The start-up checks (src/core/schema-checks.ts) as ajv's standalone code of the same compile, so a
 * one-off whose files and page pass them loads neither zod nor ajv. The module is bundled into a
 * temporary file and run here (Node does not import TypeScript) to call its `standaloneChecks()`.
 */
const standaloneSchemaChecks = {
  name: 'standalone-schema-checks',
  load: {
    filter: { id: /[\\/]src[\\/]core[\\/]schema-checks\.ts$/ },
    async handler(id) {
      const dir = mkdtempSync(join(tmpdir(), 'opcli-checks-'));
      try {
        const file = join(dir, 'checks.mjs');
        await build({ input: id, platform: 'node', logLevel: 'warn', output: { file, format: 'esm' } });
        const { standaloneChecks } = await import(pathToFileURL(file).href);
        return standaloneChecks();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },
};

/**
 * The modules dist/main.js loads on every run: those it imports statically, directly or through
 * each other, read from the module graph once it is complete. The code splitting group `core`
 * below takes them all into one chunk: left to the automatic splitting they land in a chunk per
 * set of command groups that also use them, and Node's ES module loader pays per file
 * (docs/benchmarks.md#figures-behind-the-code).
 */
const ENTRY = resolve('src/cli/main.ts');
const startup = new Set();
const startupModules = {
  name: 'startup-modules',
  buildEnd() {
    const visit = (id) => {
      if (startup.has(id)) return;
      startup.add(id);
      for (const dep of this.getModuleInfo(id)?.importedIds ?? []) visit(dep);
    };
    const entry = [...this.getModuleIds()].find((id) => resolve(id) === ENTRY);
    visit(entry);
    // The entry itself stays in dist/main.js: its code runs the command.
    startup.delete(entry);
    if (startup.size < 50) throw new Error(`build: only ${startup.size} modules found loaded at start-up from ${ENTRY}`);
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

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
const { output } = await build({
  input: { main: 'src/cli/main.ts', 'help-pages': 'src/cli/help-pages.ts' },
  platform: 'node',
  transform: { target: 'node20.19' },
  logLevel: 'warn',
  // The checks' own bundle (standaloneSchemaChecks) takes seconds by design: no timing notice for it.
  checks: { pluginTimings: false },
  plugins: [standaloneSchemaChecks, startupModules, lazyChildProcessForCommander, whenExitOnExitOnly, confWithoutAjv, lazyHttp2ForUndici, lazyAssertForUndici],
  output: {
    dir: 'dist',
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    minify: true,
    codeSplitting: { groups: [{ name: 'core', test: (id) => startup.has(id) }] },
    // Linked maps (dist/**/*.map): only read when source maps are enabled, which the bin shim does
    // for --verbose, so a stack trace names src/ lines without slowing an ordinary start-up. The npm
    // tarball leaves them out (CONTRIBUTING.md, "The package").
    sourcemap: true,
    sourcemapExcludeSources: true,
    // The bundled libraries' licences are in THIRD_PARTY_NOTICES (npm run docs).
    comments: { legal: false },
  },
});
// A patch that never applied while its library is in the bundle means the library changed: stop.
// A patch whose library is no longer bundled at all is only dead code here: say so.
const bundled = (pkg) =>
  output.some((chunk) => chunk.type === 'chunk' && chunk.moduleIds.some((id) => new RegExp(`node_modules[\\\\/]${pkg}[\\\\/]`).test(id)));
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
