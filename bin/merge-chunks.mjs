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
// `m<n>_<name>` by chunk. Then esbuild bundles every other file again on its own, with each import
// of a merged chunk resolved to a module that re-exports that chunk's names from core.js (and every
// other import left as it is): esbuild, not text matching, rewrites the imports, and carries each
// file's source map through. Each module is still instantiated once.
import { rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';

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

/** A relative import path from `fromDir` to `file`, as an ES module names it. */
function importPath(fromDir, file) {
  const to = relative(fromDir, file).replaceAll('\\', '/');
  return to.startsWith('.') ? to : `./${to}`;
}

/**
 * Writes `file` again through esbuild, its imports of a merged chunk taken from `coreFile` under the
 * merged names; everything else it imports stays a file of its own.
 */
async function pointAtCore(file, merged, exportsOf, coreFile, options) {
  const fromDir = dirname(file);
  const { metafile } = await build({
    metafile: true,
    ...options,
    entryPoints: [file],
    outfile: file,
    allowOverwrite: true,
    bundle: true,
    logLevel: 'warning',
    plugins: [
      {
        name: 'point-at-core',
        setup(b) {
          b.onResolve({ filter: /^\.{1,2}\// }, (args) => {
            if (args.kind === 'entry-point') return undefined;
            const index = merged.indexOf(relative(process.cwd(), join(args.resolveDir, args.path)));
            if (index < 0) return { path: args.path, external: true };
            return { path: String(index), namespace: 'merged-chunk' };
          });
          b.onLoad({ filter: /.*/, namespace: 'merged-chunk' }, (args) => {
            const index = Number(args.path);
            const names = exportsOf(merged[index]);
            const from = JSON.stringify(importPath(fromDir, coreFile));
            return {
              contents: names.length ? `export { ${names.map((name) => `m${index}_${name} as ${name}`).join(', ')} } from ${from};` : `import ${from};`,
              resolveDir: fromDir,
              loader: 'js',
            };
          });
        },
      },
    ],
  });
  const left = Object.values(metafile.outputs).flatMap((o) =>
    o.imports.filter((dep) => merged.some((chunk) => dep.path.endsWith(chunk.slice(chunk.lastIndexOf('/'))))),
  );
  if (left.length) throw new Error(`build: ${file} still imports ${left[0].path}, merged into ${coreFile}`);
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
  const exportsOf = (chunk) => metafile.outputs[chunk].exports;
  for (const file of Object.keys(metafile.outputs).filter((f) => f.endsWith('.js') && !merged.includes(f))) {
    if (metafile.outputs[file].imports.some((dep) => merged.includes(dep.path))) await pointAtCore(file, merged, exportsOf, coreFile, options);
  }
  for (const file of merged) {
    rmSync(file);
    rmSync(`${file}.map`, { force: true });
    rmSync(`${file}.LEGAL.txt`, { force: true });
  }
  return merged;
}
