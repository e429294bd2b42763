import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { BIN, runBinary, sandboxProfile } from '../helpers.js';

// The bin shim answers --version and every help page without loading the bundle: what it prints
// must be exactly what the bundle prints. (Rebuild with `node bin/build.mjs` after changing src/.)
const ROOT = new URL('../../', import.meta.url).pathname;
const cache = mkdtempSync(join(tmpdir(), 'opcli-cache-'));
afterAll(() => rmSync(cache, { recursive: true, force: true }));

function bundle(argv: string[]): string {
  const r = spawnSync(process.execPath, [join(ROOT, 'dist/main.js'), ...argv], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, NO_COLOR: '1', OPCLI_CONFIG_DIR: join(cache, 'cfg') },
  });
  return r.stdout;
}

describe('bin shim', () => {
  it('has a help page for every group and verb, each the same as the bundle renders', async () => {
    const pages = readdirSync(join(ROOT, 'dist/help')).map((f) => f.replace(/\.txt$/, '').split(' '));
    expect(pages.map((p) => p.join(' '))).toEqual(expect.arrayContaining(['orders', 'orders list', 'claims file', 'sandbox', 'giftcard issue']));
    for (const words of [['orders'], ['orders', 'list'], ['claims', 'file'], ['sandbox']]) {
      const r = await runBinary([...words, '--help'], { env: { OPCLI_CONFIG_DIR: join(cache, 'cfg') } });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(bundle([...words, '--help']));
      expect(r.stdout).toContain(`Usage: opcli ${words.join(' ')}`);
    }
  });

  it('leaves anything that is not a plain help page to the bundle', async () => {
    const r = await runBinary(['orders', 'list', '--bogus', '--help'], { env: { OPCLI_CONFIG_DIR: join(cache, 'cfg') } });
    expect(r.stdout).toContain('Usage: opcli orders list');
    const traversal = await runBinary(['..', '--help'], { env: { OPCLI_CONFIG_DIR: join(cache, 'cfg') } });
    expect(traversal.stdout).toBe(bundle(['..', '--help']));
  });

  it('puts the compile cache under XDG_CACHE_HOME where Node has one, and never fails without it', async () => {
    const hasCache = Number(process.versions.node.split('.')[0]) >= 22;
    mkdirSync(join(cache, 'xdg'), { recursive: true });
    const r = await runBinary(['config', 'path'], { env: { OPCLI_CONFIG_DIR: join(cache, 'cfg'), XDG_CACHE_HOME: join(cache, 'xdg') } });
    expect(r.code).toBe(0);
    expect(existsSync(join(cache, 'xdg/opcli/compile-cache'))).toBe(hasCache);
    // A missing cache base is made (one level, in a folder that exists), as on a fresh machine or in CI.
    const fresh = await runBinary(['config', 'path'], { env: { OPCLI_CONFIG_DIR: join(cache, 'cfg'), XDG_CACHE_HOME: join(cache, 'fresh') } });
    expect(fresh.code).toBe(0);
    expect(existsSync(join(cache, 'fresh/opcli/compile-cache'))).toBe(hasCache);
    const deep = await runBinary(['config', 'path'], { env: { OPCLI_CONFIG_DIR: join(cache, 'cfg'), XDG_CACHE_HOME: join(cache, 'no/such/parent') } });
    expect(deep.code).toBe(0);
    expect(existsSync(join(cache, 'no'))).toBe(false);
    const blocked = await runBinary(['config', 'path'], { env: { OPCLI_CONFIG_DIR: join(cache, 'cfg'), XDG_CACHE_HOME: '/proc/opcli-cannot-write-here' } });
    expect(blocked.code).toBe(0);
    expect(blocked.stderr).toBe('');
  });
});

describe('the shim without a bundle', () => {
  it('says how to build, exit 1, and still answers --version', () => {
    // A copy of the package without dist/: the shim is CommonJS and imports the ES module bundle only for real work.
    const pkg = join(cache, 'unbuilt');
    mkdirSync(join(pkg, 'bin'), { recursive: true });
    copyFileSync(join(ROOT, 'bin/opcli.cjs'), join(pkg, 'bin/opcli.cjs'));
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'opcli', version: '9.9.9', type: 'module' }));
    const env = { PATH: process.env.PATH, OPCLI_CONFIG_DIR: join(cache, 'cfg') };
    const run = spawnSync(process.execPath, [join(pkg, 'bin/opcli.cjs'), 'orders', 'list'], { encoding: 'utf8', env });
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('opcli is not built yet: run `npm run build` in the opcli folder.\n');
    expect(run.stdout).toBe('');
    const version = spawnSync(process.execPath, [join(pkg, 'bin/opcli.cjs'), '--version'], { encoding: 'utf8', env });
    expect(version.stdout).toBe('9.9.9\n');
    const help = spawnSync(process.execPath, [join(pkg, 'bin/opcli.cjs'), 'orders', '--help'], { encoding: 'utf8', env });
    expect(help.status).toBe(1);
    expect(help.stderr).toContain('not built yet');
  });
});

describe('long streaming runs restart with start-up flags', () => {
  // Which runs restart: a preload (NODE_OPTIONS, which the child inherits) notes each process that
  // starts. Without a profile every run stops at once; only the processes it started matter here.
  const probe = join(cache, 'probe.cjs');
  writeFileSync(probe, "require('node:fs').appendFileSync(process.env.PROBE_FILE, JSON.stringify(process.execArgv) + '\\n');\n");
  function started(argv: string[], nodeFlags: string[] = []): string[][] {
    const file = join(cache, `probe-${Math.random().toString(36).slice(2)}.jsonl`);
    writeFileSync(file, '');
    spawnSync(process.execPath, [...nodeFlags, BIN, ...argv], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, OPCLI_CONFIG_DIR: join(cache, 'empty'), NODE_OPTIONS: `--require ${probe}`, PROBE_FILE: file },
    });
    return readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as string[]);
  }
  const lean = ['--max-semi-space-size=4', '--liftoff-only'];

  it.each([
    [['orders', 'list', '--all', '--jsonl']],
    [['orders', 'list', '--limit', '5000']],
    [['orders', 'list', '--limit=20000']],
    [['claims', 'file', '--from', 'claims.csv']],
    [['-p', 'shop', 'claims', 'file', '--from=-', '--journal', 'j.jsonl']],
  ])('%j starts a second process with the flags', (argv) => {
    const runs = started(argv);
    expect(runs).toHaveLength(2);
    expect(runs[1]?.slice(0, 2)).toEqual(lean);
  });

  it.each([
    [['orders', 'list', '--limit', '10']],
    [['orders', 'list']],
    [['orders', 'list', '--all', '--help']],
    [['claims', 'file', '--from', 'claims.csv', '-h']],
    [['claims', 'file', '--claim-id', 'C1']],
    [['giftcard', 'history']],
    [['__complete', 'orders', 'list', '--all', '']],
  ])('%j runs in one process', (argv) => {
    expect(started(argv)).toHaveLength(1);
  });

  it('a run given the heap flag by hand is not restarted', () => {
    expect(started(['orders', 'list', '--all'], ['--max-semi-space-size=8'])).toHaveLength(1);
  });

  it('orders list --all runs in a child with the lean heap flag, and stops when the shim is killed', async () => {
    const sandbox = await startSandbox({ orders: 3000, latencyMs: 40 });
    const dir = join(cache, 'lean');
    try {
      await sandboxProfile(sandbox, dir);
      const shim = spawn(process.execPath, [BIN, 'orders', 'list', '--all', '--size', '5', '--jsonl'], {
        env: { PATH: process.env.PATH, OPCLI_CONFIG_DIR: dir },
        stdio: ['ignore', 'ignore', 'ignore'],
      });
      const pages = () => sandbox.requests.filter((r) => r.path === '/v1/orders').length;
      while (pages() < 5) await new Promise((r) => setTimeout(r, 20));
      const children = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(shim.pid)], { encoding: 'utf8' }).stdout;
      expect(children).toContain('--max-semi-space-size=4');
      const child = Number(children.trim().split(/\s+/)[0]);
      shim.kill('SIGKILL');
      // The child dies with the shim (gone, or a zombie nobody reaps), and then asks for no more pages.
      const alive = () => {
        try {
          return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${child}/stat`, 'utf8'));
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 1000 && alive(); i++) await new Promise((r) => setTimeout(r, 20));
      expect(alive()).toBe(false);
      // Gone, it can ask for no page after this: the listing stopped far short of its 600 pages.
      expect(pages()).toBeLessThan(600);
    } finally {
      await sandbox.close();
    }
  }, 60_000);
});
