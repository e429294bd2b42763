import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { commandWord, GROUPS } from '../../src/cli/program.js';
import { displayWidth } from '../../src/text/wrap.js';
import { BIN, runBinary, runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';

describe('the program', () => {
  it('finds the command word past global options', () => {
    expect(commandWord(['--profile', 'x', '--verbose', 'orders', 'list'])).toBe('orders');
    expect(commandWord(['-p', 'orders', 'config'])).toBe('config');
    expect(commandWord(['help', 'claims'])).toBe('claims');
    expect(commandWord(['--version'])).toBeUndefined();
  });

  it('prints help with examples and the exit codes, and exits 0', async () => {
    const r = await runOpcli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: opcli');
    expect(r.stdout).toContain('Examples:');
    expect(r.stdout).toContain('Exit codes: 0 ok');
    for (const g of GROUPS) expect(r.stdout).toContain(g.name);
  });

  it.each(GROUPS.map((g) => g.name))('`%s --help` has examples', async (name) => {
    const r = await runOpcli([name, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Examples?:/);
  });

  it('exits 2 with a hint on an unknown option or command', async () => {
    const opt = await runOpcli(['config', 'list', '--bogus']);
    expect(opt.code).toBe(2);
    expect(opt.stderr).toContain("unknown option '--bogus'");
    const cmd = await runOpcli(['nonsense']);
    expect(cmd.code).toBe(2);
    expect(cmd.stderr).toContain("unknown command 'nonsense'");
  });
});

describe('the built binary', () => {
  it('prints its version and help, and maps a usage error to exit 2', async () => {
    const { version } = await import('../../package.json', { with: { type: 'json' } }).then((m) => m.default);
    const v = await runBinary(['--version']);
    expect(v).toMatchObject({ code: 0, stdout: `${version}\n` });
    const h = await runBinary(['orders', '--help']);
    expect(h.code).toBe(0);
    expect(h.stdout).toContain('orders');
    const bad = await runBinary(['config', 'get']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("missing required argument 'key'");
  });

  it('answers --help and a bare `opcli` from the help rendered at build time, identical to the live one', async () => {
    const live = await runOpcli(['--help']);
    const shim = await runBinary(['--help']);
    expect(shim.code).toBe(0);
    expect(shim.stdout).toBe(live.stdout);
    expect((await runBinary([])).stdout).toBe(live.stdout);
  });

  it('never writes colour to a pipe, even with FORCE_COLOR', async () => {
    const r = await runBinary(['config', 'get', 'bogus'], { env: { OPCLI_CONFIG_DIR: '/tmp/opcli-nocolor-test', FORCE_COLOR: '1' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Error: Unknown setting');
    expect(r.stderr).not.toMatch(/\u001b\[/);
  });
});

/** Runs the built binary in a pseudo-terminal of `cols` columns (util-linux `script`); returns what the terminal showed. */
function inTerminal(args: string[], env: Record<string, string> = {}, cols = 80): { out: string; code: number } {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('script', ['-qec', `stty cols ${cols} rows 50; ${quoted}`, '/dev/null'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm-256color', OPCLI_CONFIG_DIR: '/tmp/opcli-pty-test', ...env },
  });
  return { out: r.stdout.replace(/\r\n/g, '\n'), code: r.status ?? -1 };
}

const hasScript = spawnSync('script', ['--version']).status === 0;

/** inTerminal without blocking the event loop, for a sandbox running in this process. */
function inTerminalAsync(args: string[], env: Record<string, string> = {}, cols = 80): Promise<{ out: string; code: number }> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', `stty cols ${cols} rows 50; ${quoted}`, '/dev/null'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm-256color', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ out: out.replace(/\r\n/g, '\n'), code: code ?? -1 }));
  });
}

describe.skipIf(!hasScript)('on a terminal (pseudo-terminal, 80 columns)', () => {
  it('colours the Error: prefix, and not with NO_COLOR, --no-color or TERM=dumb', () => {
    const on = inTerminal(['config', 'get', 'bogus']);
    expect(on.code).toBe(2);
    expect(on.out).toContain('\u001b[31mError:');
    for (const [args, env] of [
      [['config', 'get', 'bogus'], { NO_COLOR: '1' }],
      [['--no-color', 'config', 'get', 'bogus'], {}],
      [['config', 'get', 'bogus'], { TERM: 'dumb' }],
    ] as [string[], Record<string, string>][]) {
      const off = inTerminal(args, env);
      expect(off.out).toContain('Error: Unknown setting');
      expect(off.out, JSON.stringify(env)).not.toMatch(/\u001b\[[0-9;]*m/);
    }
  });

  it.each(['claims file', 'orders list', 'orders update', 'giftcard issue', 'orders', ''])(
    '`opcli %s --help` fits 80 columns, broken at word boundaries',
    (words) => {
      const r = inTerminal([...words.split(' ').filter(Boolean), '--help']);
      expect(r.code).toBe(0);
      // Examples are kept whole so they can be copied; everything else fits.
      let continued = false;
      const lines = r.out.split('\n').filter((l) => {
        const example = /^\s+\$ /.test(l) || continued;
        continued = example && l.trimEnd().endsWith('\\');
        return !example;
      });
      for (const line of lines) expect(displayWidth(line), line).toBeLessThanOrEqual(80);
      // Examples stay whole, to be copied.
      expect(r.out).toMatch(/^ {2}\$ opcli /m);
    },
  );
});

describe.skipIf(!hasScript)('orders list in a pseudo-terminal', () => {
  it.each([80, 100])('the table fits %i columns, with colour in the header only when allowed', async (cols) => {
    const { startSandbox } = await import('../../src/sandbox/index.js');
    const sandbox = await startSandbox({ orders: 30 });
    const { dir, cleanup } = tempConfigDir();
    try {
      await sandboxProfile(sandbox, dir);
      const r = await inTerminalAsync(['orders', 'list', '--size', '8'], { OPCLI_CONFIG_DIR: dir }, cols);
      expect(r.code, r.out).toBe(0);
      const lines = r.out.split('\n');
      expect(lines.some((l) => l.includes('ord_000008'))).toBe(true);
      for (const line of lines) expect(displayWidth(line), line).toBeLessThanOrEqual(cols);
      expect(r.out).toContain('\u001b[1msourceOrderId');
      const plain = await inTerminalAsync(['orders', 'list', '--size', '8'], { OPCLI_CONFIG_DIR: dir, NO_COLOR: '1' }, cols);
      expect(plain.out).not.toMatch(/\u001b\[[0-9;]*m/);
    } finally {
      cleanup();
      await sandbox.close();
    }
  });
});

describe('errors', () => {
  it("one prefix: commander's usage errors say Error: too", async () => {
    const r = await runOpcli(['orders', 'list', '--bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^Error: unknown option '--bogus'/);
    expect(r.stderr).not.toMatch(/^error:/m);
  });

  it('under --json every error is one JSON object on stderr: usage, validation and API errors', async () => {
    const usage = await runOpcli(['orders', 'list', '--bogus', '--json']);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stderr)).toEqual({
      error: { message: "unknown option '--bogus'", hint: 'Run the command with --help for its usage.', exitCode: 2 },
    });
    const { dir, cleanup } = tempConfigDir();
    try {
      const bad = await runOpcli(['orders', 'update', 'ord_1', '--replace', '--source-order-number', '#1', '--currency', 'USX', '--json'], {
        env: { OPCLI_CONFIG_DIR: dir },
      });
      expect(bad.code).toBe(2);
      const doc = JSON.parse(bad.stderr);
      expect(doc.error.exitCode).toBe(2);
      expect(doc.error.message).toContain('USX is not a currency');
      expect(doc.error.hint).toContain('Nothing was sent');
      expect(doc.error.issues[0]).toMatchObject({ path: 'currency' });
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      cleanup();
    }
  });
});

describe('help', () => {
  it('`opcli help orders list` shows the verb, not the group', async () => {
    const r = await runOpcli(['help', 'orders', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: opcli orders list [options]');
    expect(r.stdout).toContain('--columns');
    const g = await runOpcli(['--profile', 'x', 'help', 'orders']);
    expect(g.stdout).toContain('Usage: opcli orders');
    expect(g.stdout).toContain('update');
  });

  it('prose is wrapped to the width at word boundaries, examples are not', async () => {
    const r = await runOpcli(['orders', 'update', '--help'], { env: { COLUMNS: '60' } });
    const lines = r.stdout.split('\n');
    for (const line of lines.filter((l) => !/^\s+\$ /.test(l))) expect(displayWidth(line), line).toBeLessThanOrEqual(60);
    // No word is cut: every word of the prose paragraph appears whole.
    expect(r.stdout.replace(/\s+/g, ' ')).toContain('The API replaces the whole order on every update.');
    expect(r.stdout).toContain('  $ jq \'.currency = "EUR"\' order.json | opcli orders update ord_000001 --data - --replace');
  });

  it('an error message on a terminal is wrapped at word boundaries', async () => {
    const { wrapText } = await import('../../src/text/wrap.js');
    const text = 'Error: Logged in with scopes read_orders, read_claims, read_store, write_orders, write_claims and more words';
    const wrapped = wrapText(text, 40).split('\n');
    for (const l of wrapped) expect(l.length).toBeLessThanOrEqual(40);
    expect(wrapped.join(' ').replace(/\s+/g, ' ')).toBe(text);
  });
});

describe('every table fits an 80-column terminal', () => {
  it.each([['config list'], ['profiles list'], ['auth status'], ['giftcard setup --check'], ['orders list']])('%s', async (command) => {
    const { startSandbox } = await import('../../src/sandbox/index.js');
    const sandbox = await startSandbox({ orders: 30 });
    const { dir, cleanup } = tempConfigDir();
    try {
      await sandboxProfile(sandbox, dir);
      const r = await runOpcli(command.split(' '), { tty: true, env: { OPCLI_CONFIG_DIR: dir, NO_COLOR: '1', COLUMNS: '80', CI: '1' } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.length).toBeGreaterThan(0);
      for (const line of r.stdout.split('\n')) expect(displayWidth(line), line).toBeLessThanOrEqual(80);
    } finally {
      cleanup();
      await sandbox.close();
    }
  });
});
