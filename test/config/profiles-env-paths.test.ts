/** Profiles, OPCLI_* variables, scopes and identifiers in paths, as a new user meets them (issue 12, issue 17 bullets 1-2). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { manualClock, type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';

let sandbox: Sandbox;
let dir: string;
let cleanup: () => void;
let token: string;
const sent = () => sandbox.requests.filter((r) => !r.path.startsWith('/__admin'));

beforeAll(async () => {
  sandbox = await startSandbox({ orders: 5, autoApprove: true });
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(async () => {
  ({ dir, cleanup } = tempConfigDir());
  token = (await sandboxProfile(sandbox, dir)).accessToken as string;
  sandbox.resetLog();
});
afterEach(() => cleanup());

const run = (argv: string[], env: Record<string, string> = {}, stdin?: string) => runOpcli(argv, { env: { OPCLI_CONFIG_DIR: dir, ...env }, stdin });

describe('profile names', () => {
  test('a misspelt --profile or OPCLI_PROFILE names the closest profile, exit 2, nothing sent', async () => {
    for (const [argv, env] of [
      [['--profile', 'defualt', 'orders', 'list'], {}],
      [['orders', 'list'], { OPCLI_PROFILE: 'defualt' }],
      [['--profile', 'defualt', 'auth', 'status'], {}],
      [['--profile', 'defualt', 'config', 'get', 'base-url'], {}],
    ] as [string[], Record<string, string>][]) {
      const r = await run(argv, env);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr).toContain('no profile named defualt; did you mean default?');
      expect(r.stderr).not.toContain('unexpected failure');
    }
    const far = await run(['--profile', 'zzzzzz', 'orders', 'list']);
    expect(far.code).toBe(2);
    expect(far.stderr).toContain('no profile named zzzzzz.');
    expect(far.stderr).toContain('Profiles: default');
    expect(sent()).toEqual([]);
  });

  test('config set on a new profile says it is creating it; an existing one does not', async () => {
    const created = await run(['--profile', 'staging', 'config', 'set', 'base-url', 'https://staging.example.com']);
    expect(created.code).toBe(0);
    expect(created.stderr).toContain('Creating profile "staging".');
    const again = await run(['--profile', 'staging', 'config', 'set', 'store-id', 'st_1']);
    expect(again.stderr).not.toContain('Creating');
  });

  test('profile names are identifiers: anything else is a usage error and nothing is stored', async () => {
    const before = readFileSync(join(dir, 'settings.json'), 'utf8');
    for (const name of ['../../etc/x', '.hidden', 'a/b', 'x'.repeat(65), 'sp ace', 'tab\there']) {
      for (const [argv, env] of [
        [['--profile', name, 'config', 'set', 'base-url', 'https://a.example.com'], {}],
        [['config', 'set', 'base-url', 'https://a.example.com'], { OPCLI_PROFILE: name }],
        [['profiles', 'use', name], {}],
        [['sandbox', '--write-profile', name], {}],
      ] as [string[], Record<string, string>][]) {
        const r = await run(argv, env);
        expect(r.code, `${argv.join(' ')} ${JSON.stringify(env)}`).toBe(2);
        expect(r.stderr).toMatch(/not a profile name|Invalid profile name|--write-profile/);
      }
    }
    expect(readFileSync(join(dir, 'settings.json'), 'utf8')).toBe(before);
    expect((await run(['--profile', 'ok_name-1.2', 'config', 'set', 'store-id', 'st_1'])).code).toBe(0);
  });
});

describe('OPCLI_* variables', () => {
  test('OPCLI_BASE_URL that is not a URL is a usage error naming the variable', async () => {
    for (const value of ['notaurl', 'ftp://example.com', 'http//x']) {
      const r = await run(['orders', 'list'], { OPCLI_BASE_URL: value });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`OPCLI_BASE_URL "${value}" is not an http(s) URL`);
      expect(r.stderr).not.toContain('unexpected failure');
    }
    expect(sent()).toEqual([]);
  });

  test('OPCLI_TOKEN with whitespace around it is trimmed with a warning and works', async () => {
    const r = await run(['orders', 'list', '--size', '1', '--json'], { OPCLI_TOKEN: `  ${token}\n` });
    expect(r.stderr).toContain('Warning: OPCLI_TOKEN had spaces or a line break around it');
    expect(r.code).toBe(0);
    expect(sent()[0]?.headers.authorization).toBe(`Bearer ${token}`);
    expect(r.stderr).not.toContain(token);
  });

  test('a control character inside OPCLI_TOKEN is a usage error naming it; nothing sent', async () => {
    for (const bad of [`${token}\u001b[31m`, `ab\u0000cd`, `to\nken`]) {
      const r = await run(['orders', 'list'], { OPCLI_TOKEN: bad });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('OPCLI_TOKEN contains a control character');
    }
    expect(sent()).toEqual([]);
  });

  test('a refused OPCLI_TOKEN says the token came from OPCLI_TOKEN', async () => {
    const r = await run(['orders', 'list'], { OPCLI_TOKEN: 'svc_at_not_a_real_token' });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('The server refused the access token from OPCLI_TOKEN');
    expect(r.stderr).toContain('unset OPCLI_TOKEN');
    expect(r.stderr).not.toContain('Run `opcli auth login` to log in again.');
    // Not refreshed: the stored refresh token was not used.
    expect(sent().filter((q) => q.path === '/v1/oauth/token')).toEqual([]);
  });

  test('OPCLI_HTTP_TIMEOUT and OPCLI_HTTP_RETRIES that are not whole numbers are named', async () => {
    for (const [name, value] of [
      ['OPCLI_HTTP_TIMEOUT', '5s'],
      ['OPCLI_HTTP_RETRIES', '-1'],
      ['OPCLI_HTTP_TIMEOUT', '1e3'],
    ]) {
      const r = await run(['orders', 'list'], { [name as string]: value as string });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${name} "${value}" is not a whole number`);
    }
    expect(sent()).toEqual([]);
  });
});

describe('duration flags: one format everywhere, bounded', () => {
  test.each([
    [['auth', 'login', '--timeout', '3000000'], '--timeout "3000000" has no unit', 'Add one: 3000000s for seconds'],
    [['auth', 'login', '--timeout', '2d'], '--timeout "2d" is too long: at most 1d', ''],
    [['auth', 'login', '--timeout', 'soon'], '--timeout "soon" is not a duration', '300ms, 4.5s, 5m or 1h'],
    [['sandbox', '--trigger-delay', '300'], '--trigger-delay "300" has no unit', ''],
    [
      ['giftcard', 'issue', '--claim', 'C1', '--order', '1', '--amount', '1.00', '--email', 'a@b.co', '--name', 'A', '--yes', '--trigger-wait', '5'],
      '--trigger-wait "5" has no unit',
      '',
    ],
    [
      ['giftcard', 'issue', '--claim', 'C1', '--order', '1', '--amount', '1.00', '--email', 'a@b.co', '--name', 'A', '--yes', '--late-check', '2'],
      '--late-check "2" has no unit',
      '',
    ],
  ])('%j', async (argv, message, hint) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    if (hint) expect(r.stderr).toContain(hint);
    expect(r.stderr).not.toContain('TimeoutOverflowWarning');
    expect(sent()).toEqual([]);
  });

  test('auth login --timeout takes the one format and waits that long (a fake clock)', async () => {
    await run(['auth', 'logout']).catch(() => undefined);
    sandbox.resetLog();
    // The wait is a deadline on the run's timers: a manual clock here, moved by the test.
    const clock = manualClock();
    const login = runOpcli(['auth', 'login', '--no-browser', '--timeout', '4.5s'], { env: { OPCLI_CONFIG_DIR: dir }, timers: clock });
    await vi.waitFor(() => expect(clock.pending).toBe(1));
    clock.advance(4499);
    expect(clock.pending).toBe(1);
    clock.advance(1);
    const r = await login;
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('No answer from the browser within 4.5 seconds');
  });
});

describe('scopes', () => {
  test("a browser login with no scopes configured asks for the spec's names", async () => {
    await run(['config', 'unset', 'scopes']);
    let asked: URL | undefined;
    const r = await runOpcli(['auth', 'login'], {
      env: { OPCLI_CONFIG_DIR: dir },
      openBrowser: async (url) => {
        asked = new URL(url);
        const { request } = await import('undici');
        const consent = await request(url);
        await consent.body.text();
        const back = await request(String(consent.headers.location));
        await back.body.text();
      },
    });
    expect(r.code).toBe(0);
    expect(asked?.searchParams.get('scope')).toBe('read_orders read_claims read_store');
    expect(r.stderr).toContain('Logged in with scopes read_orders read_claims read_store');
  });
});

describe('identifiers in paths', () => {
  test('. and .. are refused before anything is sent; everything else is percent-encoded', async () => {
    for (const id of ['..', '.']) {
      const r = await run(['orders', 'update', id, '--source-order-number', '#1', '--currency', 'USD']);
      expect(r.code, `orders update ${id}`).toBe(2);
      expect(r.stderr).toContain(`The source order id "${id}" cannot be used in a URL path`);
      const v = await run([
        'variants',
        'create',
        id,
        '--status',
        'ACTIVE',
        '--name',
        'n',
        '--price',
        '1',
        '--inventory-quantity',
        '1',
        '--product-type',
        'SIMPLE',
      ]);
      expect(v.code, `variants create ${id}`).toBe(2);
      expect(v.stderr).toContain(`The product id "${id}" cannot be used in a URL path`);
    }
    expect(sent()).toEqual([]);
    await run(['orders', 'update', 'a/../b?x#y%', '--source-order-number', '#1', '--currency', 'USD', '--replace']);
    expect(sent().map((q) => q.path)).toContain('/v1/orders/a%2F..%2Fb%3Fx%23y%25');
  });
});
