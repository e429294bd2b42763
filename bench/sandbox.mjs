#!/usr/bin/env node
// Sandbox speed, moved here from the tests (a speed bound in a test flakes on a loaded machine):
// - how long a 100,000-order store takes to start (goal: < 500 ms);
// - claims per second against 404s per second at concurrency 8, measured interleaved (404, claims,
//   404) so machine noise hits both alike (goal: ratio > 0.35; sync I/O or work that grows with
//   the store would sink it).
// Usage: node bench/sandbox.mjs [claims=2000]   (build first: npm run build)
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Pool } from 'undici';
import { requireBuild, root } from './lib.mjs';

requireBuild();
const total = Number(process.argv[2] ?? 2000);
// The sandbox is bundled into the CLI; here it is bundled on its own from source with esbuild.
const { buildSync } = await import('esbuild');
const out = join(tmpdir(), `opcli-bench-sandbox-${process.pid}.mjs`);
buildSync({ entryPoints: [join(root, 'src/sandbox/index.ts')], bundle: true, platform: 'node', format: 'esm', outfile: out, logLevel: 'error' });
const { startSandbox } = await import(pathToFileURL(out).href);
rmSync(out);

let started = performance.now();
const big = await startSandbox({ orders: 100_000 });
const startMs = performance.now() - started;
await big.close();

const sb = await startSandbox();
const token = sb.issueTokens().access_token;
const pool = new Pool(sb.url, { connections: 8 });
// The valid offline claim body of test/sandbox/client.ts.
const body = JSON.stringify({
  customer: { email: 'alice@example.com', phoneNumber: '+15550100' },
  item: { name: 'Kettle', price: 49.99, sku: 'KT-1', details: 'cracked lid' },
  warranty: { dateOfPurchase: '2024-05-01T10:00:00Z', warrantyPeriod: 'P1Y', receiptRequired: false },
  shippingAddress: { firstName: 'Alice', lastName: 'Example', address1: '1 Main St', city: 'Springfield', zip: '12345', country: 'United States' },
  storeId: sb.store.storeId,
  signature: '',
  salesChannel: 'IN_STORE',
  claimCategory: 'WARRANTY',
  issueType: 'DEFECTIVE_ITEM',
  resolution: 'STORE_CREDIT',
  claimFiledFrom: 'EXTERNAL',
  options: { fromValet: false },
});
const send = (path, expected) => async () => {
  const res = await pool.request({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body,
  });
  await res.body.text();
  if (res.statusCode !== expected) throw new Error(`${path}: ${res.statusCode}`);
};
const rate = async (count, one) => {
  let next = 0;
  started = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < count) {
        next++;
        await one();
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
};
const claim = send('/v1/claims/offline', 200);
const notFound = send('/v1/nothing', 404);
await rate(300, claim);
await rate(300, notFound);
const base1 = await rate(total / 2, notFound);
const claims = await rate(total, claim);
const base2 = await rate(total / 2, notFound);
await pool.close();
await sb.close();
const ratio = claims / ((base1 + base2) / 2);
console.log(`100,000-order store start: ${startMs.toFixed(0)} ms (goal < 500)`);
console.log(`claims ${claims.toFixed(0)}/s, 404s ${((base1 + base2) / 2).toFixed(0)}/s: ratio ${ratio.toFixed(2)} (goal > 0.35)`);
