#!/usr/bin/env node
// Benchmark of `opcli claims file --from x.csv --concurrency 8` (10,000 claims, journal and all)
// against the ceiling: a bare undici Pool loop posting one valid claim body to the same sandbox
// endpoint at the same concurrency, in the same run. Prints claims/s, req/s and their ratio (goal
// >= 0.5); then the peak RSS of `--validate-only` over a 1,000,000-row CSV (goal <= 100 MiB, read
// from /proc/<pid>/status VmHWM).
// Usage: node bench/claims-batch.mjs [rows=10000] [bigRows=1000000]   (build first: node bin/build.mjs)
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { bin, clientCredentialsToken, requireBuild, startSandbox, watchPeakRss } from './lib.mjs';

requireBuild();
const ROWS = Number(process.argv[2] ?? 10_000);
const BIG_ROWS = Number(process.argv[3] ?? 1_000_000);
const CONCURRENCY = 8;
const work = mkdtempSync(join(tmpdir(), 'opcli-claims-bench-'));
const configDir = join(work, 'config');

const HEADER = [
  'customer.email', 'item.name', 'item.price', 'item.details', 'warranty.dateOfPurchase', 'warranty.warrantyPeriod',
  'shippingAddress.firstName', 'shippingAddress.lastName', 'shippingAddress.address1', 'shippingAddress.city',
  'shippingAddress.zip', 'shippingAddress.country', 'storeId', 'signature', 'salesChannel', 'claimCategory', 'issueType', 'resolution',
];
const rowText = (i, storeId) =>
  `customer${i}@example.com,Kettle ${i},49.99,"row ${i}, lid cracked",2024-05-01T10:00:00Z,P1Y,Alice,Example,1 Main St,Springfield,62701,United States,${storeId},,IN_STORE,WARRANTY,DEFECTIVE_ITEM,RESHIP\n`;

/** Writes an n-row CSV through a stream, honouring backpressure. */
async function writeCsv(path, n, storeId) {
  const out = createWriteStream(path);
  out.write(`${HEADER.join(',')}\n`);
  for (let i = 1; i <= n; i++) {
    if (!out.write(rowText(i, storeId))) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r) => out.end(r));
}

/** Runs the built binary; resolves with exit code, stderr, wall time and peak RSS (VmHWM, KiB). */
function runOpcli(args, env) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env });
    let stderr = '';
    const peak = watchPeakRss(child);
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.on('close', (code) => {
      resolve({ code, stderr, ms: Number(process.hrtime.bigint() - started) / 1e6, hwmKiB: peak().largestKiB });
    });
    child.on('error', reject);
  });
}

/** The ceiling: one valid body posted n times at the given concurrency over a keep-alive Pool. */
async function ceiling(info, token, n) {
  const pool = new Pool(info.url, { connections: CONCURRENCY });
  const body = JSON.stringify({
    customer: { email: 'alice@example.com' },
    item: { name: 'Kettle', price: 49.99, details: 'row 0, lid cracked' },
    warranty: { dateOfPurchase: '2024-05-01T10:00:00Z', warrantyPeriod: 'P1Y' },
    shippingAddress: { firstName: 'Alice', lastName: 'Example', address1: '1 Main St', city: 'Springfield', zip: '62701', country: 'United States' },
    storeId: info.storeId,
    signature: '',
    salesChannel: 'IN_STORE',
    claimCategory: 'WARRANTY',
    issueType: 'DEFECTIVE_ITEM',
    resolution: 'RESHIP',
  });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}`, accept: 'application/json' };
  let next = 0;
  let failed = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        next++;
        const res = await pool.request({ method: 'POST', path: '/v1/claims/offline', headers, body });
        await res.body.json();
        if (res.statusCode !== 200) failed++;
      }
    }),
  );
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  await pool.close();
  if (failed) throw new Error(`${failed} ceiling requests failed`);
  return { ms, rate: (n * 1000) / ms };
}

const { child: sandbox, info } = await startSandbox(['--trigger-delay', 'never'], configDir);
try {
  const token = await clientCredentialsToken(info);
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', OPCLI_CONFIG_DIR: configDir, OPCLI_BASE_URL: info.url, OPCLI_TOKEN: token };
  const csv = join(work, 'claims.csv');
  await writeCsv(csv, ROWS, info.storeId);

  // Warm both paths briefly so neither pays for a cold JIT alone.
  await ceiling(info, token, 500);

  const run = await runOpcli(['claims', 'file', '--from', csv, '--concurrency', String(CONCURRENCY)], env);
  if (run.code !== 0) throw new Error(`opcli exited ${run.code}: ${run.stderr}`);
  const opcliRate = (ROWS * 1000) / run.ms;
  const base = await ceiling(info, token, ROWS);
  console.log(`opcli claims file: ${ROWS} claims in ${(run.ms / 1000).toFixed(2)} s = ${opcliRate.toFixed(0)} claims/s (whole process, journal fsync'd; peak RSS ${(run.hwmKiB / 1024).toFixed(1)} MiB)`);
  console.log(`ceiling (undici Pool, concurrency ${CONCURRENCY}): ${ROWS} requests in ${(base.ms / 1000).toFixed(2)} s = ${base.rate.toFixed(0)} req/s`);
  console.log(`ratio: ${(opcliRate / base.rate).toFixed(2)} (goal >= 0.5)`);

  const big = join(work, 'big.csv');
  await writeCsv(big, BIG_ROWS, info.storeId);
  const check = await runOpcli(['claims', 'file', '--from', big, '--validate-only'], env);
  if (check.code !== 0) throw new Error(`--validate-only exited ${check.code}: ${check.stderr.slice(0, 500)}`);
  console.log(
    `--validate-only over ${BIG_ROWS.toLocaleString('en-US')} rows: ${(check.ms / 1000).toFixed(1)} s (${((BIG_ROWS * 1000) / check.ms).toFixed(0)} rows/s), peak RSS ${(check.hwmKiB / 1024).toFixed(1)} MiB (goal <= 100 MiB)`,
  );
} finally {
  sandbox.kill('SIGINT');
  rmSync(work, { recursive: true, force: true });
}
