/** The real browser: Debian's chromium driven by playwright-core clicks Approve or Deny on the sandbox's consent page. */
import { existsSync, readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { authSuite, leakedSecrets, opcli, portRefuses, secrets, tokenRequests } from '../auth/util.js';

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`Skipping the real-browser login tests: ${CHROMIUM} is not installed (apt-get install -y chromium).`);

describe.skipIf(!haveChromium)('browser login in chromium', () => {
  let browser: Browser;
  let page: Page;
  let sandbox: Sandbox;
  let dir: string;

  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-quic',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });
  authSuite((s) => ({ sandbox, dir } = s), { loggedIn: false });
  beforeEach(async () => {
    page = await browser.newPage();
  });
  afterEach(async () => {
    await page.close();
  });

  /** Runs `auth login` with a browser opener that navigates the page and clicks `button`. */
  async function loginClicking(button: 'Approve' | 'Deny') {
    let clicked: Promise<unknown> = Promise.resolve();
    let redirectUri = '';
    const res = await opcli(dir, ['auth', 'login', '--scopes', 'read_orders,read_claims'], {
      openBrowser: async (url) => {
        redirectUri = new URL(url).searchParams.get('redirect_uri') as string;
        clicked = (async () => {
          await page.goto(url);
          await Promise.all([page.waitForURL(/127\.0\.0\.1:\d+\/callback/), page.getByRole('button', { name: button }).click()]);
        })();
        await clicked;
      },
    });
    await clicked;
    return { res, redirectUri };
  }

  test('clicking Approve ends logged in; the page says so and the port is closed', async () => {
    const { res, redirectUri } = await loginClicking('Approve');
    expect(res.stderr).toContain('Logged in with scopes read_orders read_claims');
    expect(res.code).toBe(0);
    expect(await page.locator('h1').textContent()).toBe('Authorization received');
    const token = JSON.parse(readFileSync(`${dir}/credentials.json`, 'utf8')).profiles.default.token;
    expect(token.grant).toBe('authorization_code');
    expect(sandbox.isAccessTokenValid(token.accessToken)).toBe(true);
    expect(tokenRequests(sandbox)).toHaveLength(1);
    expect(await portRefuses(Number(new URL(redirectUri).port))).toBe(true);
    const status = await opcli(dir, ['auth', 'status', '--check']);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('token accepted');
  });

  test('clicking Deny exits 4 with the reason and exchanges nothing', async () => {
    const { res } = await loginClicking('Deny');
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('The authorization was refused: the merchant denied access');
    expect(await page.locator('h1').textContent()).toBe('Login failed');
    expect(await page.locator('#message').textContent()).toContain('the merchant denied access');
    expect(tokenRequests(sandbox)).toHaveLength(0);
  });

  test('no output contained a secret', () => {
    expect(secrets.size).toBeGreaterThan(2);
    expect(leakedSecrets()).toEqual([]);
  });
});
