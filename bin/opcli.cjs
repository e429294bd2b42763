#!/usr/bin/env node
/*
 * The shim: `opcli` on PATH. The bundle in dist/ does the work (built by `npm run build`, or by
 * the `dependencies` script on `npm ci`); this file keeps only what must happen before the bundle
 * loads, or instead of loading it. Each duty, why it cannot live in the bundle, and its test:
 *
 * 1. `--version` and every plain `[group [verb]] --help` are printed from pages rendered at build
 *    time (dist/help/), without loading the bundle: most of a help's start-up is loading code.
 *    test/bin/shim.test.ts ("bin shim"; each page equals what the bundle renders).
 * 2. A long streaming run (`orders list --all` or `--limit` of 5000 or more, `claims file --from`)
 *    runs again in a child process with V8 start-up flags (LEAN_FLAGS): V8 sizes its heap when the
 *    process starts, so no code inside the bundle can set them. OPCLI_LEAN=1 marks the child; the
 *    shim relays SIGINT/SIGTERM over the IPC channel and exits with the child's code; the child
 *    kills itself when the channel closes (src/cli/main.ts). SIGHUP (and SIGBREAK on Windows) are relayed too. test/bin/shim.test.ts ("long streaming
 *    runs"), test/main/signals.test.ts (the relay, through the built binary).
 * 3. Node's compile cache (22.1+) under $XDG_CACHE_HOME/opcli (%LOCALAPPDATA%\opcli on Windows): enabled before the bundle is
 *    compiled, or it saves nothing. test/bin/shim.test.ts ("compile cache").
 * 4. `--verbose` turns on source maps, so a stack trace names src/ lines; only then, since reading
 *    the maps costs start-up time.
 * 5. An unbuilt checkout says how to build instead of a module-not-found trace.
 *    test/bin/shim.test.ts ("the shim without a bundle").
 * 6. `sandbox --write-profile NAME` marks profile NAME as being written before the bundle loads:
 *    `opcli sandbox --write-profile default & opcli auth login` starts both at once, and the
 *    second reads the profile after loading the bundle, later than this mark, so it waits for the
 *    sandbox instead of finding no profile. The mark's name and format are those of
 *    src/config/sandbox-starting.ts, which writes it again (and removes it) in the bundle.
 *    test/sandbox/quick-start.test.ts.
 *
 * CommonJS on purpose: an ES module entry costs Node its ESM loader and a facade per built-in it
 * imports (node:fs runs its lazy getters) on every `--help` (docs/benchmarks.md#figures-behind-the-code);
 * require() does not. The bundle itself is ESM and is loaded with import() only for real work.
 */
'use strict';
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const argv = process.argv.slice(2);
const only = argv.length === 1 ? argv[0] : argv.length === 0 ? '' : undefined;
/** Duty 1. `[group [verb]] --help`: the words of a help page rendered at build time (dist/help/). */
const last = argv[argv.length - 1];
const words = (last === '--help' || last === '-h') && argv.length <= 3 ? argv.slice(0, -1) : undefined;
// The pages are 80 columns wide, as commander renders for a pipe; a narrower terminal gets the
// bundle's own rendering.
const fits = !process.stdout.isTTY || (process.stdout.columns ?? 80) >= 80;
let answered = false;
if (only === '--version' || only === '-V') {
  const pkg = JSON.parse(readFileSync(join(__dirname, '../package.json'), 'utf8'));
  process.stdout.write(`${pkg.version}\n`);
  answered = true;
} else if (fits && (only === '' || words?.every((w) => /^[a-z][a-z-]*$/.test(w)))) {
  const page = only === '' || words.length === 0 ? '../dist/help.txt' : `../dist/help/${words.join(' ')}.txt`;
  try {
    process.stdout.write(readFileSync(join(__dirname, page), 'utf8'));
    answered = true;
  } catch {
    // Not built yet, an older build, or not a command: the bundle answers.
  }
}
/**
 * The flags of duty 2 (docs/benchmarks.md#memory-of-long-runs; bench/orders-list.mjs and
 * bench/claims-batch.mjs measure them). --max-semi-space-size=4, a smaller young generation, keeps
 * the memory of a long run flat and small for any size, for the start of a second process.
 * --liftoff-only has V8 compile the WebAssembly HTTP parser of undici, the one HTTP engine
 * (src/http/client.ts), with its baseline compiler alone. src/http/client.ts sets the same flag
 * at run time, before the first connection, for every run; the child gets it from its start as well.
 */
const LEAN_FLAGS = ['--max-semi-space-size=4', '--liftoff-only'];
const has = (flag) => argv.some((a) => a === flag || a.startsWith(`${flag}=`));
/** `--limit N`: a small limit is a one-off, not worth a second process. */
const limit = Number(argv.find((_, i) => argv[i - 1] === '--limit') ?? argv.find((a) => a.startsWith('--limit='))?.slice(8));
// `opcli __complete …` (TAB in a shell) only names the words of such a run: it is never one.
const streaming =
  argv[0] !== '__complete' &&
  !has('--help') &&
  !argv.includes('-h') &&
  ((argv.includes('orders') && argv.includes('list') && (has('--all') || limit >= 5000)) ||
    (argv.includes('claims') && argv.includes('file') && has('--from')));
if (!answered && streaming && !process.env.OPCLI_LEAN && !process.execArgv.some((a) => a.startsWith('--max-semi-space-size'))) {
  const { spawn } = require('node:child_process');
  // The IPC channel is only a lifeline: when the shim dies (kill -9) it closes, and the child
  // kills itself at once the same way, so a batch never files claims on unseen (src/cli/main.ts).
  // The whole environment on purpose, unlike the browser (src/core/child-env.ts): this child is opcli
  // itself, the same run, and needs OPCLI_TOKEN, OPCLI_CLIENT_SECRET and the rest as the user set them.
  const child = spawn(process.execPath, [...LEAN_FLAGS, ...process.execArgv, __filename, ...argv], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, OPCLI_LEAN: '1' },
  });
  // Signals are passed on over the IPC channel, once each, and the child decides (stop cleanly, or
  // at once on a second Ctrl-C). A terminal's Ctrl-C also reaches the child directly; the child
  // ignores those copies (src/cli/main.ts), so one press always counts once, however fast the next.
  const pass = (signal) => () => {
    if (child.connected) child.send({ opcliSignal: signal });
    else child.kill(signal);
  };
  // SIGHUP: the terminal closed (on Windows, the console window); SIGBREAK: Ctrl-Break on Windows.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', ...(process.platform === 'win32' ? ['SIGBREAK'] : [])]) process.on(signal, pass(signal));
  child.on('error', (error) => {
    console.error(`opcli could not start: ${error.message}`);
    process.exitCode = 1;
  });
  child.on('exit', (code, signal) => {
    process.exitCode = code ?? (signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : signal === 'SIGHUP' ? 129 : 1);
    // The terminal is gone (the child ended by the hang-up for it: src/cli/main.ts): so does the shim,
    // rather than have Node abort restoring a terminal that no longer exists (nodejs/node#51519).
    if (signal === 'SIGHUP' && process.platform !== 'win32') {
      process.removeAllListeners('SIGHUP');
      process.kill(process.pid, 'SIGHUP');
    }
  });
  answered = true;
}

/** Duty 3. Node 22.1+ keeps the compiled bundle on disk, which saves most of the module compile time of every later run. */
function enableCompileCache() {
  const module = require('node:module');
  if (typeof module.enableCompileCache !== 'function' || process.env.NODE_COMPILE_CACHE) return;
  // Never fatal: an unwritable cache folder only means no cache.
  try {
    // As gh: $XDG_CACHE_HOME, else %LOCALAPPDATA% on Windows (a cache stays on the machine, not in the roaming profile), else ~/.cache.
    const home = process.env.HOME || process.env.USERPROFILE;
    const windows = process.platform === 'win32' ? process.env.LOCALAPPDATA : undefined;
    const base = process.env.XDG_CACHE_HOME || windows || (home ? join(home, '.cache') : undefined);
    if (!base) return;
    // The folders are made here, one level at a time, and only below a folder that exists and is
    // writable: Node's own (recursive) creation spins forever under an unwritable base such as
    // /proc, which would hang every command. A missing base (~/.cache on a fresh machine or in CI)
    // is made too, as the XDG spec asks, when the folder it belongs in exists.
    const { accessSync, constants, mkdirSync, statSync } = require('node:fs');
    try {
      mkdirSync(base, { mode: 0o700 });
    } catch (error) {
      if (error.code !== 'EEXIST') return;
    }
    if (!statSync(base).isDirectory()) return;
    accessSync(base, constants.W_OK);
    let dir = base;
    for (const part of ['opcli', 'compile-cache']) {
      dir = join(dir, part);
      try {
        mkdirSync(dir, { mode: 0o700 });
      } catch (error) {
        if (error.code !== 'EEXIST') throw error;
      }
    }
    module.enableCompileCache(dir);
  } catch {
    // no cache
  }
}

/** Duty 6. The config folder as src/config/config-home.ts (configDirOf) finds it; the mark as src/config/sandbox-starting.ts writes it. */
function markSandboxStarting() {
  const at = argv.indexOf('--write-profile');
  const name = at >= 0 ? argv[at + 1] : argv.find((a) => a.startsWith('--write-profile='))?.slice(16);
  if (!argv.includes('sandbox') || has('--help') || argv.includes('-h') || !name || !/^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/.test(name)) return;
  // Never fatal: without the mark, the bundle writes it a moment later.
  try {
    const env = process.env;
    const { isAbsolute } = require('node:path');
    const home = env.HOME || env.USERPROFILE || '.';
    const xdg = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : undefined;
    const appData = process.platform === 'win32' ? env.APPDATA || (env.USERPROFILE && join(env.USERPROFILE, 'AppData', 'Roaming')) : undefined;
    const dir = env.OPCLI_CONFIG_DIR || join(xdg || appData || join(home, '.config'), 'opcli');
    const fs = require('node:fs');
    // On Windows the bundle first moves the folder from its earlier place (src/config/config-home.ts): no mark before that.
    if (appData && !env.OPCLI_CONFIG_DIR && !xdg && !fs.existsSync(dir) && fs.existsSync(join(home, '.config', 'opcli'))) return;
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const c = fs.constants;
    const fd = fs.openSync(join(dir, `sandbox-starting.${name}.json`), c.O_WRONLY | c.O_CREAT | c.O_TRUNC | (c.O_NOFOLLOW ?? 0), 0o600);
    fs.writeSync(fd, `${JSON.stringify({ pid: process.pid, at: Date.now() })}\n`);
    fs.closeSync(fd);
  } catch {
    // no mark
  }
}

if (!answered) {
  markSandboxStarting();
  enableCompileCache();
  // Duty 4: a build from a clone has linked source maps (the npm tarball leaves them out:
  // CONTRIBUTING.md, "The package"); enabled only with --verbose, as reading them costs start-up time.
  if (argv.includes('--verbose') && typeof process.setSourceMapsEnabled === 'function') process.setSourceMapsEnabled(true);
  import('../dist/main.js').catch((error) => {
    // Duty 5.
    if (error && error.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/main.js')) {
      console.error('opcli is not built yet: run `npm run build` in the opcli folder.');
      process.exitCode = 1;
      return;
    }
    throw error;
  });
}
