import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, test } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { createDeps } from '../../src/cli/deps.js';
import { admin, call } from './client.js';
import { capturedStreams, runOpcli, tempConfigDir } from '../helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** Runs `opcli sandbox ...` in-process; resolves once stdout has its data, with a stop function. */
async function startCommand(args: string[], env: Record<string, string> = {}) {
  const { stdout, stderr, out, err } = capturedStreams();
  const controller = new AbortController();
  const deps = createDeps({ stdin: Readable.from([]), stdout, stderr, env, cwd: process.cwd(), signal: controller.signal });
  const exit = runCli(['sandbox', ...args], deps);
  for (let i = 0; i < 200 && !err().includes('Ctrl-C'); i++) {
    const done = await Promise.race([exit.then(() => true), new Promise((r) => setTimeout(() => r(false), 10))]);
    if (done) break;
  }
  return {
    out,
    err,
    exit,
    stop: async () => {
      controller.abort();
      return exit;
    },
  };
}

describe('opcli sandbox', () => {
  test('--json prints one JSON object with URLs and credentials, serves, and stops on abort', async () => {
    const cmd = await startCommand(['--json', '--orders', '40', '--token-ttl', '90s', '--trigger-delay', 'never']);
    const info = JSON.parse(cmd.out());
    expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(info).toMatchObject({
      authorizeUrl: `${info.url}/v1/oauth/authorize`,
      providerUrl: `${info.url}/provider`,
      triggerUrl: `${info.url}/provider/v2/workflows/execute`,
      nativeUrl: `${info.url}/storefront`,
      providerTokenHeader: 'x-giftly-access-token',
      storeId: 'store_1001',
    });
    expect(info.clientId).toMatch(/^svc_app_/);
    expect(info.clientSecret).toMatch(/^svc_secret_/);
    expect(info.adminSecret).toMatch(/^sbx_admin_[\w-]{32}$/);
    expect(cmd.err()).toContain(
      `curl -X POST -H 'authorization: Bearer ${info.adminSecret}' -H 'content-type: application/json' ${info.url}/__admin/session-tokens`,
    );
    expect((await admin({ url: info.url, adminSecret: info.adminSecret }, '/__admin/counters')).status).toBe(200);
    expect(cmd.out()).not.toContain('Ctrl-C');

    const verified = await call(`${info.url}/v1/oauth/session/verify`, { json: { session_token: info.sessionToken } });
    expect(verified.status).toBe(200);
    const tok = await call(`${info.url}/v1/oauth/token`, {
      json: { grant_type: 'client_credentials', client_id: info.clientId, client_secret: info.clientSecret, store_id: info.storeId },
    });
    expect(tok.body.expires_in).toBe(90);
    const orders = await call(`${info.url}/v1/orders`, { token: tok.body.access_token });
    expect(orders.body.totalCount).toBe(40);

    expect(await cmd.stop()).toBe(0);
    expect(cmd.err()).toContain('Sandbox stopped.');
    await expect(call(`${info.url}/v1/orders`)).rejects.toThrow();
  });

  test('--write-profile writes a profile pointing at the sandbox; plain output is key/value lines', async () => {
    const { dir, cleanup } = tempConfigDir();
    cleanups.push(cleanup);
    const cmd = await startCommand(['--write-profile', 'local', '--auto-approve'], { OPCLI_CONFIG_DIR: dir });
    const lines = Object.fromEntries(
      cmd
        .out()
        .trim()
        .split('\n')
        .map((l) => l.split(/\s{2,}/) as [string, string]),
    );
    expect(lines.profile).toBe('local');
    const { SettingsStore } = await import('../../src/config/settings.js');
    const { CredentialStore } = await import('../../src/config/credentials.js');
    const settings = (await SettingsStore.open(dir)).getProfile('local');
    expect(settings).toMatchObject({ baseUrl: lines.url, clientId: lines.clientId, storeId: 'store_1001' });
    expect(settings?.provider).toMatchObject({ name: 'giftly', apiUrl: lines.providerUrl, triggerId: lines.triggerId });
    const secrets = (await CredentialStore.open(dir)).read('local');
    expect(secrets).toMatchObject({ clientSecret: lines.clientSecret, providerToken: lines.providerToken, sandboxAdminSecret: lines.adminSecret });
    // The admin secret is where a script finds it: `config get sandbox-admin-secret --reveal`.
    const got = await runOpcli(['--profile', 'local', 'config', 'get', 'sandbox-admin-secret', '--reveal'], { env: { OPCLI_CONFIG_DIR: dir } });
    expect(got.stdout).toBe(`${lines.adminSecret}\n`);
    expect(cmd.err()).toContain('`opcli --profile local config get sandbox-admin-secret --reveal` prints it');
    const consent = await call(
      `${lines.authorizeUrl}?${new URLSearchParams({
        response_type: 'code',
        client_id: lines.clientId as string,
        redirect_uri: 'http://127.0.0.1:1234/callback',
      })}`,
    );
    expect(consent.status).toBe(302);
    expect(await cmd.stop()).toBe(0);
  });

  test('bad flags are usage errors (exit 2) and start nothing', async () => {
    for (const args of [
      ['--port', 'x'],
      ['--orders', '-1'],
      ['--token-ttl', '0'],
      ['--trigger-delay', 'soon'],
      ['--write-profile', '../x'],
    ]) {
      const cmd = await startCommand(args);
      expect(await cmd.exit, args.join(' ')).toBe(2);
      expect(cmd.out()).toBe('');
    }
  });

  test('--write-profile refuses to replace a profile that points at a real service, unless --force', async () => {
    const { dir, cleanup } = tempConfigDir();
    cleanups.push(cleanup);
    const { readFileSync } = await import('node:fs');
    const env = { OPCLI_CONFIG_DIR: dir };
    const setup = async (argv: string[], stdin?: string) => {
      const deps = createDeps({ stdin: Readable.from(stdin ? [stdin] : []), stdout: new PassThrough(), stderr: new PassThrough(), env, cwd: process.cwd() });
      expect(await runCli(argv, deps)).toBe(0);
    };
    await setup(['--profile', 'prod', 'config', 'set', 'base-url', 'https://api.example.com']);
    await setup(['--profile', 'prod', 'config', 'set', 'client-secret', '--stdin'], 'svc_secret_real_one');
    const before = [readFileSync(`${dir}/settings.json`, 'utf8'), readFileSync(`${dir}/credentials.json`, 'utf8')];
    const refused = await startCommand(['--write-profile', 'prod'], env);
    expect(await refused.exit).toBe(2);
    expect(refused.err()).toContain('Profile "prod" points at https://api.example.com, not a local sandbox');
    expect(refused.err()).toContain('--force');
    expect(refused.out()).toBe('');
    expect([readFileSync(`${dir}/settings.json`, 'utf8'), readFileSync(`${dir}/credentials.json`, 'utf8')]).toEqual(before);
    // Secrets with no base URL are protected too.
    await setup(['--profile', 'tokenonly', 'config', 'set', 'provider-token', '--stdin'], 'tok_real_provider');
    const refused2 = await startCommand(['--write-profile', 'tokenonly'], env);
    expect(await refused2.exit).toBe(2);
    // A sandbox profile is replaced freely (a new sandbox, a new port), and --force replaces any.
    const first = await startCommand(['--write-profile', 'local'], env);
    expect(await first.stop()).toBe(0);
    const again = await startCommand(['--write-profile', 'local'], env);
    expect(again.err()).toContain('Profile "local" now points here');
    expect(await again.stop()).toBe(0);
    const forced = await startCommand(['--write-profile', 'prod', '--force'], env);
    expect(forced.err()).toContain('Profile "prod" now points here');
    expect(await forced.stop()).toBe(0);
    expect(readFileSync(`${dir}/credentials.json`, 'utf8')).not.toContain('svc_secret_real_one');
  });
});
