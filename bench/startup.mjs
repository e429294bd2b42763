#!/usr/bin/env node
// Start-up benchmark: median wall time of each case against its baseline, measured interleaved in
// the same run so machine noise hits all alike, with the goal beside each figure:
// - `opcli --version`, `opcli --help`, `opcli orders --help` against `node -e 0`;
// - a one-off `opcli orders list --size 5` (a sandbox, a stored login through client credentials)
//   against a bare Node script that does the same one `fetch` and prints the JSON.
// Beside the wall time, on Linux, the CPU time (user + system) of the runs of each case, from the
// children's times in /proc/self/stat: on a loaded machine the wall time mostly measures waiting for a
// core, the CPU time what each case costs. The compile cache folder (~/.cache/opcli) exists, as on
// a user's machine, so Node 22+ runs with the compile cache.
// Usage: node bench/startup.mjs [runs=30]   (build first: npm run build)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { bin, requireBuild, startSandbox } from './lib.mjs';

requireBuild();
const runs = Number(process.argv[2] ?? 30);
const major = Number(process.versions.node.split('.')[0]);
const dir = mkdtempSync(join(tmpdir(), 'opcli-startup-'));
const { child: sandbox, info } = await startSandbox(['--write-profile', 'default', '--trigger-delay', 'never'], dir);

const env = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', OPCLI_CONFIG_DIR: dir, XDG_CACHE_HOME: join(dir, 'cache') };
mkdirSync(env.XDG_CACHE_HOME);
/** CPU time (user + system, ms) of the children waited for so far, where /proc has it. */
const childCpu = existsSync('/proc/self/stat')
  ? () => {
      const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
      // cutime and cstime, fields 16 and 17 of stat (13 and 14 after the command name), in clock ticks (100 per second).
      return (Number(fields[13]) + Number(fields[14])) * 10;
    }
  : undefined;
try {
  const login = spawnSync(process.execPath, [bin, 'auth', 'login', '--client-credentials'], { env, encoding: 'utf8' });
  if (login.status !== 0) throw new Error(`login failed: ${login.stderr}`);
  const accessToken = spawnSync(process.execPath, [bin, 'auth', 'token'], { env, encoding: 'utf8' }).stdout.trim();
  const bare = join(dir, 'bare-fetch.mjs');
  writeFileSync(
    bare,
    `const res = await fetch(process.env.URL + '/v1/orders?size=5', { headers: { authorization: 'Bearer ' + process.env.TOKEN, accept: 'application/json' } });
if (!res.ok) throw new Error('bare fetch: ' + res.status);
process.stdout.write(JSON.stringify(await res.json()) + '\\n');
`,
  );
  const cases = {
    'node -e 0': { args: ['-e', '0'] },
    'opcli --version': { args: [bin, '--version'], base: 'node -e 0', goal: 1.2 },
    'opcli --help': { args: [bin, '--help'], base: 'node -e 0', goal: 1.2 },
    'opcli orders --help': { args: [bin, 'orders', '--help'], base: 'node -e 0', goal: 1.3 },
    'bare fetch script': { args: [bare], env: { URL: info.url, TOKEN: accessToken } },
    'opcli orders list --size 5': { args: [bin, 'orders', 'list', '--size', '5', '--json'], base: 'bare fetch script', goal: major >= 22 ? 1.15 : 1.3 },
  };
  const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  const cpu = Object.fromEntries(Object.keys(cases).map((k) => [k, 0]));
  const once = (name, { args, env: extra }) => {
    const c0 = childCpu?.();
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...env, ...extra } });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    if (childCpu && name) cpu[name] += childCpu() - c0;
    return ms;
  };
  for (const c of Object.values(cases)) once(undefined, c); // warm the file cache (and, on Node 22+, the compile cache)
  for (let i = 0; i < runs; i++) for (const [name, c] of Object.entries(cases)) times[name].push(once(name, c));

  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  };
  // The load average beside the figures: on a shared machine the wall times move with it.
  const load = `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;
  console.log(`node ${process.version}, runs per case: ${runs} (median wall time, interleaved${childCpu ? '; mean CPU time' : ''}), ${load} at the end`);
  for (const [name, c] of Object.entries(cases)) {
    const m = median(times[name]);
    const cpuText = childCpu ? `  cpu ${(cpu[name] / runs).toFixed(1).padStart(6)} ms` : '';
    const line = `${name.padEnd(28)} ${m.toFixed(1).padStart(7)} ms${cpuText}`;
    if (!c.base) console.log(line);
    else {
      const ratio = m / median(times[c.base]);
      const cpuRatio = childCpu ? `  cpu ${(cpu[name] / cpu[c.base]).toFixed(2)}x` : '';
      console.log(`${line}   ${ratio.toFixed(2)}x ${c.base}${cpuRatio}   goal <= ${c.goal.toFixed(2)}x   ${ratio <= c.goal ? 'met' : 'NOT met'}`);
    }
  }
} finally {
  sandbox.kill('SIGINT');
  rmSync(dir, { recursive: true, force: true });
}
