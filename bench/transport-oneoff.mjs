#!/usr/bin/env node
// What one request costs a one-off, by transport: a fresh Node process sends one GET to a local
// server and prints the JSON, through (a) node:http with a keep-alive agent, (b) Node's built-in
// fetch (undici shipped inside Node: nothing to load from disk), the undici package bundled by
// esbuild (as dist/ would carry it): (c) its Agent module alone through dispatch(), as opcli's
// HTTP core loads it, (d) its index (the public entry), Agent + request. Each process reports its own CPU time
// (process.cpuUsage at exit: start-up included); the cases run interleaved, medians printed,
// with `node -e 0` as the floor.
// Usage: node bench/transport-oneoff.mjs [runs=20]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { root } from './lib.mjs';

const runs = Number(process.argv[2] ?? 20);
const dir = mkdtempSync(join(tmpdir(), 'opcli-transport-'));
const body = JSON.stringify({ edges: Array.from({ length: 5 }, (_, i) => ({ node: { id: `ord_${i}`, total: 10 + i } })), pageInfo: { hasNextPage: false } });
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(body);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}/v1/orders?size=5`;
const report = `process.on('exit', () => { const u = process.cpuUsage(); process.stderr.write(String((u.user + u.system) / 1000)); });\n`;
const scripts = {
  'node:http': `${report}import { createRequire } from 'node:module';
const http = createRequire(import.meta.url)('node:http');
const agent = new http.Agent({ keepAlive: true });
const text = await new Promise((resolve, reject) => {
  const req = http.request(process.env.URL, { headers: { accept: 'application/json' }, agent }, (res) => {
    const chunks = []; res.on('data', (c) => chunks.push(c)); res.on('end', () => resolve(Buffer.concat(chunks).toString()));
  });
  req.on('error', reject); req.end();
});
process.stdout.write(JSON.stringify(JSON.parse(text)) + '\\n'); agent.destroy();
`,
  'built-in fetch': `${report}const res = await fetch(process.env.URL, { headers: { accept: 'application/json' }, redirect: 'manual' });
process.stdout.write(JSON.stringify(JSON.parse(await res.text())) + '\\n');
`,
  // What opcli's HTTP core loads: undici's Agent module alone (src/http/client.ts), through dispatch().
  'bundled Agent module': `${report}import Agent from 'undici/lib/dispatcher/agent.js';
const agent = new Agent({ connections: 16 });
const u = new URL(process.env.URL);
const text = await new Promise((resolve, reject) => {
  const chunks = [];
  agent.dispatch({ origin: u.origin, path: u.pathname + u.search, method: 'GET', headers: { accept: 'application/json' } }, {
    onRequestStart() {}, onResponseStart() {}, onResponseData: (_c, chunk) => chunks.push(chunk), onResponseEnd: () => resolve(Buffer.concat(chunks).toString()), onResponseError: (_c, e) => reject(e),
  });
});
process.stdout.write(JSON.stringify(JSON.parse(text)) + '\\n'); await agent.close();
`,
  'bundled undici index': `${report}import { Agent } from 'undici';
const agent = new Agent({ connections: 16 });
const u = new URL(process.env.URL);
const res = await agent.request({ origin: u.origin, path: u.pathname + u.search, method: 'GET', headers: { accept: 'application/json' } });
process.stdout.write(JSON.stringify(JSON.parse(await res.body.text())) + '\\n'); await agent.close();
`,
};
const files = { 'node -e 0': null };
// The server runs in this process, so children are spawned asynchronously.
for (const [name, source] of Object.entries(scripts)) {
  const entry = join(dir, `${name.replace(/\W+/g, '-')}.src.mjs`);
  const out = join(dir, `${name.replace(/\W+/g, '-')}.mjs`);
  writeFileSync(entry, source);
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    minify: true,
    outfile: out,
    nodePaths: [join(root, 'node_modules')],
    logLevel: 'error',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  files[name] = out;
}
const samples = Object.fromEntries(Object.keys(files).map((k) => [k, { cpu: [], wall: [] }]));
const run = (name) =>
  new Promise((resolve, reject) => {
    const args = files[name] ? [files[name]] : ['-e', 'const u = process.cpuUsage(); process.stderr.write(String((u.user + u.system) / 1000))'];
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH, URL: url }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c) => {
      err += c;
    });
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${name}: exited ${code}: ${err.slice(-600)}`));
      samples[name].cpu.push(Number(err));
      samples[name].wall.push(Number(process.hrtime.bigint() - t0) / 1e6);
      resolve();
    });
  });
for (const name of Object.keys(files)) await run(name); // warm the file cache
for (const s of Object.values(samples)) {
  s.cpu.length = 0;
  s.wall.length = 0;
}
for (let i = 0; i < runs; i++) for (const name of Object.keys(files)) await run(name);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
console.log(`node ${process.version}, ${runs} interleaved runs per case (median CPU user+system of the process, and wall time)`);
for (const [name, s] of Object.entries(samples)) {
  console.log(`${name.padEnd(22)} cpu ${median(s.cpu).toFixed(1).padStart(6)} ms   wall ${median(s.wall).toFixed(1).padStart(6)} ms`);
}
server.close();
rmSync(dir, { recursive: true, force: true });
