/**
 * --progress auto|plain|none (also OPCLI_PROGRESS and the `progress` setting) as a person or a CI log
 * sees it: a sentence every 10 s of the run's clock when stderr is not a terminal, nothing with none,
 * a redrawn line on a terminal that is taken off before the table.
 */
import { PassThrough, Readable } from 'node:stream';
import { expect, test } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { createDeps } from '../../src/cli/deps.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { profileSuite, runOpcli } from '../helpers.js';

let sandbox: Sandbox;
let env: Record<string, string>;
profileSuite((s) => ({ sandbox, env } = s), { sandbox: { orders: 1200 } });

/** A clock that moves 4 s at every reading: a run of a few pages lasts minutes of its time. */
function slowClock() {
  let t = 1_000_000;
  return { now: () => (t += 4000), sleep: async (ms: number) => void (t += ms) };
}

const sentences = (stderr: string) => stderr.split('\n').filter((l) => /^\d[\d,]* of 1,200 orders · \d+ pages?/.test(l));

test('a CI log (stderr not a terminal) gets a plain progress sentence every 10 s, and the footer counts the same way', async () => {
  const r = await runOpcli(['orders', 'list', '--all', '--jsonl', '--size', '100'], { env, ...slowClock() });
  expect(r.code).toBe(0);
  expect(r.stdout.trim().split('\n')).toHaveLength(1200);
  const lines = sentences(r.stderr);
  expect(lines.length).toBeGreaterThan(1);
  expect(lines[0]).toMatch(/^\d{3} of 1,200 orders · \d pages? · \d+ orders\/s$/);
  expect(r.stderr).not.toContain('\r');
  expect(r.stderr).not.toContain('\x1b[');
  expect(r.stderr).toContain('1,200 of 1,200 orders in 12 pages.');
});

test('--progress none, OPCLI_PROGRESS=none and the progress setting keep the log to the footer', async () => {
  for (const [argv, extra] of [
    [['--progress', 'none'], {}],
    [[], { OPCLI_PROGRESS: 'none' }],
  ] as const) {
    const r = await runOpcli([...argv, 'orders', 'list', '--all', '--jsonl', '--size', '100'], { env: { ...env, ...extra }, ...slowClock() });
    expect(r.code).toBe(0);
    expect(sentences(r.stderr)).toEqual([]);
    expect(r.stderr).toBe('1,200 of 1,200 orders in 12 pages.\n');
  }
  expect((await runOpcli(['config', 'set', 'progress', 'none'], { env })).code).toBe(0);
  const r = await runOpcli(['orders', 'list', '--all', '--jsonl', '--size', '100'], { env, ...slowClock() });
  expect(r.stderr).toBe('1,200 of 1,200 orders in 12 pages.\n');
  // The flag wins over the setting.
  const plain = await runOpcli(['orders', 'list', '--all', '--jsonl', '--size', '100', '--progress', 'plain'], { env, ...slowClock() });
  expect(sentences(plain.stderr).length).toBeGreaterThan(1);
});

test('a bad mode is a usage error naming the flag or the variable, and nothing is sent', async () => {
  const before = sandbox.requests.length;
  const flag = await runOpcli(['orders', 'list', '--progress', 'fancy'], { env });
  expect(flag.code).toBe(2);
  expect(flag.stderr).toContain('--progress "fancy" is not a progress mode: expected auto, plain or none.');
  const variable = await runOpcli(['orders', 'list'], { env: { ...env, OPCLI_PROGRESS: 'loud' } });
  expect(variable.code).toBe(2);
  expect(variable.stderr).toContain('OPCLI_PROGRESS "loud" is not a progress mode');
  const accessible = await runOpcli(['orders', 'list'], { env: { ...env, OPCLI_ACCESSIBLE: 'maybe' } });
  expect(accessible.code).toBe(2);
  expect(accessible.stderr).toContain('OPCLI_ACCESSIBLE "maybe" is not 1 or 0.');
  const setting = await runOpcli(['config', 'set', 'progress', 'loud'], { env });
  expect(setting.code).toBe(2);
  expect(setting.stderr).toContain('expected auto, plain or none, got "loud"');
  expect(sandbox.requests.length).toBe(before);
});

test('on a terminal (one screen for stdout and stderr) the redrawn line is taken off before the table is drawn', async () => {
  // One stream for both, as a terminal shows them: the order of the writes is what the person sees.
  const screen = new PassThrough();
  let seen = '';
  screen.on('data', (c) => {
    seen += c.toString();
  });
  const deps = createDeps({
    stdin: Readable.from([]),
    stdout: screen,
    stderr: screen,
    stdinIsTTY: true,
    stdoutIsTTY: true,
    stderrIsTTY: true,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env, NO_COLOR: '1' },
    cwd: process.cwd(),
    ...slowClock(),
  });
  expect(await runCli(['orders', 'list', '--limit', '6', '--size', '2'], deps)).toBe(0);
  expect(seen).toMatch(/orders\/s/);
  expect(seen).not.toMatch(/orders\/s┌/);
  expect(seen).toMatch(/\r\x1b\[2K┌/);
  expect(seen).toContain('6 of 1,200 orders in 3 pages (stopped at --limit 6).');
});

test('the accessible mode writes sentences on a terminal too, nothing redrawn', async () => {
  const r = await runOpcli(['orders', 'list', '--all', '--jsonl', '--size', '100'], { env: { ...env, OPCLI_ACCESSIBLE: '1' }, tty: true, ...slowClock() });
  expect(r.code).toBe(0);
  expect(sentences(r.stderr).length).toBeGreaterThan(1);
  expect(r.stderr).not.toContain('\r');
});

test('opcli api --paginate shows the same plain sentences in a log', async () => {
  const r = await runOpcli(['api', 'GET', '/v1/orders', '--paginate', '--query', 'size=100', '--jsonl'], { env, ...slowClock() });
  expect(r.code).toBe(0);
  expect(r.stdout.trim().split('\n')).toHaveLength(1200);
  const lines = r.stderr.split('\n').filter((l) => /^[\d,]+ orders · \d+ pages? · [\d,]+ orders\/s$/.test(l));
  expect(lines.length).toBeGreaterThan(1);
});
