/**
 * Login and prompts on machines as they are (issue 12): the built binary in a pseudo-terminal, with
 * a PATH that has no xdg-open, SSH variables, no display, BROWSER; and Ctrl-C at every prompt.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { sandboxProfile, tempConfigDir } from '../helpers.js';
import { type PtyRun, havePty, runInPty } from './pty.js';
import { locationOf } from './util.js';

if (!havePty) console.warn('Skipping the pseudo-terminal tests: `script` (util-linux) is not available.');

let sandbox: Sandbox;
let dir: string;
let cleanup: () => void;
let bin: string;

beforeAll(async () => {
  sandbox = await startSandbox({ autoApprove: true, orders: 5 });
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(async () => {
  ({ dir, cleanup } = tempConfigDir());
  await sandboxProfile(sandbox, join(dir, 'cfg'), { loggedIn: false });
  sandbox.resetLog();
  // A PATH of its own: no xdg-open unless a test puts its recording stand-in there.
  bin = join(dir, 'bin');
  mkdirSync(bin);
});
afterEach(() => cleanup());

/** A recording stand-in for a browser command: appends its arguments to `<name>.log`. */
function fakeCommand(name: string): string {
  const path = join(bin, name);
  writeFileSync(path, `#!/bin/sh\necho "$@" >> ${join(dir, `${name}.log`)}\n`);
  chmodSync(path, 0o755);
  return path;
}
const calls = (name: string) => (existsSync(join(dir, `${name}.log`)) ? readFileSync(join(dir, `${name}.log`), 'utf8') : '');

function login(env: Record<string, string>, argv: string[] = []): PtyRun {
  return runInPty(['auth', 'login', ...argv], { PATH: bin, HOME: dir, OPCLI_CONFIG_DIR: join(dir, 'cfg'), ...env });
}

/** Reads the printed consent link, approves it (the sandbox auto-approves) and returns where the browser would land. */
async function approve(pty: PtyRun): Promise<{ link: string; redirect: string }> {
  const [link] = await pty.waitFor(/http:\/\/127\.0\.0\.1:\d+\/v1\/oauth\/authorize\?[^\s\u001b]+/);
  return { link, redirect: await locationOf(link) };
}

/** A login that opens no browser: waits for `notice`, then pastes the approved address at the prompt. */
async function loginByPaste(env: Record<string, string>, notice: string): Promise<PtyRun> {
  const pty = login(env);
  const { redirect } = await approve(pty);
  await pty.waitFor(notice);
  await pty.waitFor('Or paste the full address');
  pty.write(`${redirect}\r`);
  return pty;
}

function expectNoCrash(screen: string): void {
  expect(screen).not.toContain('node:events');
  expect(screen).not.toContain('Unhandled');
  expect(screen).not.toContain('unexpected failure');
  expect(screen).not.toMatch(/\n\s+at /);
}

describe.skipIf(!havePty)('login without a usable browser', () => {
  test('no xdg-open on PATH (a desktop session): no crash; the link and the paste prompt finish the login', async () => {
    const pty = await loginByPaste({ DISPLAY: ':0' }, 'No browser was opened: xdg-open was not found.');
    expect(await pty.exit).toBe(0);
    expect(pty.output()).toContain('Logged in');
    expectNoCrash(pty.output());
  });

  test('an xdg-open on PATH that is not executable is not started: no crash, the paste prompt finishes', async () => {
    chmodSync(fakeCommand('xdg-open'), 0o644);
    const pty = await loginByPaste({ DISPLAY: ':0' }, 'No browser was opened: xdg-open was not found.');
    expect(await pty.exit).toBe(0);
    expect(calls('xdg-open')).toBe('');
    expectNoCrash(pty.output());
  });

  test('an xdg-open that starts but fails says so, and the login still finishes', async () => {
    const path = join(bin, 'xdg-open');
    writeFileSync(path, `#!/bin/sh\necho "$@" >> ${join(dir, 'xdg-open.log')}\nexit 3\n`);
    chmodSync(path, 0o755);
    const pty = login({ DISPLAY: ':0' });
    const { link, redirect } = await approve(pty);
    await pty.waitFor('The browser did not open (xdg-open exited with code 3)');
    await locationOf(redirect).catch(() => undefined);
    expect(await pty.exit).toBe(0);
    expect(calls('xdg-open').trim()).toBe(link);
    expectNoCrash(pty.output());
  });

  test('over SSH nothing is spawned, even with a display and xdg-open; the callback still works', async () => {
    fakeCommand('xdg-open');
    const pty = login({ DISPLAY: ':0', SSH_CONNECTION: '10.0.0.2 50000 10.0.0.1 22' });
    const { redirect } = await approve(pty);
    await pty.waitFor('No browser was opened: this is an SSH session');
    await locationOf(redirect).catch(() => undefined);
    expect(await pty.exit).toBe(0);
    expect(calls('xdg-open')).toBe('');
    expectNoCrash(pty.output());
  });

  test('Linux without DISPLAY or WAYLAND_DISPLAY: nothing is spawned; Ctrl-C at the paste prompt cancels (130)', async () => {
    fakeCommand('xdg-open');
    const pty = login({});
    await pty.waitFor('No browser was opened: there is no desktop session');
    await pty.waitFor('Or paste the full address');
    pty.write('\u0003');
    expect(await pty.exit).toBe(130);
    expect(pty.output()).toContain('Cancelled.');
    expect(calls('xdg-open')).toBe('');
    expectNoCrash(pty.output());
  });

  test('a desktop with xdg-open: it is given the link', async () => {
    fakeCommand('xdg-open');
    const pty = login({ DISPLAY: ':0' });
    const { link, redirect } = await approve(pty);
    await pty.waitFor('Or paste the full address');
    pty.write(`${redirect}\r`);
    expect(await pty.exit).toBe(0);
    expect(calls('xdg-open').trim()).toBe(link);
  });

  test('BROWSER is honoured, over SSH too, with %s standing for the link', async () => {
    const browser = fakeCommand('mybrowser');
    const pty = login({ SSH_TTY: '/dev/pts/3', BROWSER: `${browser} --new-tab %s` });
    const { link, redirect } = await approve(pty);
    await locationOf(redirect).catch(() => undefined);
    expect(await pty.exit).toBe(0);
    expect(calls('mybrowser').trim()).toBe(`--new-tab ${link}`);
    expect(pty.output()).not.toContain('No browser was opened');
  });

  test('a BROWSER that cannot start falls back to the link and the paste prompt', async () => {
    const pty = await loginByPaste(
      { DISPLAY: ':0', BROWSER: join(dir, 'no-such-browser') },
      `No browser was opened: ${join(dir, 'no-such-browser')} was not found.`,
    );
    expect(await pty.exit).toBe(0);
    expectNoCrash(pty.output());
  });

  test("a pasted address with another login's state is refused at the prompt; the login keeps waiting", async () => {
    const pty = login({});
    const { redirect } = await approve(pty);
    await pty.waitFor('Or paste the full address');
    const forged = new URL(redirect);
    forged.searchParams.set('state', 'not-this-login');
    pty.write(`${forged}\r`);
    await pty.waitFor('does not match this login');
    // Still waiting: the real redirect (here through the callback) finishes the login.
    await locationOf(redirect).catch(() => undefined);
    expect(await pty.exit).toBe(0);
    expect(pty.output()).toContain('Logged in');
    expect(sandbox.requests.filter((r) => r.path === '/v1/oauth/token')).toHaveLength(1);
  });
});

describe.skipIf(!havePty)('Ctrl-C at a prompt prints "Cancelled." and exits 130', () => {
  const cases: [string, string[], string | RegExp, boolean][] = [
    ['config set client-secret', ['config', 'set', 'client-secret'], 'OAuth client secret', false],
    ['profiles remove', ['profiles', 'remove', 'default'], 'Remove profile "default"', false],
    ['giftcard setup', ['giftcard', 'setup'], /\? .*:/, false],
    [
      'giftcard issue confirmation',
      ['giftcard', 'issue', '--claim', 'C1', '--order', '1001', '--amount', '25.00', '--email', 'a@b.co', '--name', 'A B'],
      /\? Issue .*a@b\.co>?\?/,
      true,
    ],
    ['claims file fields', ['claims', 'file'], /\? .*:/, true],
  ];
  test.each(cases)('%s', async (_name, argv, prompt, loggedIn) => {
    if (loggedIn) await sandboxProfile(sandbox, join(dir, 'cfg'));
    const before = readFileSync(join(dir, 'cfg', 'credentials.json'), 'utf8');
    sandbox.resetLog();
    const pty = runInPty(argv, { PATH: bin, HOME: dir, OPCLI_CONFIG_DIR: join(dir, 'cfg') });
    await pty.waitFor(prompt);
    pty.write('\u0003');
    expect(await pty.exit).toBe(130);
    expect(pty.output()).toContain('Cancelled.');
    expectNoCrash(pty.output());
    expect(readFileSync(join(dir, 'cfg', 'credentials.json'), 'utf8')).toBe(before);
    expect(sandbox.requests.filter((r) => r.method === 'POST' || r.method === 'PUT')).toEqual([]);
  });
});
