#!/usr/bin/env node
// Benchmark of the record of business actions against a long history (issue 40), each command against
// the same command on an empty record, in the same run, runs alternating (goal: at most 2x):
// - a record of CLAIMS claims (default 1,000,000) and a gift card ledger of CREDITS credits (365,000: a
//   year at 1,000 a day), both written through the record module (src/record/log.ts: sealed lines, as
//   opcli appends them; the claims as a batch writes them: a run line, intents, outcomes);
// - `claims file --from` a 10-row CSV, one `giftcard issue`, `claims history --email` of one customer;
// - the first command on the long record builds the reader's index (src/record/index-file.ts): printed apart;
// - then the record grown to HUGE claims (2,000,000): the peak RSS and wall time of `claims history --json`
//   (stdout to /dev/null), against the same on the empty record: constant memory is the goal;
// - `giftcard history --json` and `giftcard history` to a pipe over the ledger of CREDITS credits: the
//   same figures, its first run (which builds the ledger's index) and the next.
// Usage: node bench/record-history.mjs [claims=1000000] [credits=365000] [runs=5] [huge=2000000]   (build first: node bin/build.mjs)
// RECORD_BENCH_BIN=path: another build's bin shim (main's, for a before/after on the same records).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { bin, clientCredentialsToken, requireBuild, root, startSandbox, watchPeakRss } from './lib.mjs';

const CLAIMS = Number(process.argv[2] ?? 1_000_000);
const CREDITS = Number(process.argv[3] ?? 365_000);
const RUNS = Number(process.argv[4] ?? 5);
const HUGE = Number(process.argv[5] ?? 2_000_000);
const GOAL = 2;
const BIN = process.env.RECORD_BENCH_BIN ?? bin;
/** Customers of the long record: one in CUSTOMERS claims is this one's (about 27 claims at 1,000,000). */
const CUSTOMERS = 36_500;

/** The writers of long records: `ledger DIR N`, `claims DIR ORIGIN STORE FROM N` (claims FROM..FROM+N-1, sealed in groups). */
const WRITER = `
import { createHash } from 'node:crypto';
import { fdatasyncSync, fstatSync } from 'node:fs';
import { LEDGER_FILE, issuanceKey } from './src/giftcard/ledger.ts';
import { LogWriter, openLog } from './src/record/log.ts';
import { batchIntentLine, headerLine, outcomeLine, recordFileName } from './src/claims/record-format.ts';
const [what, dir] = process.argv.slice(2, 4);
const hex = (s) => createHash('sha256').update(s).digest('hex');
const start = Date.now() - 365 * 86400000;
let text = '';
const flush = (fd, force) => { if (force || text.length > 4_000_000) { new LogWriter().append(fd, text); text = ''; } };
if (what === 'ledger') {
  const n = Number(process.argv[4]);
  const fd = openLog({ dir }, LEDGER_FILE, 'gift card ledger', true);
  for (let i = 0; i < n; i++) {
    const claimId = 'H-' + i;
    const key = issuanceKey({ claimId, orderNumber: String(2000 + i), bonus: false }, { shopUrl: 'history.example', storeId: 'store_h' });
    const at = new Date(start + Math.floor((i * 365 * 86400000) / n)).toISOString();
    const common = { v: 1, issuance: 'h' + i, key, at, user: 'support' };
    text += JSON.stringify({ ...common, type: 'attempt', claimId, orderNumber: String(2000 + i), bonus: false, amountCents: 2500, amount: '25.00', currency: 'USD', email: 'cust' + (i % 36500) + '@example.com', name: 'Customer', profile: 'default', firstPath: 'trigger', forced: false, host: 'desk' }) + '\\n';
    text += JSON.stringify({ ...common, type: 'outcome', status: 'issued', path: 'trigger', triggerPosted: true, possibleDoubleCredit: false, notes: [] }) + '\\n';
    flush(fd);
  }
  flush(fd, true);
  fdatasyncSync(fd);
} else {
  const [origin, storeId, from, n] = [process.argv[4], process.argv[5], Number(process.argv[6]), Number(process.argv[7])];
  const store = { origin, storeId };
  const fd = openLog({ dir }, recordFileName(store), 'record of claims', true);
  if (fstatSync(fd).size === 0) text += headerLine(store, new Date(start).toISOString());
  const RUN = 1000;
  for (let i = from; i < from + n; i++) {
    const at = new Date(start + Math.floor(((i % 2_000_000) * 365 * 86400000) / 2_000_000)).toISOString();
    if ((i - from) % RUN === 0) {
      const run = 'r' + Math.floor(i / RUN);
      text += JSON.stringify({ v: 1, type: 'run', run, at, user: 'support', host: 'desk', profile: 'default', source: '/data/day-' + Math.floor(i / RUN) + '.csv' }) + '\\n';
    }
    const issuance = hex('f' + i).slice(0, 18);
    const key = hex('k' + i);
    text += batchIntentLine({ issuance, key, run: 'r' + Math.floor(i / RUN), line: (i % RUN) + 2, sim: hex('s' + i), email: 'cust' + (i % ${CUSTOMERS}) + '@example.com', item: 'Kettle ' + i }, at);
    text += outcomeLine({ issuance, key, status: 'filed', sourceOrderId: 'SO-' + i }, at);
    flush(fd);
  }
  flush(fd, true);
  fdatasyncSync(fd);
}
`;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** Each config folder's token for its sandbox (claims file needs one; giftcard issue uses the profile's). */
const tokens = {};
const env = (configDir) => ({ ...process.env, OPCLI_CONFIG_DIR: configDir, NO_COLOR: '1', ...(tokens[configDir] ? { OPCLI_TOKEN: tokens[configDir] } : {}) });

/** Runs opcli in a config folder: its wall seconds (exit 0 required). */
function opcli(configDir, argv) {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [BIN, ...argv], { env: env(configDir), encoding: 'utf8', maxBuffer: 1 << 28 });
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  if (r.status !== 0) throw new Error(`opcli ${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return s;
}

/** The commands timed: a 10-row batch of new claims, one credit of a new claim and amount, one customer's history. */
const commands = (i) => ({
  batch: (dir, info) => {
    const csv = join(dir, `batch-${i}.csv`);
    let text =
      'customer.email,item.name,item.price,warranty.dateOfPurchase,warranty.warrantyPeriod,shippingAddress.firstName,shippingAddress.lastName,shippingAddress.address1,shippingAddress.city,shippingAddress.zip,shippingAddress.country,storeId,signature,salesChannel,claimCategory,issueType,resolution\n';
    for (let r = 0; r < 10; r++)
      text += `new${i}-${r}@example.com,Toaster ${i}-${r},29.99,2024-05-01T10:00:00Z,P1Y,Bo,Example,1 Main St,Springfield,62701,United States,${info.storeId},,IN_STORE,WARRANTY,DEFECTIVE_ITEM,RESHIP\n`;
    writeFileSync(csv, text);
    return opcli(dir, ['claims', 'file', '--from', csv]);
  },
  // Another amount each time: the same amount to the same customer within 30 days is held as similar.
  issue: (dir) =>
    opcli(dir, [
      'giftcard',
      'issue',
      '--claim',
      `C-${i}`,
      '--order',
      '1001',
      '--amount',
      ((1001 + i) / 100).toFixed(2),
      '--email',
      'alice@example.com',
      '--name',
      'Alice Example',
      '--customer-id',
      'cust_1001',
      '--yes',
    ]),
  email: (dir) => opcli(dir, ['claims', 'history', '--email', 'cust7@example.com', '--json']),
});

/** `claims history --json` (or `argv`) to /dev/null: wall seconds and the peak RSS (MiB) of its process tree's largest process. */
async function historyJson(dir, argv = ['claims', 'history', '--json']) {
  const nul = openSync('/dev/null', 'w');
  const t = process.hrtime.bigint();
  const child = spawn(process.execPath, [BIN, ...argv], { env: env(dir), stdio: ['ignore', nul, 'pipe'] });
  const stop = watchPeakRss(child);
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise((r) => child.once('exit', r));
  const { largestKiB } = stop();
  if (code !== 0) throw new Error(`${argv.join(' ')} exited ${code}: ${err}`);
  return { s: Number(process.hrtime.bigint() - t) / 1e9, mib: largestKiB / 1024 };
}

requireBuild();
const work = mkdtempSync(join(tmpdir(), 'opcli-bench-history-'));
const sandboxes = [];
try {
  const entry = join(root, 'bench', '.record-history-writer.mjs');
  await build({
    stdin: { contents: WRITER, resolveDir: root, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: entry,
    logLevel: 'error',
  });
  const write = (...args) => {
    const t = Date.now();
    const w = spawnSync(process.execPath, [entry, ...args.map(String)], { stdio: 'inherit' });
    if (w.status !== 0) throw new Error(`the writer failed: ${args.join(' ')}`);
    return (Date.now() - t) / 1000;
  };
  const [empty, long] = ['empty', 'long'].map((name) => mkdtempSync(join(work, `${name}-`)));
  const infos = {};
  for (const dir of [empty, long]) {
    const s = await startSandbox(['--write-profile', 'default', '--trigger-delay', '0ms'], dir);
    sandboxes.push(s.child);
    infos[dir] = s.info;
    tokens[dir] = await clientCredentialsToken(s.info);
  }
  const origin = (info) => new URL(info.url).origin;
  const mib = (path) => (statSync(path).size / 2 ** 20).toFixed(0);
  console.log(
    `ledger of ${CREDITS.toLocaleString('en')} credits written in ${write('ledger', long, CREDITS).toFixed(1)} s (${mib(join(long, 'giftcard-ledger.jsonl'))} MiB)`,
  );
  const claimsTime = write('claims', long, origin(infos[long]), infos[long].storeId, 0, CLAIMS);
  console.log(`record of ${CLAIMS.toLocaleString('en')} claims written in ${claimsTime.toFixed(1)} s`);
  const first = { batch: 0, issue: 0, email: 0 };
  for (const [name, run] of Object.entries(commands(0))) {
    first[name] = run(long, infos[long]);
    run(empty, infos[empty]);
  }
  const times = { batch: [[], []], issue: [[], []], email: [[], []] };
  for (let i = 1; i <= RUNS; i++) {
    for (const [name, run] of Object.entries(commands(i))) {
      times[name][0].push(run(long, infos[long]));
      times[name][1].push(run(empty, infos[empty]));
    }
  }
  console.log(`load ${loadavg()[0].toFixed(2)}; medians of ${RUNS} (alternating), long record against empty:`);
  for (const [name, label] of [
    ['batch', 'claims file --from (10 rows)'],
    ['issue', 'giftcard issue (one credit)'],
    ['email', 'claims history --email (one customer)'],
  ]) {
    const [a, b] = times[name].map(median);
    const ratio = a / b;
    console.log(
      `  ${label}: ${a.toFixed(2)} s against ${b.toFixed(2)} s: ratio ${ratio.toFixed(2)} (goal <= ${GOAL}) ${ratio <= GOAL ? 'met' : 'NOT met'}; first run on the long record (builds the index) ${first[name].toFixed(2)} s`,
    );
  }
  if (HUGE > CLAIMS)
    console.log(
      `record grown to ${HUGE.toLocaleString('en')} claims in ${write('claims', long, origin(infos[long]), infos[long].storeId, CLAIMS, HUGE - CLAIMS).toFixed(1)} s`,
    );
  const small = await historyJson(empty);
  const big = await historyJson(long);
  console.log(
    `  claims history --json over ${Math.max(HUGE, CLAIMS).toLocaleString('en')} claims: ${big.s.toFixed(1)} s, peak RSS ${big.mib.toFixed(0)} MiB (empty record: ${small.s.toFixed(2)} s, ${small.mib.toFixed(0)} MiB); load ${loadavg()[0].toFixed(2)}`,
  );
  for (const argv of [
    ['giftcard', 'history', '--json'],
    ['giftcard', 'history'],
  ]) {
    const none = await historyJson(empty, argv);
    const once = await historyJson(long, argv);
    const next = await historyJson(long, argv);
    console.log(
      `  ${argv.join(' ')} over ${CREDITS.toLocaleString('en')} credits: ${next.s.toFixed(1)} s, peak RSS ${next.mib.toFixed(0)} MiB (first run ${once.s.toFixed(1)} s, ${once.mib.toFixed(0)} MiB; empty ledger: ${none.s.toFixed(2)} s, ${none.mib.toFixed(0)} MiB); load ${loadavg()[0].toFixed(2)}`,
    );
  }
  rmSync(entry, { force: true });
} finally {
  for (const child of sandboxes) child.kill();
  rmSync(work, { recursive: true, force: true });
}
