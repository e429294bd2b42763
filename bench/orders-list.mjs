#!/usr/bin/env node
// Benchmark of `opcli orders list --all --jsonl --size 250` over a sandbox store of 100,000 orders,
// against a plain undici loop (Pool + request, same page size, JSON.parse of each page) fetching the
// same pages from the same sandbox in the same run, each in its own process. Prints orders/s of both and their ratio
// in every round (goal >= 0.9 in every round), and opcli's peak RSS (goal <= 100 MiB, read from /proc/<pid>/status
// VmHWM). opcli runs with no V8 flags of its own (no v8.setFlagsFromString, no NODE_OPTIONS).
// On Linux each run's CPU time (user + system, from the children's times in /proc/self/stat) is
// printed too: on a machine busy with other work the wall-time ratio mostly measures who got a core.
// Where nginx is installed (test/infra), the same run behind nginx's `limit_req rate=40r/s` (no burst,
// status 429) in front of the sandbox: pages/s as a share of the limit (goal >= 0.9) at the gateway
// (nginx's log times, first request to last page) and over the whole process, and the pages refused.
// Usage: node bench/orders-list.mjs [orders=100000] [rounds=3]   (build first: node bin/build.mjs)
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { bin, clientCredentialsToken, loadInfra, requireBuild, root, startSandbox, watchPeakRss } from './lib.mjs';

requireBuild();
const ORDERS = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const SIZE = 250;
// ORDERS_BENCH_COMPARE=path: another build's bin shim (main's), run alternately with this one behind nginx.
const COMPARE = process.env.ORDERS_BENCH_COMPARE;

/** CPU time (user + system, ms) of the children reaped so far, where /proc has it. */
function childCpu() {
  if (!existsSync('/proc/self/stat')) return Number.NaN;
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/**
 * The baseline: the same pages with a bare undici Pool, parsing each page, run as its own Node
 * process (as opcli is) so both pay start-up and module loading.
 */
const BASELINE = `
import { Pool } from 'undici';
const pool = new Pool(process.env.URL, { connections: 1 });
let cursor;
let count = 0;
for (;;) {
  const path = '/v1/orders?size=${SIZE}' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : '');
  const res = await pool.request({ method: 'GET', path, headers: { authorization: 'Bearer ' + process.env.TOKEN, accept: 'application/json' } });
  const page = JSON.parse(await res.body.text());
  if (res.statusCode !== 200) throw new Error('baseline: ' + res.statusCode);
  count += page.edges.length;
  if (!page.pageInfo.hasNextPage) break;
  cursor = page.pageInfo.endCursor;
}
await pool.close();
process.stdout.write(String(count));
`;

function baseline(info, token) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c0 = childCpu();
    const child = spawn(process.execPath, ['--input-type=module', '-e', BASELINE], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { PATH: process.env.PATH, URL: info.url, TOKEN: token },
    });
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.on('exit', (code) => {
      const ms = performance.now() - t0;
      if (code !== 0) return reject(new Error(`baseline exited ${code}`));
      resolve({ count: Number(out), ms, cpu: childCpu() - c0 });
    });
    child.on('error', reject);
  });
}

/** opcli itself, output to /dev/null, peak RSS polled from /proc; `url` the base URL (default the sandbox's). */
function opcli(info, token, url = info.url, script = bin) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c0 = childCpu();
    const child = spawn(process.execPath, [script, 'orders', 'list', '--all', '--jsonl', '--size', String(SIZE)], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NO_COLOR: '1',
        OPCLI_TOKEN: token,
        OPCLI_BASE_URL: url,
        OPCLI_CONFIG_DIR: `/tmp/opcli-bench-${process.pid}`,
      },
    });
    let stderr = '';
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    const peak = watchPeakRss(child);
    child.on('exit', (code) => {
      const { peakKiB, largestKiB } = peak();
      const ms = performance.now() - t0;
      if (code !== 0) return reject(new Error(`opcli exited ${code}: ${stderr}`));
      // The footer is the last "N of M orders" line (a CI-style stderr also gets progress sentences); counts have separators.
      const m = [...stderr.matchAll(/^([\d,]+) of ([\d,]+) orders/gm)].at(-1);
      resolve({ count: m ? Number(m[1].replaceAll(',', '')) : Number.NaN, ms, cpu: childCpu() - c0, peakMiB: largestKiB / 1024, treeMiB: peakKiB / 1024 });
    });
    child.on('error', reject);
  });
}

const { child, info } = await startSandbox(['--orders', String(ORDERS), '--trigger-delay', 'never'], `/tmp/opcli-bench-${process.pid}`);
try {
  const token = await clientCredentialsToken(info);
  const runs = { opcli: [], baseline: [] };
  await baseline(info, token); // warm the sandbox (JIT, order generation)
  for (let r = 0; r < ROUNDS; r++) {
    runs.baseline.push(await baseline(info, token));
    runs.opcli.push(await opcli(info, token));
  }
  const rate = (x) => (x.count / x.ms) * 1000;
  for (const x of [...runs.opcli, ...runs.baseline]) if (x.count !== ORDERS) throw new Error(`expected ${ORDERS} orders, got ${x.count}`);
  const ratios = runs.opcli.map((o, i) => rate(o) / rate(runs.baseline[i]));
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const peak = Math.max(...runs.opcli.map((x) => x.peakMiB));
  const tree = Math.max(...runs.opcli.map((x) => x.treeMiB));
  console.log(`node ${process.version}; orders: ${ORDERS}, page size ${SIZE}, ${ROUNDS} rounds interleaved (both include process start)`);
  for (let i = 0; i < ROUNDS; i++) {
    const b = runs.baseline[i];
    const o = runs.opcli[i];
    console.log(
      `round ${i + 1}: baseline ${b.ms.toFixed(0).padStart(6)} ms ${rate(b).toFixed(0).padStart(7)} orders/s | opcli ${o.ms.toFixed(0).padStart(6)} ms ${rate(o).toFixed(0).padStart(7)} orders/s, peak ${o.peakMiB.toFixed(1)} MiB | ratio ${ratios[i].toFixed(2)} | cpu baseline ${b.cpu} ms, opcli ${o.cpu} ms`,
    );
  }
  console.log(`ratio opcli/baseline : median ${median(ratios).toFixed(2)}, worst ${Math.min(...ratios).toFixed(2)}  (goal >= 0.90 every run)`);
  const cpuRatios = runs.opcli.map((o, i) => o.cpu / runs.baseline[i].cpu);
  if (cpuRatios.every(Number.isFinite))
    console.log(`cpu opcli/baseline   : median ${median(cpuRatios).toFixed(2)} (opcli also writes every order as JSON; the baseline only counts them)`);
  console.log(`opcli peak RSS       : ${peak.toFixed(1)} MiB worst, the process doing the work  (goal <= 100 MiB, without v8.setFlagsFromString)`);
  console.log(`                       ${tree.toFixed(1)} MiB with the bin shim that started it (each process's own peak, shared pages counted twice)`);
  const infra = await loadInfra();
  if (infra && COMPARE) {
    // Before/after at the same load: another build's bin and this one, alternated round by round.
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, script] of [
        ['other', COMPARE],
        ['this ', bin],
      ]) {
        const gateway = await infra.startNginx({ upstream: info.url, limitReq: { rate: '40r/s', status: 429 } });
        try {
          const o = await opcli(info, token, gateway.url, script);
          if (o.count !== ORDERS) throw new Error(`behind nginx: expected ${ORDERS} orders, got ${o.count}`);
          await gateway.waitForAccessLog(Math.ceil(ORDERS / SIZE), (e) => e.status === 200, 10_000).catch(() => {});
          const gets = gateway.accessLog().filter((e) => e.method === 'GET');
          const times = gets.map((e) => e.msec);
          const pace = (Math.ceil(ORDERS / SIZE) - 1) / (Math.max(...times) - Math.min(...times)) / 40;
          console.log(
            `behind nginx 40r/s, ${name} build, round ${r + 1}: ${pace.toFixed(2)} at the gateway, ${gets.filter((e) => e.status === 429).length} of ${gets.length} refused`,
          );
        } finally {
          await gateway.stop();
        }
      }
    }
  }
  if (infra) {
    const shares = [];
    const paced = [];
    const refusedShares = [];
    for (let r = 0; r < ROUNDS; r++) {
      const gateway = await infra.startNginx({ upstream: info.url, limitReq: { rate: '40r/s', status: 429 } });
      try {
        const o = await opcli(info, token, gateway.url);
        if (o.count !== ORDERS) throw new Error(`behind nginx: expected ${ORDERS} orders, got ${o.count}`);
        const pages = Math.ceil(ORDERS / SIZE);
        await gateway.waitForAccessLog(pages, (e) => e.status === 200, 10_000).catch(() => {});
        const gets = gateway.accessLog().filter((e) => e.method === 'GET');
        const refused = gets.filter((e) => e.status === 429).length;
        shares.push((pages * 1000) / o.ms / 40);
        // At the gateway, from the first request to the last page (nginx's log time, ms): the pace
        // alone, without the process start that a run of a few seconds weighs heavily.
        const times = gets.map((e) => e.msec);
        const span = Math.max(...times) - Math.min(...times);
        paced.push((pages - 1) / span / 40);
        refusedShares.push((refused / Math.max(1, gets.length)) * 100);
        console.log(
          `behind nginx 40r/s, round ${r + 1}: ${pages} pages in ${(o.ms / 1000).toFixed(1)} s = ${shares.at(-1).toFixed(2)} of the limit (process start included), ${paced.at(-1).toFixed(2)} at the gateway (first request to last page); ${refused} of ${gets.length} requests refused`,
        );
      } finally {
        await gateway.stop();
      }
    }
    console.log(
      `orders list --all behind nginx limit_req 40r/s, no burst, 429: at the gateway median ${median(paced).toFixed(2)} (${Math.min(...paced).toFixed(2)}-${Math.max(...paced).toFixed(2)}) of the limit (goal >= 0.9); with the process start median ${median(shares).toFixed(2)} (${Math.min(...shares).toFixed(2)}-${Math.max(...shares).toFixed(2)}); refused median ${median(refusedShares).toFixed(1)}%`,
    );
  }
} finally {
  child.kill('SIGINT');
}
