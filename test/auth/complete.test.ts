/**
 * Issue 27, smaller findings: the second step of a two-step login. A forged or mistyped `--complete`
 * keeps the pending login; the redirect URL (it carries the code) comes from standard input or a
 * file, and as an argument earns a warning.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { pendingPath, utcText } from '../../src/auth/pending.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { scriptedPrompter } from '../helpers.js';
import { authSuite, leakedSecrets, locationOf, opcli, secrets, tokenRequests } from './util.js';

let sandbox: Sandbox;
let dir: string;
authSuite((s) => ({ sandbox, dir } = s), { sandbox: () => ({ autoApprove: true }), loggedIn: false });

/** Step one, approved: the pending login as stored, and the address the browser would end on. */
async function started(): Promise<{ redirect: string; createdAt: number; expiresAt: number; completeCommand: string }> {
  const start = await opcli(dir, ['auth', 'login', '--no-browser', '--json']);
  expect(start.code).toBe(0);
  const doc = JSON.parse(start.stdout);
  const pending = JSON.parse(readFileSync(pendingPath(dir, 'default'), 'utf8'));
  secrets.add(pending.verifier);
  const redirect = await locationOf(doc.authorize_url);
  const code = new URL(redirect).searchParams.get('code');
  if (code) secrets.add(code);
  return { redirect, createdAt: pending.createdAt, expiresAt: pending.expiresAt, completeCommand: doc.complete_command };
}

function withState(redirect: string, state: string | null): string {
  const url = new URL(redirect);
  if (state === null) url.searchParams.delete('state');
  else url.searchParams.set('state', state);
  return url.toString();
}

const WARNING =
  /Warning: the redirect URL \(it carries the authorization code\) given as an argument is visible to other users in `ps`.*`--stdin` or `--from-file PATH`/;

describe('a forged or mistyped --complete keeps the pending login', () => {
  test("another login's state: exit 4 naming when this login started; the right address still completes it", async () => {
    const { redirect, createdAt, expiresAt } = await started();
    const forged = await opcli(dir, ['auth', 'login', '--complete', withState(redirect, 'someone-elses-state')]);
    expect(forged.code).toBe(4);
    expect(forged.stderr).toContain(`does not match the login started at ${utcText(createdAt)}`);
    expect(forged.stderr).toContain('Nothing was exchanged; that login is still waiting.');
    expect(forged.stderr).toContain(`before ${utcText(expiresAt)}`);
    expect(forged.stdout).toBe('');
    expect(existsSync(pendingPath(dir, 'default'))).toBe(true);
    expect(tokenRequests(sandbox)).toHaveLength(0);

    const right = await opcli(dir, ['auth', 'login', '--complete', '--stdin'], { stdin: `${redirect}\n` });
    expect(right.stderr).toContain('Logged in');
    expect(right.code).toBe(0);
    expect(tokenRequests(sandbox)).toHaveLength(1);
    expect(existsSync(pendingPath(dir, 'default'))).toBe(false);
  });

  test('an address without a state is refused the same way, and the login stays', async () => {
    const { redirect, createdAt } = await started();
    const bare = await opcli(dir, ['auth', 'login', '--complete', '--stdin'], { stdin: withState(redirect, null) });
    expect(bare.code).toBe(4);
    expect(bare.stderr).toContain(`carries no \`state\` for the login started at ${utcText(createdAt)}`);
    const right = await opcli(dir, ['auth', 'login', '--complete', '--stdin'], { stdin: redirect });
    expect(right.code).toBe(0);
    expect(tokenRequests(sandbox)).toHaveLength(1);
  });
});

describe('the redirect URL from standard input or a file', () => {
  test('--complete --from-file completes without a warning; the printed complete_command reads stdin', async () => {
    const { redirect, completeCommand } = await started();
    expect(completeCommand).toBe('opcli auth login --complete --stdin');
    const file = join(dir, 'redirect.txt');
    writeFileSync(file, `${redirect}\n`, { mode: 0o600 });
    const done = await opcli(dir, ['auth', 'login', '--complete', '--from-file', file]);
    expect(done.code).toBe(0);
    expect(done.stderr).toContain('Logged in');
    expect(done.stderr).not.toContain('Warning');
    const [exchange] = tokenRequests(sandbox);
    expect(exchange?.code).toBe(new URL(redirect).searchParams.get('code'));
  });

  test('--complete URL still works, with the warning naming the safer forms; the URL is not echoed', async () => {
    const { redirect } = await started();
    const done = await opcli(dir, ['auth', 'login', '--complete', redirect]);
    expect(done.code).toBe(0);
    expect(done.stderr).toMatch(WARNING);
    expect(done.stderr).not.toContain(redirect);
  });

  test('bad sources are usage errors (exit 2) with nothing sent and the login kept', async () => {
    const { redirect } = await started();
    const none = await opcli(dir, ['auth', 'login', '--complete']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--complete needs the redirect URL');
    expect(none.stderr).toContain('--complete --stdin');
    const both = await opcli(dir, ['auth', 'login', '--complete', redirect, '--stdin'], { stdin: redirect });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('an argument and --stdin were both given');
    const missing = await opcli(dir, ['auth', 'login', '--complete', '--from-file', join(dir, 'nope.txt')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--from-file ${join(dir, 'nope.txt')} does not exist`);
    const folder = await opcli(dir, ['auth', 'login', '--complete', '--from-file', dir]);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain('is a folder');
    const alone = await opcli(dir, ['auth', 'login', '--stdin'], { stdin: redirect });
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--stdin gives the redirect URL of --complete');
    const withToken = await opcli(dir, ['auth', 'login', '--with-token', '--stdin'], { stdin: 'svc_at_x' });
    expect(withToken.code).toBe(2);
    expect(withToken.stderr).toContain('--with-token reads standard input already');
    expect(tokenRequests(sandbox)).toHaveLength(0);
    expect(existsSync(pendingPath(dir, 'default'))).toBe(true);
  });

  test('a redirect file others can read is used, with a warning naming its mode', async () => {
    const { redirect } = await started();
    const file = join(dir, 'redirect.txt');
    writeFileSync(file, redirect);
    chmodSync(file, 0o644);
    const done = await opcli(dir, ['auth', 'login', '--complete', '--from-file', file]);
    expect(done.code).toBe(0);
    expect(done.stderr).toContain(`Warning: ${file} can be read by every user (mode 0644); \`chmod 600 ${file}\``);
  });

  test('--complete alone on a terminal asks for the address (nothing on the command line)', async () => {
    const { redirect } = await started();
    const prompter = scriptedPrompter({ 'Paste the full address the browser ended on': redirect });
    const done = await opcli(dir, ['auth', 'login', '--complete'], { tty: true, prompter });
    expect(prompter.asked).toEqual(['Paste the full address the browser ended on:']);
    expect(done.code).toBe(0);
    expect(done.stderr).not.toContain('Warning');
    expect(tokenRequests(sandbox)).toHaveLength(1);
  });

  test('no output contained a secret', () => {
    expect(leakedSecrets()).toEqual([]);
  });
});
