// Shared by the benchmarks: the built binary, a sandbox run as its own process, a token for it,
// and the peak RSS of a child process.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

export const root = fileURLToPath(new URL('..', import.meta.url));
export const bin = `${root}bin/opcli.cjs`;

/** Exits with a message when dist/ has not been built. */
export function requireBuild() {
  if (!existsSync(`${root}dist/main.js`)) {
    console.error('dist/ is missing: run `npm run build` first.');
    process.exit(1);
  }
}

/** Starts `opcli sandbox --json <args>` and resolves with the child and the JSON it prints. */
export function startSandbox(args, configDir) {
  const child = spawn(process.execPath, [bin, 'sandbox', '--json', ...args], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, NO_COLOR: '1', OPCLI_CONFIG_DIR: configDir },
  });
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once('line', (line) => resolve({ child, info: JSON.parse(line) }));
    child.once('exit', (code) => reject(new Error(`sandbox exited ${code}`)));
  });
}

/** An access token for the sandbox's store through the client-credentials grant. */
export async function clientCredentialsToken(info) {
  const pool = new Pool(info.url);
  const res = await pool.request({
    method: 'POST',
    path: '/v1/oauth/token',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: info.clientId, client_secret: info.clientSecret, store_id: info.storeId }),
  });
  const body = await res.body.json();
  await pool.close();
  if (res.statusCode !== 200) throw new Error(`token: ${res.statusCode} ${JSON.stringify(body)}`);
  return body.access_token;
}

/**
 * Polls the peak resident set (VmHWM) of a child and of every process below it (the bin shim runs
 * long streaming commands in a second process) every 20 ms; call the result to stop and get
 * `{ peakKiB, largestKiB }`: the sum over the tree of each process's peak, and the largest single one.
 */
export function watchPeakRss(child) {
  const peaks = new Map();
  const tree = (pid) => {
    const out = [pid];
    try {
      for (const task of readdirSync(`/proc/${pid}/task`)) {
        const kids = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
        if (kids) for (const kid of kids.split(/\s+/)) out.push(...tree(Number(kid)));
      }
    } catch {
      // exited between polls
    }
    return out;
  };
  const poll = () => {
    for (const pid of tree(child.pid)) {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        if (m) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, Number(m[1])));
      } catch {
        // exited between polls
      }
    }
  };
  const timer = setInterval(poll, 20);
  return () => {
    clearInterval(timer);
    const values = [...peaks.values()];
    return { peakKiB: values.reduce((a, b) => a + b, 0), largestKiB: Math.max(0, ...values) };
  };
}

/**
 * CPU seconds (user + system) a process has used so far, read from /proc/<pid>/stat (clock ticks
 * of 1/100 s, Linux's USER_HZ); NaN where /proc is missing. Sampled before and after a run, it gives
 * what a server process spent on that run.
 */
export function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * The real-infrastructure fixtures of test/infra (nginx, squid, PostgreSQL, a CA), bundled from source
 * by esbuild into a temporary module and imported; undefined, with the reason printed, where nginx is
 * missing. The module is written under node_modules/.cache, where the packages it leaves out (the
 * PostgreSQL fixture's OS users import vitest) resolve.
 */
export async function loadInfra() {
  const { buildSync } = await import('esbuild');
  const { mkdirSync, rmSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { pathToFileURL } = await import('node:url');
  const cache = join(root, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const out = join(cache, `opcli-bench-infra-${process.pid}.mjs`);
  buildSync({
    entryPoints: [`${root}test/infra/index.ts`],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: out,
    logLevel: 'error',
    packages: 'external',
  });
  const infra = await import(pathToFileURL(out).href);
  rmSync(out);
  const missing = infra.missingInfra('nginx');
  if (missing) {
    console.log(`nginx cases skipped: ${missing}`);
    return undefined;
  }
  return infra;
}

/** The fixtures of test/infra where PostgreSQL is installed; otherwise says so and ends the benchmark (exit 0: nothing to measure). */
export async function loadPostgresInfra() {
  const infra = await loadInfra();
  if (!infra || infra.missingInfra('pg_ctl')) {
    console.log('PostgreSQL is not installed (apt-get install --no-install-recommends postgresql): nothing measured.');
    process.exit(0);
  }
  return infra;
}

/** One request to the sandbox's admin API (configure, reset-log, requests), with the run's admin secret; its JSON answer. */
export async function admin(info, method, path, body) {
  const pool = new Pool(info.url);
  const res = await pool.request({
    method,
    path,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${info.adminSecret}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await res.body.json();
  await pool.close();
  if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(answer)}`);
  return answer;
}
