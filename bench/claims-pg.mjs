#!/usr/bin/env node
// Benchmark of a whole `opcli claims file --from x.csv` (a process, as a person runs it) at the
// sandbox's rate, with the record of claims in the team's PostgreSQL (issue 42: each group of intents
// one transaction committed before its requests leave; every row asked of the database by key and by
// similarity) against the same batch with the file record, in the same run, the two alternating run
// by run. The sandbox allows `rate` claims a second per token and answers in 50 ms (its token bucket,
// as bench/claims-batch.mjs's limited case); each run files rows no earlier run filed. Prints the
// claims/s of each (medians) and their ratio (goal: the database >= 0.95 of the file record).
// test/infra's PostgreSQL with fsync on (`durable`), on loopback.
// Usage: node bench/claims-pg.mjs [rows=400] [rate=40] [runs=3]   (build first: node bin/build.mjs)
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { admin, bin, clientCredentialsToken, loadPostgresInfra, requireBuild, startSandbox } from './lib.mjs';

const ROWS = Number(process.argv[2] ?? 400);
const RATE = Number(process.argv[3] ?? 40);
const RUNS = Number(process.argv[4] ?? 3);
const GOAL = 0.95;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const HEADER =
  'customer.email,item.name,item.price,item.details,warranty.dateOfPurchase,warranty.warrantyPeriod,shippingAddress.firstName,shippingAddress.lastName,shippingAddress.address1,shippingAddress.city,shippingAddress.zip,shippingAddress.country,signature,salesChannel,claimCategory,issueType,resolution';

/** An n-row CSV whose rows no other run has (`tag` in each row's e-mail and details). */
async function writeCsv(path, n, tag) {
  const out = createWriteStream(path);
  out.write(`${HEADER}\n`);
  for (let i = 1; i <= n; i++) {
    const line = `c${tag}-${i}@example.com,Kettle ${i},49.99,"run ${tag} row ${i}",2024-05-01T10:00:00Z,P1Y,Alice,Example,1 Main St,Springfield,62701,United States,,IN_STORE,WARRANTY,DEFECTIVE_ITEM,RESHIP\n`;
    if (!out.write(line)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r) => out.end(r));
}

/** One batch as a process: its claims/s (every row filed, exit 0 required). */
function batch(csv, env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, 'claims', 'file', '--from', csv], { stdio: ['ignore', 'ignore', 'pipe'], env });
    let stderr = '';
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`claims file exited ${code}: ${stderr}`));
      else resolve((ROWS * 1000) / (performance.now() - started));
    });
  });
}

requireBuild();
const infra = await loadPostgresInfra();
const work = mkdtempSync(join(tmpdir(), 'opcli-bench-claims-pg-'));
const pg = await infra.startPostgres({ durable: true });
let sandbox;
try {
  const configDir = join(work, 'config');
  sandbox = await startSandbox(['--write-profile', 'default'], configDir);
  const info = sandbox.info;
  const member = { name: `desk_${randomBytes(3).toString('hex')}`, password: randomBytes(12).toString('hex') };
  await pg.admin(`CREATE ROLE ${member.name} LOGIN PASSWORD '${member.password}'`);
  await pg.admin('CREATE DATABASE bench_claims');
  const setup = spawnSync(
    process.execPath,
    [bin, 'record', 'setup', '--url', `postgresql://${pg.superuser}@127.0.0.1:${pg.port}/bench_claims`, '--member', member.name],
    { env: { ...process.env, PGPASSWORD: pg.superuserPassword, OPCLI_CONFIG_DIR: configDir }, encoding: 'utf8' },
  );
  if (setup.status !== 0) throw new Error(`record setup exited ${setup.status}: ${setup.stderr}`);
  const token = await clientCredentialsToken(info);
  const base = { PATH: process.env.PATH, HOME: '/nonexistent', NO_COLOR: '1', OPCLI_CONFIG_DIR: configDir, OPCLI_BASE_URL: info.url, OPCLI_TOKEN: token };
  const envs = {
    file: base,
    database: { ...base, OPCLI_RECORD_URL: `postgresql://${member.name}:${member.password}@127.0.0.1:${pg.port}/bench_claims` },
  };
  await admin(info, 'POST', '/__admin/configure', { rateLimit: { perSecond: RATE }, latencyMs: 50 });
  const rates = { file: [], database: [] };
  for (let i = 0; i < RUNS; i++) {
    // Alternate which goes first, so a drift of the machine's speed falls on both.
    for (const name of i % 2 ? ['database', 'file'] : ['file', 'database']) {
      const csv = join(work, `${name}-${i}.csv`);
      await writeCsv(csv, ROWS, `${name}${i}`);
      rates[name].push(await batch(csv, envs[name]));
    }
  }
  const m = { file: median(rates.file), database: median(rates.database) };
  const ratio = m.database / m.file;
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; ${ROWS} rows at the sandbox's ${RATE}/s (50 ms latency), medians of ${RUNS}, alternating:`,
  );
  console.log(`  file record: ${m.file.toFixed(1)} claims/s (${rates.file.map((r) => r.toFixed(1)).join(', ')})`);
  console.log(`  record in PostgreSQL: ${m.database.toFixed(1)} claims/s (${rates.database.map((r) => r.toFixed(1)).join(', ')})`);
  console.log(`  the database against the file record: ${ratio.toFixed(3)}x (goal >= ${GOAL}: ${ratio >= GOAL ? 'met' : 'NOT met'})`);
} finally {
  sandbox?.child.kill();
  await pg.stop();
  rmSync(work, { recursive: true, force: true });
}
