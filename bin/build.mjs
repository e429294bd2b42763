#!/usr/bin/env node
// Bundles src/ into dist/ with esbuild: ESM, code splitting (each command group is its own chunk,
// loaded on use), every library inlined so the published package has no runtime dependencies.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

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
});
