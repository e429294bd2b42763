// Merges the chunks that dist/main.js loads on every run into one file, dist/chunks/core.js.
//
// Why: esbuild splits code by which entry points (main.js, and each `import()`) reach it, so the
// modules that main.js imports statically land in ~30 small chunks, one per combination of command
// groups that also use them. main.js loads all of them on every run, and Node's ES module loader
// pays per file (resolve, read, compile cache, link), a share of a one-off's time over the bare
// fetch script (bench/startup.mjs; docs/benchmarks.md#figures-behind-the-code). Rollup would put
// them in main's chunk because they are loaded anyway when an `import()` runs; esbuild does not
// know that, so this step does it.
//
// How: a second esbuild pass bundles those chunks into core.js, in the order main.js imports them
// (so modules run in the same order), re-exporting every name each of them exported, renamed
// `<n>_<name>` by chunk. Every file that imported one of them (main.js and the lazily loaded chunks)
// then imports the renamed names from core.js instead. Each module is still instantiated once.
// The new import statements go on the file's first line (the banner line, empty or holding the
// `require` line) and the old ones are blanked with spaces, so the rest of the file keeps its
// columns and its source map stays right.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';

const IMPORT = /import(?:\{([^}]*)\})?(?:from)?"(\.{1,2}\/[^"]+\.js)";/g;

/** The chunks main.js loads statically, directly or through each other, in main.js's import order. */
function startupChunks(metafile, entry) {
  const order = [];
  const visit = (file) => {
    for (const dep of metafile.outputs[file].imports) {
      if (dep.kind !== 'import-statement' || dep.external || order.includes(dep.path)) continue;
      order.push(dep.path);
      visit(dep.path);
    }
  };
  visit(entry);
  return order;
}

/** A file's own import line rewritten to take the merged chunks' names from `core`. */
function rewriteImports(file, text, merged, coreFile) {
  const fromDir = dirname(file);
  const coreNames = [];
  let imported = false;
  // The imports are the start of the second line (the first is the banner's).
  const lineEnd = text.indexOf('\n');
  const head = /^(?:import[^;]*;)*/.exec(text.slice(lineEnd + 1))[0];
  const rewritten = head.replace(IMPORT, (statement, names, path) => {
    const target = join(fromDir, path);
    const index = merged.indexOf(target);
    if (index < 0) return statement;
    imported = true;
    if (names)
      for (const spec of names.split(',')) {
        const [name, local = name] = spec.split(' as ');
        coreNames.push(`m${index}_${name} as ${local}`);
      }
    return ' '.repeat(statement.length);
  });
  if (!imported) return text;
  let to = relative(fromDir, coreFile);
  if (!to.startsWith('.')) to = `./${to}`;
  const line = coreNames.length ? `import{${coreNames.join(',')}}from"${to}";` : `import"${to}";`;
  return text.slice(0, lineEnd) + line + text.slice(lineEnd, lineEnd + 1) + rewritten + text.slice(lineEnd + 1 + head.length);
}

/**
 * Merges the startup chunks of `entry` (an output path of `metafile`, e.g. dist/main.js) into
 * `coreFile`, written as the build's `options` say, and points every importer at it.
 * Returns the merged chunks' paths.
 */
export async function mergeStartupChunks(metafile, entry, coreFile, options) {
  const merged = startupChunks(metafile, entry);
  for (const [file, output] of Object.entries(metafile.outputs)) {
    const dynamic = output.imports.find((dep) => dep.kind === 'dynamic-import' && merged.includes(dep.path));
    if (dynamic) throw new Error(`build: ${file} loads ${dynamic.path} with import(), but main.js loads it at start-up: cannot merge it`);
  }
  const coreDir = dirname(coreFile);
  const source = merged
    .map((file, index) => {
      const path = `./${relative(coreDir, file)}`;
      const names = metafile.outputs[file].exports;
      return names.length ? `export{${names.map((name) => `${name} as m${index}_${name}`).join(',')}}from"${path}";` : `import"${path}";`;
    })
    .join('\n');
  await build({
    stdin: { contents: source, resolveDir: coreDir, sourcefile: 'startup-chunks.js', loader: 'js' },
    ...options,
    outfile: coreFile,
    bundle: true,
    logLevel: 'warning',
    plugins: [
      {
        // Only the merged chunks are bundled; the lazily loaded ones stay files of their own.
        name: 'keep-lazy-chunks',
        setup(b) {
          b.onResolve({ filter: /^\.{1,2}\// }, (args) =>
            merged.includes(relative(process.cwd(), join(args.resolveDir, args.path))) ? undefined : { path: args.path, external: true },
          );
        },
      },
    ],
  });
  for (const file of Object.keys(metafile.outputs).filter((f) => f.endsWith('.js') && !merged.includes(f))) {
    const text = readFileSync(file, 'utf8');
    const next = rewriteImports(file, text, merged, coreFile);
    if (next !== text) writeFileSync(file, next);
  }
  for (const file of Object.keys(metafile.outputs).filter((f) => f.endsWith('.js') && !merged.includes(f))) {
    const text = readFileSync(file, 'utf8');
    const left = merged.find((chunk) => text.includes(`/${chunk.slice(chunk.lastIndexOf('/') + 1)}"`));
    if (left) throw new Error(`build: ${file} still names ${left}, merged into ${coreFile}`);
  }
  for (const file of merged) {
    rmSync(file);
    rmSync(`${file}.map`, { force: true });
    rmSync(`${file}.LEGAL.txt`, { force: true });
  }
  return merged;
}
