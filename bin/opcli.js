#!/usr/bin/env node
// A tiny shim: the bundle in dist/ does the work (built by `npm run build`, or on `npm ci` by `prepare`).
import('../dist/main.js').catch((error) => {
  if (error && error.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/main.js')) {
    console.error('opcli is not built yet: run `npm run build` in the opcli folder.');
    process.exitCode = 1;
    return;
  }
  throw error;
});
