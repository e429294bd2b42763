import { describe, expect, it } from 'vitest';
import { commandWord, GROUPS } from '../../src/cli.js';
import { runBinary, runOpcli } from '../helpers.js';

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

  it('the bash script completes commands and verbs, past global options', async () => {
    const { execFileSync } = await import('node:child_process');
    const script = (await runOpcli(['completion', 'bash'])).stdout;
    const complete = (words: string[]) =>
      execFileSync('bash', ['-c', `${script}\nCOMP_WORDS=("$@"); COMP_CWORD=$(($#-1)); _opcli; echo "\${COMPREPLY[*]}"`, 'bash', ...words], {
        encoding: 'utf8',
      }).trim();
    expect(complete(['opcli', 'or'])).toBe('orders');
    expect(complete(['opcli', '-p', 'staging', 'auth', ''])).toBe('login status token refresh logout');
    expect(complete(['opcli', '--verbose', 'claims', 't'])).toBe('template');
    expect(complete(['opcli', 'orders', 'list', ''])).toBe('');
  });

  it('prints completion scripts for bash, zsh and fish, and refuses others', async () => {
    const bash = await runOpcli(['completion', 'bash']);
    expect(bash.stdout).toContain('complete -o default -F _opcli opcli');
    expect(bash.stdout).toContain('login status token refresh logout');
    expect((await runOpcli(['completion', 'zsh'])).stdout).toContain('#compdef opcli');
    expect((await runOpcli(['completion', 'fish'])).stdout).toContain("complete -c opcli -n '__fish_use_subcommand' -a orders");
    expect((await runOpcli(['completion', 'powershell'])).code).toBe(2);
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

  it('turns colour off for a pipe and with NO_COLOR', async () => {
    const r = await runBinary(['config', 'path'], { env: { OPCLI_CONFIG_DIR: '/tmp/opcli-nocolor-test', FORCE_COLOR: '1' } });
    expect(r.stdout).not.toMatch(/\u001b\[/);
  });
});
