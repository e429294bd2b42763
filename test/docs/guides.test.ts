/**
 * The doc test: every guide under docs/guides/ (and every top-level page of docs/) has its ```sh blocks run against a sandbox, so a guide
 * cannot drift from the tool. One sandbox, one temp folder and one config folder per guide; `opcli`
 * on PATH is the built binary; profile `default` points at the sandbox, logged in, with the provider
 * configured; no TTY; CI=true. The convention is written down in CONTRIBUTING.md.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, tempConfigDir } from '../helpers.js';
import { blockFailure, blockScript, shBlocks } from './blocks.js';

/** Every guide, and the top-level pages of docs/ (exit codes, HTTP, ...): whatever has ```sh blocks runs. */
const DOCS = join(ROOT, 'docs');
const guides = [...readdirSync(join(DOCS, 'guides')).map((n) => `guides/${n}`), ...readdirSync(DOCS).filter((n) => n !== 'README.md')]
  .filter((n) => n.endsWith('.md') && shBlocks(readFileSync(join(DOCS, n), 'utf8')).length > 0)
  .sort();

/** Runs a program to its end, collecting stdout and stderr together (as a reader of the guide sees them). */
function run(cmd: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), output }));
  });
}

/** Starts `opcli sandbox --write-profile default` and resolves once it has written the profile. */
function startSandbox(env: NodeJS.ProcessEnv, cwd: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'sandbox', '--write-profile', 'default', '--json'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => {
      out += c;
      if (out.includes('\n')) resolve(child);
    });
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`the sandbox exited ${code} before it started:\n${err}`)));
  });
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
});
afterAll(() => rmSync(compileCache, { recursive: true, force: true }));

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
  let sandbox: ChildProcess | undefined;

  beforeAll(async () => {
    for (const dir of [work, config, binDir]) mkdirSync(dir, { recursive: true });
    writeFileSync(join(binDir, 'opcli'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(binDir, 'opcli'), 0o755);
    sandbox = await startSandbox(env, work);
    const login = await run(process.execPath, [BIN, 'auth', 'login', '--client-credentials'], { cwd: work, env });
    if (login.code !== 0) throw new Error(`logging in to the sandbox failed:\n${login.output}`);
  });

  afterAll(async () => {
    if (sandbox && sandbox.exitCode === null) {
      const exited = new Promise((r) => sandbox?.once('exit', r));
      sandbox.kill('SIGTERM');
      await exited;
    }
    folder.cleanup();
  });

  for (const [n, block] of blocks.entries()) {
    it.sequential(`block ${n + 1} (line ${block.line}) runs as written`, async () => {
      const script = join(folder.dir, `block-${n + 1}.sh`);
      writeFileSync(script, blockScript(block));
      const { code, output } = await run('bash', [script], { cwd: work, env });
      const failure = blockFailure(`docs/${guide}`, block, code, output);
      expect(failure, failure).toBeUndefined();
    });
  }
});
