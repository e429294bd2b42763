#!/usr/bin/env node
// Benchmark of `opcli claims file --from x.csv --concurrency 16` (10,000 claims, journal and all)
// against what a user would write instead: a hand-written script (csv-parse, JSON.stringify, undici
// at the same concurrency, one result line appended per row; goal >= 0.8), and against the ceiling:
// a bare undici Pool loop posting one prepared claim body (goal >= 0.5). Each is a whole process run
// `runs` times, alternated; medians are printed, with opcli's CPU per row (user+sys, /usr/bin/time). Then the peak RSS of `--validate-only` over a 1,000,000-row CSV (goal <= 100 MiB, read
// from /proc/<pid>/status VmHWM). Then the rate-limited cases: the sandbox allows N requests per second
// per token (50 ms latency), and a batch runs with no tuning flag: claims/s as a share of N (goal >= 0.9)
// and the share of requests answered 429 (goal <= 2%). Then, for context, opcli against the script on a
// server that answers in 5 ms and in 50 ms with no limit, as a real one does (the goals above are
// measured at no latency, where only CPU bounds either).
// For opcli, the script and the loop it also prints the CPU a row costs on the machine: the client's and
// the sandbox's (sampled from /proc before and after each run). Were all bound by the CPU alone, the
// script's (or loop's) cost over opcli's would be opcli's throughput over the script's (or loop's).
// Usage: node bench/claims-batch.mjs [rows=10000] [bigRows=1000000] [server=yes|no] [runs=3] [concurrency=16]   (build first: node bin/build.mjs)
// server=no skips the rate-limited and latency cases.
// CLAIMS_BENCH_PROFILE=DIR also writes a CPU profile of one more opcli batch to DIR (the bin shim passes
// --cpu-prof on to the process it starts with its lean flags) and prints where its time went.
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { bin, clientCredentialsToken, cpuSeconds, requireBuild, startSandbox, watchPeakRss } from './lib.mjs';

// `node bench/claims-batch.mjs --hand-written CSV URL TOKEN CONCURRENCY OUT`: the baseline alone, as its own process.
if (process.argv[2] === '--hand-written') {
  await handWritten(...process.argv.slice(3));
  process.exit(0);
}

requireBuild();
const ROWS = Number(process.argv[2] ?? 10_000);
const BIG_ROWS = Number(process.argv[3] ?? 1_000_000);
const SERVER_CASES = (process.argv[4] ?? 'yes') !== 'no';
const RUNS = Number(process.argv[5] ?? 3);
// opcli's default --concurrency; the hand-written script and the ceiling run at the same.
const CONCURRENCY = Number(process.argv[6] ?? 16);
const work = mkdtempSync(join(tmpdir(), 'opcli-claims-bench-'));
const configDir = join(work, 'config');

/** Removes the record of claims from the config folder (it would hold every row of the last run). */
function forgetClaims() {
  if (!existsSync(configDir)) return;
  for (const name of readdirSync(configDir)) if (name.startsWith('claims-record-')) rmSync(join(configDir, name), { recursive: true, force: true });
}

const HEADER = [
  'customer.email',
  'item.name',
  'item.price',
  'item.details',
  'warranty.dateOfPurchase',
  'warranty.warrantyPeriod',
  'shippingAddress.firstName',
  'shippingAddress.lastName',
  'shippingAddress.address1',
  'shippingAddress.city',
  'shippingAddress.zip',
  'shippingAddress.country',
  'storeId',
  'signature',
  'salesChannel',
  'claimCategory',
  'issueType',
  'resolution',
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

/**
 * What a user would write instead of opcli: read the CSV with csv-parse, build each claim with
 * JSON.stringify, post it with undici at the given concurrency, append one result line per row.
 */
async function handWritten(csv, url, token, concurrency, outPath) {
  const { parse } = await import('csv-parse');
  const out = createWriteStream(outPath);
  const pool = new Pool(url, { connections: Number(concurrency) });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}`, accept: 'application/json' };
  const rows = createReadStream(csv)
    .pipe(parse({ columns: true }))
    [Symbol.asyncIterator]();
  let failed = 0;
  const worker = async () => {
    for (let next = await rows.next(); !next.done; next = await rows.next()) {
      const r = next.value;
      const claim = {
        customer: { email: r['customer.email'] },
        item: { name: r['item.name'], price: Number(r['item.price']), details: r['item.details'] },
        warranty: { dateOfPurchase: r['warranty.dateOfPurchase'], warrantyPeriod: r['warranty.warrantyPeriod'] },
        shippingAddress: {
          firstName: r['shippingAddress.firstName'],
          lastName: r['shippingAddress.lastName'],
          address1: r['shippingAddress.address1'],
          city: r['shippingAddress.city'],
          zip: r['shippingAddress.zip'],
          country: r['shippingAddress.country'],
        },
        storeId: r.storeId,
        signature: r.signature,
        salesChannel: r.salesChannel,
        claimCategory: r.claimCategory,
        issueType: r.issueType,
        resolution: r.resolution,
      };
      const res = await pool.request({ method: 'POST', path: '/v1/claims/offline', headers, body: JSON.stringify(claim) });
      const body = await res.body.json();
      if (res.statusCode !== 200) failed++;
      out.write(`${JSON.stringify({ email: claim.customer.email, status: res.statusCode, sourceOrderId: body.payload?.sourceOrderId })}\n`);
    }
  };
  await Promise.all(Array.from({ length: Number(concurrency) }, worker));
  await new Promise((r) => out.end(r));
  await pool.close();
  if (failed) throw new Error(`${failed} hand-written requests failed`);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const range = (xs, d = 2) => `median ${median(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}-${Math.max(...xs).toFixed(d)})`;

/** Runs a node script (the built binary by default); resolves with exit code, stderr, wall time, peak RSS (VmHWM, KiB) and CPU seconds. */
function runOpcli(args, env, script = bin, nodeFlags = []) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    // /usr/bin/time counts the CPU of the process and of the children it waited for (the bin shim's second process).
    const timeFile = join(work, `time-${process.hrtime.bigint()}.txt`);
    const timed = existsSync('/usr/bin/time');
    const node = [process.execPath, ...nodeFlags, script, ...args];
    const [cmd, argv] = timed ? ['/usr/bin/time', ['-f', '%U %S', '-o', timeFile, ...node]] : [node[0], node.slice(1)];
    const child = spawn(cmd, argv, { stdio: ['ignore', 'ignore', 'pipe'], env });
    let stderr = '';
    const peak = watchPeakRss(child);
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.on('close', (code) => {
      const cpu =
        timed && existsSync(timeFile)
          ? readFileSync(timeFile, 'utf8')
              .trim()
              .split('\n')
              .at(-1)
              .split(' ')
              .map(Number)
              .reduce((a, b) => a + b, 0)
          : Number.NaN;
      resolve({ code, stderr, ms: Number(process.hrtime.bigint() - started) / 1e6, hwmKiB: peak().largestKiB, cpu });
    });
    child.on('error', reject);
  });
}

/** One request to the sandbox's admin API (configure, reset-log, requests); its JSON answer. */
async function admin(info, method, path, body) {
  const pool = new Pool(info.url);
  const res = await pool.request({
    method,
    path,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await res.body.json();
  await pool.close();
  if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(answer)}`);
  return answer;
}

/** A batch against a server that allows `perSecond` per token: the share of the limit reached and of requests refused. */
async function limitedCase(info, env, { perSecond, retryAfter, rows, concurrency }) {
  await admin(info, 'POST', '/__admin/configure', { rateLimit: { perSecond, retryAfter }, latencyMs: 50 });
  await admin(info, 'POST', '/__admin/reset-log');
  const csv = join(work, `limited-${perSecond}-${retryAfter}-${concurrency ?? 'default'}.csv`);
  await writeCsv(csv, rows, info.storeId);
  const run = await runOpcli(['claims', 'file', '--from', csv, ...(concurrency ? ['--concurrency', String(concurrency)] : [])], env);
  const requests = (await admin(info, 'GET', '/__admin/requests?path=/v1/claims/offline')).filter((r) => r.method === 'POST');
  await admin(info, 'POST', '/__admin/configure', { rateLimit: null, latencyMs: 0 });
  const refused = requests.filter((r) => r.status === 429).length;
  const filed = requests.filter((r) => r.status === 200 || r.status === 201).length;
  const share = (filed * 1000) / run.ms / perSecond;
  console.log(
    `limit ${perSecond}/s${retryAfter ? '' : ' (429 without Retry-After)'}${concurrency ? `, --concurrency ${concurrency}` : ''}: ${filed} of ${rows} filed in ${(run.ms / 1000).toFixed(1)} s (exit ${run.code}) = ${share.toFixed(2)} of the limit (goal >= 0.90); ${refused} of ${requests.length} requests answered 429 = ${((refused / Math.max(1, requests.length)) * 100).toFixed(1)}% (goal <= 2%)`,
  );
}

/**
 * opcli and the hand-written script, alternated, against a server that answers in `latencyMs` with no
 * limit: what a user sees against a real server, where the round trip rather than the CPU bounds both.
 */
async function latencyCase(info, env, token, { latencyMs, rows, runs }) {
  await admin(info, 'POST', '/__admin/configure', { latencyMs });
  const csv = join(work, `latency-${latencyMs}.csv`);
  await writeCsv(csv, rows, info.storeId);
  const opcli = [];
  const hand = [];
  for (let i = 0; i < runs; i++) {
    rmSync(`${csv}.journal.jsonl`, { force: true });
    forgetClaims();
    const run = await runOpcli(['claims', 'file', '--from', csv, '--concurrency', String(CONCURRENCY)], env);
    if (run.code !== 0) throw new Error(`opcli exited ${run.code}: ${run.stderr}`);
    const script = await runOpcli(['--hand-written', csv, info.url, token, String(CONCURRENCY), join(work, 'hand.jsonl')], env, fileURLToPath(import.meta.url));
    if (script.code !== 0) throw new Error(`the hand-written script exited ${script.code}: ${script.stderr}`);
    opcli.push((rows * 1000) / run.ms);
    hand.push((rows * 1000) / script.ms);
  }
  await admin(info, 'POST', '/__admin/configure', { latencyMs: 0 });
  console.log(
    `latency ${latencyMs} ms, no limit, ${rows} rows, --concurrency ${CONCURRENCY} (at most ${Math.round((CONCURRENCY * 1000) / latencyMs)}/s): opcli ${range(opcli, 0)} claims/s, the hand-written script ${range(hand, 0)}: ${range(
      opcli.map((o, i) => o / hand[i]),
    )} of the script (context: the 0.8 goal is measured at no latency)`,
  );
}

/**
 * The ceiling: one valid body posted n times at the given concurrency over a keep-alive Pool, in this
 * process; its rate and the CPU a request costs the machine.
 */
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
  const cpu = process.cpuUsage();
  const served = cpuSeconds(sandbox.pid);
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
  const used = process.cpuUsage(cpu);
  // CPU ms a request costs the machine: this process's (the loop runs here, started already) and the sandbox's.
  const machine = ((used.user + used.system) / 1000 + (cpuSeconds(sandbox.pid) - served) * 1000) / n;
  await pool.close();
  if (failed) throw new Error(`${failed} ceiling requests failed`);
  return { ms, rate: (n * 1000) / ms, machine };
}

/**
 * Where a CPU profile's time went: idle, GC, and the rest by function, largest self time first
 * (names are the bundle's; the chunk says which part of opcli: batch, client, undici, lib = csv-parse).
 */
function profileSummary(dir, top = 15) {
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).size - statSync(a).size)[0];
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const { functionName, url, lineNumber } = nodes.get(id).callFrame;
    const name = `${functionName || '(anonymous)'} ${url ? `${url.split('/').slice(-2).join('/')}:${lineNumber + 1}` : ''}`.trim();
    self.set(name, (self.get(name) ?? 0) + dt);
    total += dt;
  });
  const idle = self.get('(idle)') ?? 0;
  console.log(`profile ${file}: ${(total / 1000).toFixed(0)} ms, of which ${(idle / 1000).toFixed(0)} ms idle; busy time by function (self):`);
  for (const [name, us] of [...self]
    .filter(([n]) => n !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)) {
    console.log(`  ${(us / 1000).toFixed(0).padStart(6)} ms ${((us / (total - idle)) * 100).toFixed(1).padStart(5)}%  ${name}`);
  }
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
console.log(`load average at the start: ${load()} (${process.version})`);
const { child: sandbox, info } = await startSandbox(['--trigger-delay', 'never'], configDir);
try {
  const token = await clientCredentialsToken(info);
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', OPCLI_CONFIG_DIR: configDir, OPCLI_BASE_URL: info.url, OPCLI_TOKEN: token };
  const csv = join(work, 'claims.csv');
  await writeCsv(csv, ROWS, info.storeId);

  // Warm the server's JIT so the first run measured does not pay for it alone.
  await ceiling(info, token, 500);

  const opcliRates = [];
  const cpuPerRow = [];
  const handRates = [];
  const ceilingRates = [];
  const vsHand = [];
  const vsCeiling = [];
  /** CPU ms per row on the whole machine: the client's process tree and the sandbox's, per run. */
  const opcliMachine = [];
  const handMachine = [];
  const loopMachine = [];
  for (let i = 0; i < RUNS; i++) {
    // A fresh journal and record of claims each run: every row is sent.
    rmSync(`${csv}.journal.jsonl`, { force: true });
    forgetClaims();
    let served = cpuSeconds(sandbox.pid);
    const run = await runOpcli(['claims', 'file', '--from', csv, '--concurrency', String(CONCURRENCY)], env);
    const opcliServer = cpuSeconds(sandbox.pid) - served;
    if (run.code !== 0) throw new Error(`opcli exited ${run.code}: ${run.stderr}`);
    served = cpuSeconds(sandbox.pid);
    const hand = await runOpcli(['--hand-written', csv, info.url, token, String(CONCURRENCY), join(work, 'hand.jsonl')], env, fileURLToPath(import.meta.url));
    const handServer = cpuSeconds(sandbox.pid) - served;
    if (hand.code !== 0) throw new Error(`the hand-written script exited ${hand.code}: ${hand.stderr}`);
    const base = await ceiling(info, token, ROWS);
    const o = (ROWS * 1000) / run.ms;
    const h = (ROWS * 1000) / hand.ms;
    const perRow = (seconds) => (seconds * 1000) / ROWS;
    opcliRates.push(o);
    cpuPerRow.push(perRow(run.cpu));
    handRates.push(h);
    ceilingRates.push(base.rate);
    vsHand.push(o / h);
    vsCeiling.push(o / base.rate);
    opcliMachine.push(perRow(run.cpu + opcliServer));
    handMachine.push(perRow(hand.cpu + handServer));
    loopMachine.push(base.machine);
    console.log(
      `run ${i + 1}: opcli ${o.toFixed(0)} claims/s (CPU ${perRow(run.cpu).toFixed(3)} ms/row + sandbox ${perRow(opcliServer).toFixed(3)}, peak RSS ${(run.hwmKiB / 1024).toFixed(1)} MiB), hand-written ${h.toFixed(0)} claims/s (CPU ${perRow(hand.cpu).toFixed(3)} ms/row + sandbox ${perRow(handServer).toFixed(3)}), ceiling ${base.rate.toFixed(0)} req/s`,
    );
  }
  console.log(
    `opcli claims file, ${ROWS} rows, --concurrency ${CONCURRENCY}: ${range(opcliRates, 0)} claims/s; CPU per row ${range(cpuPerRow, 3)} ms (goal <= 0.205)`,
  );
  console.log(
    `vs the hand-written script (csv-parse, JSON.stringify, undici, a result line per row; ${range(handRates, 0)} claims/s): ${range(vsHand)} (goal >= 0.8)`,
  );
  console.log(`vs a bare undici loop re-posting one prepared body (${range(ceilingRates, 0)} req/s): ${range(vsCeiling)} (goal >= 0.5)`);
  if ([...opcliMachine, ...handMachine, ...loopMachine].every(Number.isFinite)) {
    console.log(
      `CPU a row costs the machine (client + sandbox): opcli ${range(opcliMachine, 3)} ms, the script ${range(handMachine, 3)} ms, the loop ${range(loopMachine, 3)} ms; were all three bound by the CPU alone (${availableParallelism()} cores here), opcli would reach ${range(
        opcliMachine.map((o, i) => handMachine[i] / o),
      )} of the script's claims/s and ${range(opcliMachine.map((o, i) => loopMachine[i] / o))} of the loop's`,
    );
  }
  console.log(`load average after the runs: ${load()}`);
  const profileDir = process.env.CLAIMS_BENCH_PROFILE;
  if (profileDir) {
    mkdirSync(profileDir, { recursive: true });
    rmSync(`${csv}.journal.jsonl`, { force: true });
    forgetClaims();
    const run = await runOpcli(['claims', 'file', '--from', csv, '--concurrency', String(CONCURRENCY)], env, bin, [
      '--cpu-prof',
      `--cpu-prof-dir=${profileDir}`,
    ]);
    if (run.code !== 0) throw new Error(`opcli exited ${run.code}: ${run.stderr}`);
    profileSummary(profileDir);
  }

  const big = join(work, 'big.csv');
  await writeCsv(big, BIG_ROWS, info.storeId);
  const check = await runOpcli(['claims', 'file', '--from', big, '--validate-only'], env);
  if (check.code !== 0) throw new Error(`--validate-only exited ${check.code}: ${check.stderr.slice(0, 500)}`);
  console.log(
    `--validate-only over ${BIG_ROWS.toLocaleString('en-US')} rows: ${(check.ms / 1000).toFixed(1)} s (${((BIG_ROWS * 1000) / check.ms).toFixed(0)} rows/s), peak RSS ${(check.hwmKiB / 1024).toFixed(1)} MiB (goal <= 100 MiB)`,
  );
  if (SERVER_CASES) {
    await limitedCase(info, env, { perSecond: 40, retryAfter: true, rows: 1000 });
    await limitedCase(info, env, { perSecond: 40, retryAfter: false, rows: 1000 });
    await limitedCase(info, env, { perSecond: 40, retryAfter: true, rows: 1000, concurrency: 32 });
    await limitedCase(info, env, { perSecond: 200, retryAfter: true, rows: 4000 });
    for (const latencyMs of [5, 50]) await latencyCase(info, env, token, { latencyMs, rows: 4000, runs: Math.min(RUNS, 3) });
  }
} finally {
  sandbox.kill('SIGINT');
  rmSync(work, { recursive: true, force: true });
}
