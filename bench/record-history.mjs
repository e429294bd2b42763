#!/usr/bin/env node
// Benchmark of the record of business actions against a long history (issue 40): one `giftcard issue`
// with a ledger of 365,000 credits (a year at 1,000 a day), written through the record module
// (src/record/log.ts: sealed lines, as opcli appends them), against the same command with an empty
// ledger, in the same run, runs alternating. Goal: at most 2x the empty ledger's wall time. The first
// issuance on the long ledger builds the reader's index (src/record/index-file.ts) and is printed apart.
// Not yet here (issue 40, steps not landed): the record of claims at 1,000,000 claims (a 10-row batch,
// `claims history --email`) and `history --json` over 2,000,000 claims.
// Usage: node bench/record-history.mjs [credits=365000] [runs=5]   (build first: node bin/build.mjs)
// RECORD_BENCH_BIN=path: another build's bin shim (main's, for a before/after on the same ledgers).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { bin, requireBuild, root, startSandbox } from './lib.mjs';

const CREDITS = Number(process.argv[2] ?? 365_000);
const RUNS = Number(process.argv[3] ?? 5);
const GOAL = 2;
const BIN = process.env.RECORD_BENCH_BIN ?? bin;

/** The writer of a long ledger: attempt and outcome lines of `n` credits over the past year, sealed in groups. */
const WRITER = `
import { fdatasyncSync } from 'node:fs';
import { LEDGER_FILE, issuanceKey } from './src/giftcard/ledger.ts';
import { appendSealed, openLog } from './src/record/log.ts';
const [dir, n] = [process.argv[2], Number(process.argv[3])];
const fd = openLog({ dir }, LEDGER_FILE, 'gift card ledger', true);
const start = Date.now() - 365 * 86400000;
let text = '';
for (let i = 0; i < n; i++) {
  const claimId = 'H-' + i;
  const key = issuanceKey({ claimId, orderNumber: String(2000 + i), bonus: false }, { shopUrl: 'history.example', storeId: 'store_h' });
  const at = new Date(start + Math.floor((i * 365 * 86400000) / n)).toISOString();
  const common = { v: 1, issuance: 'h' + i, key, at, user: 'support' };
  text += JSON.stringify({ ...common, type: 'attempt', claimId, orderNumber: String(2000 + i), bonus: false, amountCents: 2500, amount: '25.00', currency: 'USD', email: 'cust' + (i % 36500) + '@example.com', name: 'Customer', profile: 'default', firstPath: 'trigger', forced: false, host: 'desk' }) + '\\n';
  text += JSON.stringify({ ...common, type: 'outcome', status: 'issued', path: 'trigger', triggerPosted: true, possibleDoubleCredit: false, notes: [] }) + '\\n';
  if (text.length > 4_000_000) { appendSealed(fd, text); text = ''; }
}
appendSealed(fd, text);
fdatasyncSync(fd);
`;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One `giftcard issue` of a new claim and amount in a config folder: its wall seconds (exit 0 required). */
function issue(configDir, claim, cents) {
  // Another amount each time: the same amount to the same customer within 30 days is held as similar.
  const argv = [BIN, 'giftcard', 'issue', '--claim', claim, '--order', '1001', '--amount', (cents / 100).toFixed(2)];
  argv.push('--email', 'alice@example.com', '--name', 'Alice Example', '--customer-id', 'cust_1001', '--yes');
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, argv, { env: { ...process.env, OPCLI_CONFIG_DIR: configDir, NO_COLOR: '1' }, encoding: 'utf8' });
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  if (r.status !== 0) throw new Error(`giftcard issue ${claim} exited ${r.status}: ${r.stderr}`);
  return s;
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
  const [empty, long] = ['empty', 'long'].map((name) => mkdtempSync(join(work, `${name}-`)));
  for (const dir of [empty, long]) sandboxes.push((await startSandbox(['--write-profile', 'default', '--trigger-delay', '0ms'], dir)).child);
  const t = Date.now();
  const w = spawnSync(process.execPath, [entry, long, String(CREDITS)], { stdio: 'inherit' });
  rmSync(entry, { force: true });
  if (w.status !== 0) throw new Error('the ledger writer failed');
  const size = statSync(join(long, 'giftcard-ledger.jsonl')).size;
  console.log(`ledger of ${CREDITS.toLocaleString('en')} credits written in ${((Date.now() - t) / 1000).toFixed(1)} s (${(size / 2 ** 20).toFixed(0)} MiB)`);
  const first = issue(long, 'C-first', 1000);
  issue(empty, 'C-first', 1000);
  const a = [];
  const b = [];
  for (let i = 0; i < RUNS; i++) {
    a.push(issue(long, `C-${i}`, 1001 + i));
    b.push(issue(empty, `C-${i}`, 1001 + i));
  }
  const ratio = median(a) / median(b);
  console.log(`load ${loadavg()[0].toFixed(2)}; giftcard issue, medians of ${RUNS} (alternating):`);
  console.log(`  first issuance on the long ledger (builds the index): ${first.toFixed(2)} s`);
  console.log(
    `  long ledger ${median(a).toFixed(2)} s, empty ledger ${median(b).toFixed(2)} s: ratio ${ratio.toFixed(2)} (goal <= ${GOAL}) ${ratio <= GOAL ? 'met' : 'NOT met'}`,
  );
} finally {
  for (const child of sandboxes) child.kill();
  rmSync(work, { recursive: true, force: true });
}
