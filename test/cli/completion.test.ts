/**
 * Completion as a user gets it: the script `opcli completion <shell>` prints is loaded into the real
 * shell, and TAB is pressed on a command line (bash through COMP_WORDS and the function `complete`
 * registered, zsh with its completion builtins stood in for, fish with `complete -C`, PowerShell
 * with TabExpansion2). `opcli` on PATH is the built binary: each TAB runs a real `opcli __complete`
 * against the test's config folder.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_FIELDS } from '../../src/claims/fields.js';
import { GROUPS } from '../../src/cli/program.js';
import { fieldKinds } from '../../src/input/flags.js';
import { CURRENCY_CODES, ISSUE_TYPES, Order, ProductVariant, RESOLUTIONS } from '../../src/schemas.js';
import { havePty } from '../auth/pty.js';
import { BIN, runOpcli, tempConfigDir } from '../helpers.js';

/** Where a shell is missing: the reason to print. Under CI zsh and fish must be there (.ci/run installs them). */
function missingShell(shell: 'zsh' | 'fish' | 'pwsh'): string | undefined {
  if (spawnSync(shell, ['-c', 'exit 0']).status === 0) return undefined;
  if (shell === 'pwsh') {
    const reason = 'pwsh (PowerShell) not installed: Debian has no package for it; the PowerShell script is checked by its text only';
    console.warn(`skipping: ${reason}`);
    return reason;
  }
  const reason = `${shell} not installed (apt-get install --no-install-recommends ${shell}); .ci/run installs it`;
  if (process.env.CI) throw new Error(`completion tests need ${reason}`);
  console.warn(`skipping: ${reason}`);
  return reason;
}

let work: { dir: string; cleanup: () => void };
let env: Record<string, string>;
let cwd: string;

beforeAll(async () => {
  work = tempConfigDir();
  const config = join(work.dir, 'config');
  const bin = join(work.dir, 'bin');
  cwd = join(work.dir, 'cwd');
  for (const d of [config, bin, join(cwd, 'notes')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(cwd, 'claims.csv'), 'x\n');
  writeFileSync(join(cwd, 'claims.jsonl'), '{}\n');
  writeFileSync(join(bin, 'opcli'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`);
  chmodSync(join(bin, 'opcli'), 0o755);
  env = { PATH: `${bin}:${process.env.PATH}`, HOME: work.dir, OPCLI_CONFIG_DIR: config };
  for (const name of ['staging', 'prod'])
    expect((await runOpcli(['--profile', name, 'config', 'set', 'base-url', 'https://api.example'], { env })).code).toBe(0);
});
afterAll(() => work?.cleanup());

async function script(shell: string): Promise<string> {
  const r = await runOpcli(['completion', shell]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

/** A command line as the shell splits it: words, the last one being completed ('' after a space). */
const words = (line: string) => line.split(' ');
const q = (w: string) => `'${w.replace(/'/g, `'\\''`)}'`;
/** The text a candidate must start with: the last word, past a `--flag=`. */
const lastWord = (line: string) => (words(line).at(-1) ?? '').replace(/^-[^=]*=/, '');

/** bash: each line through COMP_WORDS/COMP_CWORD (split at "=" as readline does) and _opcli; COMPREPLY, sorted. */
function bashComplete(text: string, lines: string[]): string[][] {
  const calls = lines.map((line) => {
    const w = words(line).flatMap((word) => (/^-[^=]+=/.test(word) ? [word.slice(0, word.indexOf('=')), '=', word.slice(word.indexOf('=') + 1)] : [word]));
    return `t ${w.map(q).join(' ')}`;
  });
  const out = execFileSync(
    'bash',
    ['-c', `${text}\nt() { COMP_WORDS=("$@"); COMP_CWORD=$(($#-1)); COMPREPLY=(); _opcli; printf '%s\\n' "\${COMPREPLY[*]}"; }\n${calls.join('\n')}`],
    { encoding: 'utf8', env, cwd },
  );
  return split(out, lines.length);
}

/** zsh: the completion builtins stood in for (compadd prints what it is given); zsh's own prefix match applied here. */
function zshComplete(text: string, lines: string[]): string[][] {
  const stubs = [
    'compdef() { : }',
    'compset() { : }',
    "_files() { print -r -- '<files>' }",
    `compadd() { while [[ $# -gt 0 && $1 != -- ]]; do shift; done; shift; print -r -- "\${(j: :)@}" }`,
  ].join('\n');
  const calls = lines.map((line) => `t ${words(line).map(q).join(' ')}`);
  const dir = join(work.dir, 'zsh');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '_opcli'), text);
  const out = execFileSync(
    'zsh',
    ['-f', '-c', `${stubs}\nsource ${q(join(dir, '_opcli'))}\nt() { words=("$@"); CURRENT=$#; print -r -- "$(_opcli)" }\n${calls.join('\n')}`],
    { encoding: 'utf8', env, cwd },
  );
  return split(out, lines.length).map((got, i) => got.filter((c) => c === '<files>' || c.startsWith(lastWord(lines[i] as string))));
}

/** fish: `complete -C` on each line, the script sourced. */
function fishComplete(text: string, lines: string[]): string[][] {
  const file = join(work.dir, 'opcli.fish');
  writeFileSync(file, text);
  const out = execFileSync(
    'fish',
    ['--no-config', '-c', `source ${q(file)}; for l in $argv; echo (complete -C $l | cut -f1 | string join ' '); end`, ...lines],
    { encoding: 'utf8', env, cwd },
  );
  return split(out, lines.length).map((got) => got.map((c) => c.replace(/^-[^=]*=/, '')));
}

/** PowerShell: TabExpansion2 on each line, the script dot-sourced. */
function pwshComplete(text: string, lines: string[]): string[][] {
  const file = join(work.dir, 'opcli.ps1');
  writeFileSync(file, text);
  const calls = lines.map(
    (line) =>
      `$l = '${line.replace(/'/g, "''")}'; ((TabExpansion2 -inputScript $l -cursorColumn $l.Length).CompletionMatches | ForEach-Object { $_.CompletionText }) -join ' '`,
  );
  const out = execFileSync('pwsh', ['-NoProfile', '-NonInteractive', '-Command', `. '${file}'\n${calls.join('\n')}`], { encoding: 'utf8', env, cwd });
  return split(out, lines.length).map((got) => got.map((c) => c.replace(/^-[^=]*=/, '')));
}

function split(out: string, n: number): string[][] {
  const rows = out.replace(/\n$/, '').split('\n');
  expect(rows, out).toHaveLength(n);
  return rows.map((row) => (row.trim() === '' ? [] : row.trim().split(/\s+/).sort()));
}

/** What each line offers, in every shell. `files` marks a line that completes file names. */
const startsWith = (values: readonly string[], prefix: string) => values.filter((v) => v.startsWith(prefix)).sort();
const CASES: [line: string, expected: string[] | 'files'][] = [
  ['opcli claims file --issue-type ', [...ISSUE_TYPES].sort()],
  ['opcli claims file --resolution RE', startsWith(RESOLUTIONS, 'RE')],
  ['opcli claims file --issue-type=ST', ['STOLEN']],
  ['opcli -p staging claims file --format j', ['json', 'jsonl']],
  ['opcli orders update ord_1 --currency EU', startsWith(CURRENCY_CODES, 'EU')],
  ['opcli giftcard setup --currency US', startsWith(CURRENCY_CODES, 'US')],
  ['opcli variants create --status D', ['DELETED', 'DRAFT']],
  ['opcli sandbox --rate-limit-headers ', ['both', 'ietf', 'none', 'x']],
  ['opcli --profile st', ['staging']],
  ['opcli -p ', ['prod', 'staging']],
  ['opcli profiles use ', ['prod', 'staging']],
  ['opcli claims file --from ', 'files'],
  ['opcli config set client-secret --from-file cl', 'files'],
  ['opcli claims file --shipping-city ', []],
  ['opcli orders list --size ', []],
  ['opcli claims file --iss', ['--issue-type']],
  ['opcli ord', ['orders']],
  ['opcli completion ', ['bash', 'fish', 'powershell', 'zsh']],
  ['opcli orders list --progress ', ['auto', 'none', 'plain']],
  ['opcli --progress plain claims file --format j', ['json', 'jsonl']],
];

function expectCases(got: string[][], filesLook: (got: string[]) => boolean) {
  CASES.forEach(([line, expected], i) => {
    if (expected === 'files') expect(filesLook(got[i] ?? []), `${line} → ${got[i]}`).toBe(true);
    else expect(got[i], line).toEqual(expected);
  });
}

describe('completion in the real shells', () => {
  it('bash: values of enum flags, profile names, file names, nothing after a free-text flag', async () => {
    const got = bashComplete(
      await script('bash'),
      CASES.map(([line]) => line),
    );
    expectCases(got, (g) => g.includes('claims.csv') && !g.includes('STOLEN'));
  });

  it.skipIf(missingShell('zsh'))('zsh: the same', async () => {
    const got = zshComplete(
      await script('zsh'),
      CASES.map(([line]) => line),
    );
    expectCases(got, (g) => g.join(' ') === '<files>');
  });

  it.skipIf(missingShell('fish'))('fish: the same', async () => {
    const got = fishComplete(
      await script('fish'),
      CASES.map(([line]) => line),
    );
    expectCases(got, (g) => g.includes('claims.csv'));
  });

  it.skipIf(missingShell('pwsh'))('PowerShell: the same', async () => {
    const got = pwshComplete(
      await script('powershell'),
      CASES.map(([line]) => line),
    );
    expectCases(got, (g) => g.some((c) => c.includes('claims.csv')));
  });

  it('every enum field of a claim, an order and a variant completes its schema values (bash)', async () => {
    const text = await script('bash');
    const lines: string[] = [];
    const expected: string[][] = [];
    const enums = (verb: string, fields: readonly { flag: string; values?: readonly string[] }[]) => {
      for (const f of fields) {
        if (!f.values) continue;
        lines.push(`opcli ${verb} --${f.flag} `);
        expected.push([...f.values].sort());
      }
    };
    enums('claims file', CLAIM_FIELDS);
    enums('orders update ord_1', fieldKinds(Order));
    enums('variants create', fieldKinds(ProductVariant));
    expect(lines.length).toBeGreaterThanOrEqual(8);
    expect(bashComplete(text, lines)).toEqual(expected);
  });
});

/** An interactive bash in a pseudo-terminal (util-linux `script`): what a person sees after typing and pressing TAB. */
function interactiveBash(rc: string) {
  const child = spawn('/usr/bin/script', ['-qfec', `bash --noprofile --rcfile ${q(rc)} -i`, '/dev/null'], {
    env: { ...env, TERM: 'dumb', PS1: '$ ', INPUTRC: '/dev/null' },
    cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  const listeners = new Set<() => void>();
  child.stdout.on('data', (c: Buffer) => {
    screen += c.toString();
    for (const l of listeners) l();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  child.on('close', () => clearTimeout(killer));
  return {
    type: (text: string) => child.stdin.write(text),
    /** Resolves once the screen, from `from` on, matches `pattern` (fails after 15 s). */
    waitFor: (pattern: RegExp, from: number) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no ${pattern} on the screen:\n${screen.slice(from)}`));
        }, 15_000);
        function check() {
          if (!pattern.test(screen.slice(from).replace(/\r/g, ''))) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve();
        }
        listeners.add(check);
        check();
      }),
    mark: () => screen.length,
    close: () => {
      child.stdin.end('exit\n');
      return new Promise<void>((resolve) => child.on('close', () => resolve()));
    },
  };
}

describe.skipIf(!havePty)('pressing TAB in an interactive bash', () => {
  it('completes an enum value, a profile name and a file name on the command line', async () => {
    const rc = join(work.dir, 'bashrc');
    writeFileSync(rc, await script('bash'));
    const bash = interactiveBash(rc);
    try {
      let at = bash.mark();
      bash.type('echo ready\n');
      await bash.waitFor(/^ready$/m, at);
      // One candidate: TAB writes it out, with a space after it.
      at = bash.mark();
      bash.type('opcli claims file --issue-type STO\t');
      await bash.waitFor(/--issue-type STOLEN $/m, at);
      bash.type('\u0015');
      // Two candidates: the second TAB lists them.
      at = bash.mark();
      bash.type('opcli claims file --resolution RE\t\t');
      await bash.waitFor(/REFUND\s+RESHIP/, at);
      bash.type('\u0015');
      // Profile names, read from the settings when TAB is pressed.
      at = bash.mark();
      bash.type('opcli -p st\t');
      await bash.waitFor(/-p staging $/m, at);
      bash.type('\u0015');
      // File names after --from.
      at = bash.mark();
      bash.type('opcli claims file --from claims.j\t');
      await bash.waitFor(/--from claims\.jsonl $/m, at);
      bash.type('\u0015');
    } finally {
      await bash.close();
    }
  });
});

describe('the command tree in the scripts', () => {
  const complete = (text: string, line: string) => bashComplete(text, [line])[0] ?? [];

  it('completes every command, verb and flag the command tree has', async () => {
    const { Command } = await import('commander');
    const text = await script('bash');
    const deps = (await runOpcli(['--version'])).deps;
    expect(complete(text, 'opcli ')).toEqual(GROUPS.map((g) => g.name).sort());
    for (const group of GROUPS) {
      const program = new Command();
      await (await group.load()).register(program, deps);
      const verbs = (program.commands[0] as InstanceType<typeof Command>).commands;
      if (verbs.length) expect(complete(text, `opcli ${group.name} `)).toEqual(verbs.map((v) => v.name()).sort());
      for (const verb of verbs) {
        const flags = complete(text, `opcli ${group.name} ${verb.name()} --`);
        for (const o of verb.options) if (o.long && !(o as { hidden?: boolean }).hidden) expect(flags, `${group.name} ${verb.name()}`).toContain(o.long);
      }
    }
    expect(complete(text, 'opcli orders list --cs')).toEqual(['--csv', '--csv-raw']);
    expect(complete(text, 'opcli -p staging auth ')).toEqual(['login', 'logout', 'refresh', 'status', 'token']);
    expect(complete(text, 'opcli --verbose claims t')).toEqual(['template']);
  });

  it('completes setting keys, and answers the shims with profile names', async () => {
    const { SETTING_KEYS } = await import('../../src/config/setting-keys.js');
    expect(complete(await script('bash'), 'opcli config get ')).toEqual(SETTING_KEYS.map((k) => k.key).sort());
    const listed = await runOpcli(['__complete', 'profiles', 'use', ''], { env });
    expect(listed).toMatchObject({ code: 0, stdout: 'prod\nstaging\n:4\n', stderr: '' });
  });

  it("answers in cobra's protocol: a candidate a line, then the directive (4: no file names; 0: the shell's file names)", async () => {
    const ask = async (...words: string[]) => (await runOpcli(['__complete', ...words], { env })).stdout;
    expect(await ask('claims', 'file', '--issue-type', 'ST')).toBe('STOLEN\n:4\n');
    expect(await ask('claims', 'file', '--issue-type=ST')).toBe('STOLEN\n:4\n');
    expect(await ask('-p', 'staging', 'claims', 'file', '--from', '')).toBe(':0\n');
    expect(await ask('orders', 'list', '--size', '')).toBe(':4\n');
    // --help among the words is a word of the line, not a request for help.
    expect(await ask('orders', '--help', 'l')).toBe('list\n:4\n');
    expect(await ask()).toBe(`${GROUPS.map((g) => `${g.name}\n`).join('')}:4\n`);
  });

  it('prints a PowerShell script that registers a native completer asking opcli __complete', async () => {
    const text = await script('powershell');
    expect(text).toContain('Register-ArgumentCompleter -Native -CommandName opcli -ScriptBlock');
    expect(text).toContain('opcli __complete');
    expect((await runOpcli(['completion', 'pwsh'])).stdout).toBe(text);
  });

  it('registers the bash function the way the pack smoke test of .ci/run looks for', async () => {
    expect(await script('bash')).toContain('complete -o default -F _opcli opcli');
  });

  it('names the four shells when none or another is asked for (exit 2)', async () => {
    const none = await runOpcli(['completion']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Name the shell: bash, zsh, fish or powershell.');
    const other = await runOpcli(['completion', 'tcsh']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('Unknown shell "tcsh".');
    expect(other.stderr).toContain('Use one of: bash, zsh, fish, powershell.');
  });
});
