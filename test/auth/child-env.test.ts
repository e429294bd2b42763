/**
 * Issue 27, item 3: the processes opcli starts (the browser opener) get none of its secrets. The built
 * binary logs in with a browser stand-in that writes down its environment and then follows the
 * consent link (the sandbox approves at once), so the login really finishes.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { childEnv } from '../../src/core/child-env.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runBinary } from '../helpers.js';
import { authSuite, printed, secrets, tokenRequests } from './util.js';

let sandbox: Sandbox;
let dir: string;
authSuite((s) => ({ sandbox, dir } = s), { sandbox: () => ({ autoApprove: true }), loggedIn: false });

const ENV_TOKEN = 'svc_at_envtoken0123456789abcdef';
const PROXY_PASSWORD = 'pr0xy-pa55word';

/** A browser command that dumps its environment to `<dir>/env.txt`, then visits the link it was given. */
function dumpingBrowser(name: string): { path: string; dump: () => Record<string, string> } {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const path = join(bin, name);
  const out = join(dir, 'env.txt');
  // --noproxy: the proxies of the test point nowhere (127.0.0.1:9).
  writeFileSync(path, `#!/bin/sh\nenv > '${out}'\nexec /usr/bin/curl --noproxy '*' -s -o /dev/null -L "$1"\n`);
  chmodSync(path, 0o755);
  const dump = () =>
    Object.fromEntries(
      readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
  return { path, dump };
}

/** The secrets-laden environment of the run (the client secret is the sandbox's real one, so the login works). */
function secretEnv(): Record<string, string> {
  return {
    OPCLI_CONFIG_DIR: dir,
    OPCLI_CLIENT_SECRET: sandbox.client.clientSecret,
    OPCLI_TOKEN: ENV_TOKEN,
    HTTPS_PROXY: `http://proxyuser:${PROXY_PASSWORD}@127.0.0.1:9`,
    http_proxy: `http://proxyuser:${PROXY_PASSWORD}@127.0.0.1:9/`,
    ALL_PROXY: `socks5://proxyuser:${PROXY_PASSWORD}@127.0.0.1:9`,
    NO_PROXY: 'example.com',
    DISPLAY: ':0',
    LANG: 'C.UTF-8',
    MY_SERVICE_API_KEY: 'k3y-not-for-browsers',
  };
}

function expectClean(env: Record<string, string>) {
  const text = Object.entries(env)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
  for (const secret of [sandbox.client.clientSecret, ENV_TOKEN, PROXY_PASSWORD, 'proxyuser', 'k3y-not-for-browsers']) expect(text).not.toContain(secret);
  expect(Object.keys(env).filter((k) => k.startsWith('OPCLI_'))).toEqual([]);
  // What a browser needs is still there; the proxies without their credentials.
  expect(env).toMatchObject({ DISPLAY: ':0', LANG: 'C.UTF-8', HOME: dir, NO_PROXY: 'example.com' });
  expect(env.PATH).toContain(join(dir, 'bin'));
  expect(env.HTTPS_PROXY).toBe('http://127.0.0.1:9');
  expect(env.http_proxy).toBe('http://127.0.0.1:9/');
  expect(env.ALL_PROXY).toBe('socks5://127.0.0.1:9');
}

describe('the browser gets none of opcli’s secrets', () => {
  test('BROWSER=<command>: no OPCLI_* variable, no proxy password; the login still finishes', async () => {
    const browser = dumpingBrowser('mybrowser');
    const res = await runBinary(['auth', 'login'], {
      env: { ...secretEnv(), HOME: dir, PATH: `${join(dir, 'bin')}:/usr/bin:/bin`, BROWSER: `${browser.path} %s` },
    });
    printed.push(res.stdout, res.stderr);
    expect(res.stderr).toContain('Logged in');
    expect(res.code).toBe(0);
    expectClean(browser.dump());
    expect(tokenRequests(sandbox)).toHaveLength(1);
    for (const s of [ENV_TOKEN, PROXY_PASSWORD]) secrets.add(s);
  });

  test('the platform default (xdg-open on a desktop) gets the same clean environment', async () => {
    const opener = dumpingBrowser('xdg-open');
    const res = await runBinary(['auth', 'login'], { env: { ...secretEnv(), HOME: dir, PATH: `${join(dir, 'bin')}:/usr/bin:/bin` } });
    printed.push(res.stdout, res.stderr);
    expect(res.stderr).toContain('Logged in');
    expect(res.code).toBe(0);
    expectClean(opener.dump());
  });
});

describe('childEnv', () => {
  test('proxy values keep their host and shape, lose their credentials; an unreadable one with an @ is left out', () => {
    expect(
      childEnv({
        HTTP_PROXY: 'u:p@proxy.corp:3128',
        https_proxy: 'proxy.corp:3128',
        FTP_PROXY: 'http://%zz:secret@[bad',
        ALL_PROXY: 'http://proxy.corp:3128',
        opcli_token: 'x',
        GITHUB_TOKEN: 'ghp_x',
        AWS_SECRET_ACCESS_KEY: 'y',
        PGPASSWORD: 'z',
        GOOGLE_APPLICATION_CREDENTIALS: '/k.json',
        TERM: 'xterm-256color',
        UNSET: undefined,
      }),
    ).toEqual({
      HTTP_PROXY: 'proxy.corp:3128',
      https_proxy: 'proxy.corp:3128',
      ALL_PROXY: 'http://proxy.corp:3128',
      TERM: 'xterm-256color',
    });
  });
});
