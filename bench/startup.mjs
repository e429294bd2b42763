#!/usr/bin/env node
// Start-up benchmark: median wall time of `opcli --version` and `opcli --help` against `node -e 0`,
// measured interleaved in the same run so machine noise hits all three alike.
// Usage: node bench/startup.mjs [runs=40]   (build first: npm run build)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = `${root}bin/opcli.js`;
if (!existsSync(`${root}dist/main.js`)) {
  console.error('dist/ is missing: run `npm run build` first.');
  process.exit(1);
}
const runs = Number(process.argv[2] ?? 40);
const cases = {
  'node -e 0': ['-e', '0'],
  'opcli --version': [bin, '--version'],
  'opcli --help': [bin, '--help'],
  // Not part of the goal: a group's help loads commander and that group's chunk, the real lazy path.
  'opcli orders --help': [bin, 'orders', '--help'],
};
const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));

function once(args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, NO_COLOR: '1' } });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`);
  return ms;
}

for (const args of Object.values(cases)) once(args); // warm the file cache
for (let i = 0; i < runs; i++) for (const [name, args] of Object.entries(cases)) times[name].push(once(args));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const base = median(times['node -e 0']);
console.log(`runs per case: ${runs}`);
for (const name of Object.keys(cases)) {
  const m = median(times[name]);
  console.log(`${name.padEnd(20)} median ${m.toFixed(1).padStart(6)} ms   ratio ${(m / base).toFixed(2)}x`);
}
console.log('goal: opcli --version and --help within 1.20x of node -e 0 (both are answered by bin/opcli.js without loading the bundle;');
console.log('      `orders --help` shows the cost of commander plus one lazily loaded command group)');
