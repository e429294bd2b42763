/**
 * The doc test: every guide under docs/guides/ (and every top-level page of docs/) has its ```sh blocks run against a sandbox, so a guide
 * cannot drift from the tool. One sandbox, one temp folder and one config folder per guide; `opcli`
 * on PATH is the built binary; profile `default` points at the sandbox, logged in, with the provider
 * configured; no TTY; CI=true. The convention is written down in CONTRIBUTING.md.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { createDeps } from '../../src/cli/deps.js';
import { BIN, ROOT, capturedStreams, runOpcli, tempConfigDir } from '../helpers.js';
import { blockFailure, blockScript, shBlocks } from './blocks.js';

/** Every guide, and the top-level pages of docs/ (exit codes, HTTP, ...): whatever has ```sh blocks runs. */
const DOCS = join(ROOT, 'docs');
const guides = [...readdirSync(join(DOCS, 'guides')).map((n) => `guides/${n}`), ...readdirSync(DOCS).filter((n) => n !== 'README.md')]
  .filter((n) => n.endsWith('.md') && shBlocks(readFileSync(join(DOCS, n), 'utf8')).length > 0)
  .sort();

/**
 * A block that has not ended after this long is stuck (a process left waiting, a pipe held open), not
 * slow: it is killed and fails, naming itself. This bounds a hang, not the speed of a machine: a
 * block's pass never depends on how busy the machine is, so the tests below have no timeout.
 */
const HUNG_MS = 10 * 60_000;

/** Runs a program to its end, collecting stdout and stderr together (as a reader of the guide sees them). */
function run(cmd: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    // Its own process group, so a hung block is killed with everything it started.
    const child = spawn(cmd, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    const hung = setTimeout(() => {
      output += `\n(still running after ${HUNG_MS / 60_000} minutes: killed as hung)\n`;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, HUNG_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(hung);
      resolve({ code: code ?? (signal ? 128 : 1), output });
    });
  });
}

/**
 * Runs `opcli sandbox --write-profile default --json`, the command the guides start from, in this
 * process (one process fewer per guide than a child) and resolves once it has written the profile
 * and printed its URLs; `stop` ends it as Ctrl-C does.
 */
async function startSandbox(env: NodeJS.ProcessEnv, cwd: string): Promise<{ stop(): Promise<void> }> {
  const abort = new AbortController();
  const { stdout, stderr, out, err } = capturedStreams();
  const deps = createDeps({ stdin: Readable.from([]), stdout, stderr, env, cwd, signal: abort.signal });
  const done = runCli(['sandbox', '--write-profile', 'default', '--json'], deps);
  await new Promise<void>((resolve, reject) => {
    stdout.on('data', () => {
      if (out().includes('\n')) resolve();
    });
    done.then((code) => reject(new Error(`the sandbox exited ${code} before it started:\n${err()}`)), reject);
  });
  return {
    stop: async () => {
      abort.abort();
      await done;
    },
  };
}

/**
 * One compile cache for every opcli the guides start (Node 22.1+ reads NODE_COMPILE_CACHE; older
 * Node ignores it): the bundle is compiled once for the whole file instead of once per guide's HOME.
 */
const compileCache = mkdtempSync(join(tmpdir(), 'opcli-doc-compile-cache-'));

beforeAll(async () => {
  for (const tool of ['bash', 'curl', 'jq']) {
    const found = await run('sh', ['-c', `command -v ${tool}`], { cwd: ROOT, env: process.env });
    if (found.code !== 0) throw new Error(`The doc test needs ${tool} on PATH (the guides use it); install it and run again.`);
  }
}, 0);
afterAll(() => rmSync(compileCache, { recursive: true, force: true }), 0);

// Guides are independent (each its own sandbox and folders), so they run side by side; the blocks
// of one guide run in order. Most of a block's time is spent waiting on child processes.
describe.concurrent.each(guides)('docs/%s', (guide) => {
  const blocks = shBlocks(readFileSync(join(DOCS, guide), 'utf8'));
  const folder = tempConfigDir();
  const work = join(folder.dir, 'work');
  const config = join(folder.dir, 'config');
  const binDir = join(folder.dir, 'bin');
  const env: NodeJS.ProcessEnv = {
    PATH: `${binDir}:${process.env.PATH}`,
    HOME: folder.dir,
    OPCLI_CONFIG_DIR: config,
    CI: 'true',
    NO_COLOR: '1',
    LANG: 'C.UTF-8',
    TZ: 'UTC',
    NODE_COMPILE_CACHE: compileCache,
  };
  let sandbox: { stop(): Promise<void> } | undefined;

  // No timeouts (0): setting up is two in-process commands, and a block's pass does not depend on time.
  beforeAll(async () => {
    for (const dir of [work, config, binDir]) mkdirSync(dir, { recursive: true });
    writeFileSync(join(binDir, 'opcli'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(binDir, 'opcli'), 0o755);
    sandbox = await startSandbox(env, work);
    const login = await runOpcli(['auth', 'login', '--client-credentials'], { cwd: work, env });
    if (login.code !== 0) throw new Error(`logging in to the sandbox failed:\n${login.stderr}`);
  }, 0);

  afterAll(async () => {
    await sandbox?.stop();
    folder.cleanup();
  }, 0);

  for (const [n, block] of blocks.entries()) {
    it.sequential(`block ${n + 1} (line ${block.line}) runs as written`, async () => {
      const script = join(folder.dir, `block-${n + 1}.sh`);
      writeFileSync(script, blockScript(block));
      const { code, output } = await run('bash', [script], { cwd: work, env });
      const failure = blockFailure(`docs/${guide}`, block, code, output);
      expect(failure, failure).toBeUndefined();
    }, 0);
  }
});
