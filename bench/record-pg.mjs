#!/usr/bin/env node
// Benchmark of the team's record in PostgreSQL (issue 42) at the size a busy desk reaches: what one
// `giftcard issue` asks the database (open the record: connect and check the schema; the attempts of
// its key; the 30-day hold of a similar credit; its intent; its outcome; close), against a record of
// 1,000,000 claims and 365,000 credits, and, as its baseline in the same run, against an empty one in
// the same server, alternated run by run. Goal: at most 1.2x the empty record's time (the median of
// the pairs' ratios). The server is test/infra's PostgreSQL with fsync on (`durable`), on loopback.
// Usage: node bench/record-pg.mjs [claims=1000000] [credits=365000] [runs=40]
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { loadPostgresInfra, root } from './lib.mjs';

const CLAIMS = Number(process.argv[2] ?? 1_000_000);
const CREDITS = Number(process.argv[3] ?? 365_000);
const RUNS = Number(process.argv[4] ?? 40);
const GOAL = 1.2;
const ORIGIN = 'https://api.example.com';

/** The record's modules from src/, bundled (the SQL files as text, as bin/build.mjs does). */
async function loadRecord() {
  const cache = join(root, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const outfile = join(cache, `opcli-bench-record-${process.pid}.mjs`);
  await build({
    stdin: {
      contents:
        "export { openRecordDatabase, setupRecord } from './src/record-pg/database.ts'; export { ask, insertIntent } from './src/record-pg/queries.ts'; export { addRows } from './src/record-pg/import.ts';",
      resolveDir: root,
      loader: 'ts',
      sourcefile: 'bench-entry.ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    packages: 'external',
    loader: { '.sql': 'text' },
    logLevel: 'error',
  });
  return import(pathToFileURL(outfile).href);
}

/** Fills a record: `claims` claims and `credits` credits over a year, half of them with an outcome (100,000 rows a statement: psql's own time bound). */
async function fill(pg, database, claims, credits) {
  await pg.admin(
    `INSERT INTO opcli.runs (run, origin, store_id, source, at) SELECT 'run-' || n, '${ORIGIN}', 'st_1', '/data/batch-' || n || '.csv', now() FROM generate_series(0, 999) AS n`,
    database,
  );
  const STEP = 100_000;
  for (let from = 1; from <= claims; from += STEP) {
    const to = Math.min(claims, from + STEP - 1);
    await pg.admin(
      `INSERT INTO opcli.intents (kind, origin, store_id, key, attempt, filing, at, source, run, line, similarity, customer_email, item)
         SELECT 'claim', '${ORIGIN}', 'st_1', 'claim-' || n, 1, 'c-' || n, now() - (n % 365) * interval '1 day', '/data/batch-' || (n % 1000) || '.csv',
                'run-' || (n % 1000), n, 'sim-' || (n % 400000), 'p' || (n % 300000) || '@example.com', 'SKU-' || (n % 5000)
           FROM generate_series(${from}, ${to}) AS n;
       INSERT INTO opcli.outcomes (filing, status, at) SELECT 'c-' || n, 'filed', now() FROM generate_series(${from}, ${to}) AS n WHERE n % 2 = 1`,
      database,
    );
  }
  for (let from = 1; from <= credits; from += STEP) {
    const to = Math.min(credits, from + STEP - 1);
    await pg.admin(
      `INSERT INTO opcli.intents (kind, origin, store_id, key, attempt, filing, at, customer_email, amount_cents, currency, detail)
         SELECT 'credit', '${ORIGIN}', 'st_1', 'shop:s|store:st_1|claim:k' || n, 1, 'g-' || n, now() - (n % 365) * interval '1 day',
                'p' || (n % 300000) || '@example.com', (n % 60) * 500, 'USD', '{"orderNumber":"1001"}'
           FROM generate_series(${from}, ${to}) AS n;
       INSERT INTO opcli.outcomes (filing, status, at) SELECT 'g-' || n, 'issued', now() FROM generate_series(${from}, ${to}) AS n WHERE n % 2 = 1`,
      database,
    );
  }
  // psql -c runs its statements as one transaction, which VACUUM refuses.
  for (const table of ['intents', 'outcomes']) await pg.admin(`VACUUM ANALYZE opcli.${table}`, database);
}

/** Milliseconds of what one `giftcard issue` asks the record, on a fresh pool as a one-off process opens it. */
async function oneIssue(record, member, port, database, i) {
  const started = performance.now();
  const db = await record.openRecordDatabase(
    { url: `postgresql://${member.name}@127.0.0.1:${port}/${database}`, password: member.password },
    { env: {}, cwd: '/' },
    { max: 1 },
  );
  const key = `shop:s|store:st_1|claim:bench-${i}-${randomBytes(3).toString('hex')}`;
  await db.withClient(async (c) => {
    const earlier = await record.ask(c, 'byKey', [ORIGIN, 'st_1', 'credit', key]);
    const since = new Date(Date.now() - 30 * 24 * 3600 * 1000).toISOString();
    await record.ask(c, 'creditHold', [ORIGIN, 'st_1', `p${i % 300000}@example.com`, 2500, 'USD', since, key]);
    const filing = `bench-${randomBytes(6).toString('hex')}`;
    const at = new Date().toISOString();
    const intent = {
      kind: 'credit',
      origin: ORIGIN,
      storeId: 'st_1',
      key,
      attempt: earlier.length + 1,
      filing,
      at,
      customerEmail: `p${i % 300000}@example.com`,
      amountCents: 2500,
      currency: 'USD',
    };
    if ((await record.insertIntent(c, intent)) !== 'inserted') throw new Error('bench: attempt taken');
    await record.addRows(c, 'outcomes', [{ filing, status: 'issued', at, detail: {} }]);
  }, 'bench');
  await db.close();
  return performance.now() - started;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

const infra = await loadPostgresInfra();
const record = await loadRecord();
const pg = await infra.startPostgres({ durable: true });
try {
  const member = { name: `bench_${randomBytes(3).toString('hex')}`, password: randomBytes(12).toString('hex') };
  await pg.admin(`CREATE ROLE ${member.name} LOGIN PASSWORD '${member.password}'`);
  const databases = { empty: 'bench_empty', full: 'bench_full' };
  for (const database of Object.values(databases)) {
    await pg.admin(`CREATE DATABASE ${database}`);
    await record.setupRecord({ url: `postgresql://${pg.superuser}@127.0.0.1:${pg.port}/${database}`, password: pg.superuserPassword }, [member.name], {
      env: {},
      cwd: '/',
    });
  }
  const filling = performance.now();
  await fill(pg, databases.full, CLAIMS, CREDITS);
  console.log(
    `filled ${CLAIMS.toLocaleString('en')} claims and ${CREDITS.toLocaleString('en')} credits in ${((performance.now() - filling) / 1000).toFixed(1)} s`,
  );
  for (let i = 0; i < 3; i++) for (const database of Object.values(databases)) await oneIssue(record, member, pg.port, database, i);
  const times = { empty: [], full: [] };
  const ratios = [];
  for (let i = 0; i < RUNS; i++) {
    // Alternate which goes first, so a drift of the machine's speed falls on both.
    const order = i % 2 ? ['full', 'empty'] : ['empty', 'full'];
    const pair = {};
    for (const which of order) pair[which] = await oneIssue(record, member, pg.port, databases[which], 1000 + i);
    times.empty.push(pair.empty);
    times.full.push(pair.full);
    ratios.push(pair.full / pair.empty);
  }
  const ratio = median(ratios);
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; ${RUNS} pairs`,
  );
  console.log(`one giftcard issue's record work, empty record: median ${median(times.empty).toFixed(2)} ms`);
  console.log(`the same, ${CLAIMS.toLocaleString('en')} claims and ${CREDITS.toLocaleString('en')} credits: median ${median(times.full).toFixed(2)} ms`);
  console.log(`ratio (median of pairs): ${ratio.toFixed(3)}x, goal <= ${GOAL}x: ${ratio <= GOAL ? 'met' : 'NOT met'}`);
} finally {
  await pg.stop();
}
