#!/usr/bin/env node
// Benchmark of one whole `giftcard issue` (a process, as a person runs it) with the ledger in the
// team's record in PostgreSQL (issue 42), against the same command with the file ledger, in the same
// run, the cases alternating: the file ledger (empty), the database (empty), and the database holding
// 1,000,000 claims and 365,000 credits (a year of a busy desk, the credits under the sandbox's shop
// and store, so the key and the 30-day hold are asked of full indexes). Prints the medians and two
// ratios: the empty database against the file ledger (what a team pays for the database: a process
// that loads `pg`, connects and checks the schema), and the full database against the empty one
// (goal <= 1.2x: the questions stay indexed). test/infra's PostgreSQL with fsync on, on loopback.
// Then `giftcard history --json` (stdout to /dev/null) over the full database and the empty one: wall
// time and peak RSS (streamed a keyset page at a time: flat memory is the goal); with HISTORY_BEFORE_BIN
// (another build's bin shim, main's), the same for that build, for a before/after on the same database.
// Usage: node bench/giftcard-pg.mjs [claims=1000000] [credits=365000] [runs=15]   (build first: node bin/build.mjs)
import { randomBytes } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { bin, loadPostgresInfra, requireBuild, startSandbox, watchPeakRss } from './lib.mjs';

const CLAIMS = Number(process.argv[2] ?? 1_000_000);
const CREDITS = Number(process.argv[3] ?? 365_000);
const RUNS = Number(process.argv[4] ?? 15);
const GOAL = 1.2;
const SHOP = 'sandbox-store.example';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Fills a record with `claims` claims and `credits` credits over a year, half with an outcome, 100,000 rows a statement. */
async function fill(pg, database, storeId) {
  const STEP = 100_000;
  for (let from = 1; from <= CLAIMS; from += STEP) {
    const to = Math.min(CLAIMS, from + STEP - 1);
    await pg.admin(
      `INSERT INTO opcli.intents (kind, origin, store_id, key, attempt, filing, at, similarity, customer_email, item)
         SELECT 'claim', 'https://api.example.com', 'st_1', 'claim-' || n, 1, 'c-' || n, now() - (n % 365) * interval '1 day',
                'sim-' || (n % 400000), 'p' || (n % 300000) || '@example.com', 'SKU-' || (n % 5000)
           FROM generate_series(${from}, ${to}) AS n;
       INSERT INTO opcli.outcomes (filing, status, at) SELECT 'c-' || n, 'filed', now() FROM generate_series(${from}, ${to}) AS n WHERE n % 2 = 1`,
      database,
    );
  }
  for (let from = 1; from <= CREDITS; from += STEP) {
    const to = Math.min(CREDITS, from + STEP - 1);
    await pg.admin(
      `INSERT INTO opcli.intents (kind, origin, store_id, key, attempt, filing, at, os_user, profile, customer_email, amount_cents, currency, detail)
         SELECT 'credit', '${SHOP}', '${storeId}', 'shop:${SHOP}|store:${storeId}|claim:h-' || n, 1, 'g-' || n, now() - (n % 365) * interval '1 day',
                'support', 'default', 'p' || (n % 36500) || '@example.com', 2500, 'USD',
                jsonb_build_object('claimId', 'H-' || n, 'orderNumber', '2000', 'bonus', false, 'amount', '25.00', 'email', 'p' || (n % 36500) || '@example.com',
                                   'name', 'Customer', 'firstPath', 'credit-api')
           FROM generate_series(${from}, ${to}) AS n;
       INSERT INTO opcli.outcomes (filing, status, at, path) SELECT 'g-' || n, 'issued', now(), 'credit-api-issue' FROM generate_series(${from}, ${to}) AS n`,
      database,
    );
  }
  for (const table of ['intents', 'outcomes']) await pg.admin(`VACUUM ANALYZE opcli.${table}`, database);
}

/** One `giftcard issue` of a new claim and amount: its wall milliseconds (exit 0 required). */
function issue(configDir, env, claim, cents) {
  // Another amount each time: the same amount to the same customer within 30 days is held as similar.
  const argv = [bin, 'giftcard', 'issue', '--claim', claim, '--order', '1001', '--amount', (cents / 100).toFixed(2)];
  argv.push('--email', 'alice@example.com', '--name', 'Alice Example', '--customer-id', 'cust_1001', '--yes');
  const t = performance.now();
  const r = spawnSync(process.execPath, argv, {
    env: { ...process.env, OPCLI_CONFIG_DIR: configDir, NO_COLOR: '1', HOME: '/nonexistent', ...env },
    encoding: 'utf8',
  });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`giftcard issue ${claim} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/** `giftcard history --json` of a build's shim to /dev/null: wall seconds and the peak RSS (MiB) of its largest process. */
async function history(shim, configDir, env) {
  const nul = openSync('/dev/null', 'w');
  const t = performance.now();
  const child = spawn(process.execPath, [shim, 'giftcard', 'history', '--json'], {
    env: { ...process.env, OPCLI_CONFIG_DIR: configDir, NO_COLOR: '1', HOME: '/nonexistent', ...env },
    stdio: ['ignore', nul, 'pipe'],
  });
  const stop = watchPeakRss(child);
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise((r) => child.once('exit', r));
  const { largestKiB } = stop();
  if (code !== 0) throw new Error(`giftcard history --json exited ${code}: ${err}`);
  return { s: (performance.now() - t) / 1000, mib: largestKiB / 1024 };
}

requireBuild();
const infra = await loadPostgresInfra();
const work = mkdtempSync(join(tmpdir(), 'opcli-bench-gcpg-'));
const sandboxes = [];
const pg = await infra.startPostgres({ durable: true });
try {
  const cases = {};
  for (const name of ['file', 'empty', 'full']) {
    const dir = mkdtempSync(join(work, `${name}-`));
    const sandbox = await startSandbox(['--write-profile', 'default', '--trigger-delay', '0ms'], dir);
    sandboxes.push(sandbox.child);
    cases[name] = { dir, env: {}, storeId: sandbox.info.store?.storeId ?? sandbox.info.storeId };
  }
  const member = { name: `desk_${randomBytes(3).toString('hex')}`, password: randomBytes(12).toString('hex') };
  await pg.admin(`CREATE ROLE ${member.name} LOGIN PASSWORD '${member.password}'`);
  for (const name of ['empty', 'full']) {
    const database = `bench_${name}`;
    await pg.admin(`CREATE DATABASE ${database}`);
    // As an administrator does: `opcli record setup`, the password through PGPASSWORD.
    const url = `postgresql://${pg.superuser}@127.0.0.1:${pg.port}/${database}`;
    const setup = spawnSync(process.execPath, [bin, 'record', 'setup', '--url', url, '--member', member.name], {
      env: { ...process.env, PGPASSWORD: pg.superuserPassword, OPCLI_CONFIG_DIR: cases[name].dir },
      encoding: 'utf8',
    });
    if (setup.status !== 0) throw new Error(`record setup exited ${setup.status}: ${setup.stderr}`);
    cases[name].env = { OPCLI_RECORD_URL: `postgresql://${member.name}:${member.password}@127.0.0.1:${pg.port}/${database}` };
  }
  const filling = performance.now();
  await fill(pg, 'bench_full', cases.full.storeId);
  console.log(
    `filled ${CLAIMS.toLocaleString('en')} claims and ${CREDITS.toLocaleString('en')} credits in ${((performance.now() - filling) / 1000).toFixed(1)} s`,
  );
  for (const c of Object.values(cases)) issue(c.dir, c.env, 'C-warm', 1000);
  const times = { file: [], empty: [], full: [] };
  for (let i = 0; i < RUNS; i++) {
    // Rotate which goes first, so a drift of the machine's speed falls on every case.
    const order = ['file', 'empty', 'full'].map((_, k, all) => all[(k + i) % 3]);
    for (const name of order) times[name].push(issue(cases[name].dir, cases[name].env, `C-${i}`, 1001 + i));
  }
  const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; one giftcard issue (a process), medians of ${RUNS}, rotating:`,
  );
  console.log(`  file ledger (empty): ${m.file.toFixed(0)} ms`);
  console.log(`  database, empty: ${m.empty.toFixed(0)} ms (${(m.empty / m.file).toFixed(2)}x the file ledger)`);
  const ratio = m.full / m.empty;
  console.log(
    `  database, ${CLAIMS.toLocaleString('en')} claims and ${CREDITS.toLocaleString('en')} credits: ${m.full.toFixed(0)} ms (${ratio.toFixed(2)}x the empty database, goal <= ${GOAL}x: ${ratio <= GOAL ? 'met' : 'NOT met'})`,
  );
  for (const [label, shim] of [['this build', bin], ...(process.env.HISTORY_BEFORE_BIN ? [['before', process.env.HISTORY_BEFORE_BIN]] : [])]) {
    const none = await history(shim, cases.empty.dir, cases.empty.env);
    const full = await history(shim, cases.full.dir, cases.full.env);
    console.log(
      `  giftcard history --json (${label}) over ${CREDITS.toLocaleString('en')} credits: ${full.s.toFixed(1)} s, peak RSS ${full.mib.toFixed(0)} MiB (empty database: ${none.s.toFixed(2)} s, ${none.mib.toFixed(0)} MiB); load ${loadavg()[0].toFixed(2)}`,
    );
  }
} finally {
  for (const child of sandboxes) child.kill();
  await pg.stop();
  rmSync(work, { recursive: true, force: true });
}
