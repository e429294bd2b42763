#!/usr/bin/env node
// Benchmark of the input side of a claims batch alone (no HTTP, no journal writes): a CSV read into
// claim rows (src/claims/reader.ts) and each row checked and keyed (src/claims/plan.ts, with an empty
// journal), the CPU per row of the process (user+sys, so the GC's and the compiler's threads count).
// Its baseline, in the same run: csv-parse alone with `columns: true` over the same file, as a
// hand-written script reads it. Goal: read + check + key <= 2.5x csv-parse alone: the reader is
// csv-parse itself (its CPU is most of a row's read; the records split by hand until issue 41 made
// it 1.5x), and the figure users see is the batch's, 0.25 ms CPU per row (bench/claims-batch.mjs).
// Usage: node bench/claims-reader.mjs [rows=100000] [runs=5]
// CLAIMS_READER_BASE=/other/worktree also measures that worktree's src/ (say main's), alternating
// runs with this one's, for a before/after at the same load.
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { root } from './lib.mjs';

const ROWS = Number(process.argv[2] ?? 100_000);
const RUNS = Number(process.argv[3] ?? 5);
const BASE = process.env.CLAIMS_READER_BASE;
const GOAL = 2.5;
// The bin shim runs a batch with a 4 MB young generation (bin/opcli.cjs): the GC counts as it would there.
const NODE_FLAGS = ['--max-semi-space-size=4'];

/** The child's program: reads the CSV in one mode and prints its CPU time (µs, user+sys). */
const ENTRY = `
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import { openSource } from './src/claims/reader.ts';
import { Planner } from './src/claims/plan.ts';
const [csv, mode, journalPath] = process.argv.slice(2);
const start = process.cpuUsage();
let n = 0;
if (mode === 'csv-parse') {
  for await (const record of createReadStream(csv).pipe(parse({ columns: true }))) if (record) n++;
} else {
  const source = await openSource(createReadStream(csv), 'csv', { label: csv });
  // An empty record of claims: every row is new, as in a first run (the planner asks it for each row).
  const EMPTY_RECORD = { startRun() {}, lookup: () => undefined, batchRow: () => undefined, similar: () => undefined };
  const planner = mode === 'plan' ? new Planner({ batch: journalPath, batchRow: () => undefined }, { allowSimilar: false, retryUncertain: false, record: EMPTY_RECORD }) : undefined;
  for await (const row of source.rows) {
    if (planner) {
      const planned = await planner.plan(row);
      if (!planned.send) throw new Error('row ' + row.line + ' not planned to send: ' + JSON.stringify(planned.result));
    }
    n++;
  }
}
const used = process.cpuUsage(start);
process.stdout.write(JSON.stringify({ n, us: used.user + used.system }));
`;

const HEADER =
  'customer.email,item.name,item.price,item.details,warranty.dateOfPurchase,warranty.warrantyPeriod,shippingAddress.firstName,shippingAddress.lastName,shippingAddress.address1,shippingAddress.city,shippingAddress.zip,shippingAddress.country,storeId,signature,salesChannel,claimCategory,issueType,resolution';
// The rows of bench/claims-batch.mjs.
const rowText = (i) =>
  `customer${i}@example.com,Kettle ${i},49.99,"row ${i}, lid cracked",2024-05-01T10:00:00Z,P1Y,Alice,Example,1 Main St,Springfield,62701,United States,store_1,,IN_STORE,WARRANTY,DEFECTIVE_ITEM,RESHIP\n`;

const work = mkdtempSync(join(tmpdir(), 'opcli-reader-bench-'));
try {
  const csv = join(work, 'claims.csv');
  const out = createWriteStream(csv);
  out.write(`${HEADER}\n`);
  for (let i = 1; i <= ROWS; i++) if (!out.write(rowText(i))) await new Promise((r) => out.once('drain', r));
  await new Promise((r) => out.end(r));

  /** Bundles the entry against a worktree's src/ and node_modules. */
  const bundle = async (tree, name) => {
    const outfile = join(work, `${name}.mjs`);
    await build({
      stdin: { contents: ENTRY, resolveDir: tree, loader: 'ts', sourcefile: 'entry.ts' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile,
      logLevel: 'error',
      banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    });
    return outfile;
  };
  const trees = [['this', await bundle(root, 'this')]];
  if (BASE) trees.push(['base', await bundle(BASE, 'base')]);

  /** µs of CPU per row of one mode, one process. */
  const measure = (script, mode) => {
    const r = spawnSync(process.execPath, [...NODE_FLAGS, script, csv, mode, join(work, 'none.journal.jsonl')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${mode} failed: ${r.stderr}`);
    const { n, us } = JSON.parse(r.stdout);
    if (n !== ROWS) throw new Error(`${mode} read ${n} rows of ${ROWS}`);
    return us / ROWS;
  };
  const figures = new Map();
  const add = (label, v) => figures.set(label, [...(figures.get(label) ?? []), v]);
  const loads = [];
  for (let run = 0; run < RUNS; run++) {
    loads.push(loadavg()[0]);
    add('csv-parse', measure(trees[0][1], 'csv-parse'));
    // Alternate which tree goes first, so a load change does not favour one.
    const order = run % 2 ? [...trees].reverse() : trees;
    for (const [name, script] of order) {
      add(`${name} read`, measure(script, 'read'));
      add(`${name} read+check+key`, measure(script, 'plan'));
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const fmt = (xs) => `median ${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)})`;
  const parse = median(figures.get('csv-parse'));
  console.log(`${ROWS} rows, ${RUNS} runs, ${process.version}, load average ${loads.map((l) => l.toFixed(2)).join(' ')} (1 min, at each run)`);
  for (const [label, xs] of figures) {
    const ratio = label === 'csv-parse' ? '' : `, ${(median(xs) / parse).toFixed(2)}x csv-parse${label.endsWith('key') ? ` (goal <= ${GOAL}x)` : ''}`;
    console.log(`${label.padEnd(20)} CPU µs/row ${fmt(xs)}${ratio}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
