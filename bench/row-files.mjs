#!/usr/bin/env node
// Which files of src/ a claim row's code runs in, per backend of the record of claims (the count
// behind ARCHITECTURE.md's "Three flows"): `claims file --from` over 2 and over 12 new rows, each a
// process with V8's coverage (NODE_V8_COVERAGE), each function mapped to its source by the bundle's
// source maps; a file whose functions ran at least 10 more times in the 12-row run holds code every
// row runs. The file record, then the record in PostgreSQL (test/infra's, on loopback), set up as
// bench/claims-pg.mjs does. Not a timing: it prints call counts, the same from run to run but for the
// status line (`text/progress.ts`), which draws by time.
// Usage: node bench/row-files.mjs   (build first: node bin/build.mjs)
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync, rmSync, mkdirSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bin, clientCredentialsToken, loadPostgresInfra, requireBuild, startSandbox } from './lib.mjs';
const HEADER =
  'customer.email,item.name,item.price,item.details,warranty.dateOfPurchase,warranty.warrantyPeriod,shippingAddress.firstName,shippingAddress.lastName,shippingAddress.address1,shippingAddress.city,shippingAddress.zip,shippingAddress.country,signature,salesChannel,claimCategory,issueType,resolution';
const line = (tag, i) =>
  `c${tag}-${i}@example.com,Kettle ${i},49.99,"run ${tag} row ${i}",2024-05-01T10:00:00Z,P1Y,Alice,Example,1 Main St,Springfield,62701,United States,,IN_STORE,WARRANTY,DEFECTIVE_ITEM,RESHIP\n`;
requireBuild();
const infra = await loadPostgresInfra();
const work = mkdtempSync(join(tmpdir(), 'opcli-row-files-'));
const pg = await infra.startPostgres({ durable: false });
let sandbox;
/** Calls per source file (a path from src/, or from node_modules/) in the coverage files of one run. */
function perFile(cov) {
  const per = {};
  const maps = {};
  for (const f of readdirSync(cov)) {
    for (const script of JSON.parse(readFileSync(join(cov, f), 'utf8')).result) {
      if (!script.url.includes('/dist/')) continue;
      const path = script.url.replace('file://', '');
      let map = maps[path];
      if (!map) {
        try {
          const text = readFileSync(path, 'utf8');
          const starts = [0];
          for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
          map = maps[path] = { sm: new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8'))), starts };
        } catch {
          continue;
        }
      }
      for (const fn of script.functions) {
        const range = fn.ranges[0];
        if (!range.count || range.startOffset === 0) continue;
        let l = 0;
        while (l + 1 < map.starts.length && map.starts[l + 1] <= range.startOffset) l++;
        const e = map.sm.findEntry(l, range.startOffset - map.starts[l]);
        const source = e?.originalSource ?? '?';
        const src = source.includes('/node_modules/') ? source.replace(/.*\/node_modules\//, 'node_modules/') : source.replace(/.*\/src\//, 'src/');
        per[src] = (per[src] ?? 0) + range.count;
      }
    }
  }
  return per;
}
try {
  const configDir = join(work, 'config');
  sandbox = await startSandbox(['--write-profile', 'default', '--trigger-delay', 'never'], configDir);
  const info = sandbox.info;
  const member = { name: `desk_${randomBytes(3).toString('hex')}`, password: randomBytes(12).toString('hex') };
  await pg.admin(`CREATE ROLE ${member.name} LOGIN PASSWORD '${member.password}'`);
  await pg.admin('CREATE DATABASE row_files');
  const setup = spawnSync(
    process.execPath,
    [bin, 'record', 'setup', '--url', `postgresql://${pg.superuser}@127.0.0.1:${pg.port}/row_files`, '--member', member.name],
    {
      env: { ...process.env, PGPASSWORD: pg.superuserPassword, OPCLI_CONFIG_DIR: configDir },
      encoding: 'utf8',
    },
  );
  if (setup.status !== 0) throw new Error(`record setup: ${setup.stderr}`);
  const token = await clientCredentialsToken(info);
  const base = { PATH: process.env.PATH, HOME: '/nonexistent', NO_COLOR: '1', OPCLI_CONFIG_DIR: configDir, OPCLI_BASE_URL: info.url, OPCLI_TOKEN: token };
  const envs = { file: base, database: { ...base, OPCLI_RECORD_URL: `postgresql://${member.name}:${member.password}@127.0.0.1:${pg.port}/row_files` } };
  for (const [name, env] of Object.entries(envs)) {
    const counts = {};
    for (const n of [2, 12]) {
      const csv = join(work, `${name}${n}.csv`);
      writeFileSync(csv, HEADER + '\n' + Array.from({ length: n }, (_, i) => line(`${name}${n}`, i + 1)).join(''));
      const cov = join(work, `cov-${name}${n}`);
      mkdirSync(cov);
      const r = spawnSync(process.execPath, [bin, 'claims', 'file', '--from', csv, '--concurrency', '1'], {
        env: { ...env, NODE_V8_COVERAGE: cov },
        encoding: 'utf8',
      });
      if (r.status !== 0) throw new Error(`${name} ${n}: exit ${r.status} ${r.stderr}`);
      counts[n] = perFile(cov);
    }
    const rows = [];
    for (const src of new Set([...Object.keys(counts[2]), ...Object.keys(counts[12])])) {
      const d = (counts[12][src] ?? 0) - (counts[2][src] ?? 0);
      if (d >= 10 && src.startsWith('src/')) rows.push([src, d]);
    }
    rows.sort((a, b) => a[0].localeCompare(b[0]));
    console.log(`== ${name}: ${rows.length} files of src/ run for each row (calls in 10 more rows)`);
    for (const [src, d] of rows) console.log(String(d).padStart(6), src);
  }
} finally {
  sandbox?.child.kill();
  await pg.stop();
  rmSync(work, { recursive: true, force: true });
}
