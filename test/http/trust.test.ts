/**
 * A private CA (issue 29): behind a real nginx terminating TLS with a throwaway CA, an untrusted
 * certificate is "not trusted", naming the host, its issuer and how to trust it; nothing is sent
 * or retried, a batch leaves its rows `not_sent` (exit 1), a single claim "was not filed". With
 * `ca-file`, OPCLI_CA_FILE or NODE_EXTRA_CA_CERTS the same commands work.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { results, writeRows } from '../claims/fixtures.js';
import { runBinary, runOpcli, tempConfigDir } from '../helpers.js';
import { makeCa, missingInfra, type Nginx, startNginx, type TestCa } from '../infra/index.js';

const missing = missingInfra('nginx', 'openssl');

describe.skipIf(missing)('behind a TLS gateway with a private CA (nginx)', () => {
  let sandbox: Sandbox;
  let ca: TestCa;
  let gateway: Nginx;
  let misnamed: Nginx;
  let token: string;
  let config: ReturnType<typeof tempConfigDir>;
  const instant = { sleep: async () => {} };

  beforeAll(async () => {
    [sandbox, ca] = await Promise.all([startSandbox(), makeCa({ name: 'Example Corp Private CA' })]);
    const other = await ca.issue(['other.example'], 'other');
    [gateway, misnamed] = await Promise.all([startNginx({ upstream: sandbox.url, tls: ca }), startNginx({ upstream: sandbox.url, tls: other })]);
    token = sandbox.issueTokens({ scopes: ['read_orders', 'write_claims', 'read_claims'] }).access_token;
  });
  afterAll(async () => {
    await Promise.allSettled([gateway?.stop(), misnamed?.stop()]);
    await sandbox?.close();
    ca?.cleanup();
  });
  beforeEach(() => {
    config = tempConfigDir();
    sandbox.resetLog();
    return () => config.cleanup();
  });

  /** The run's environment: OPCLI_TOKEN for the gateway's URL, the base URL the commands use. */
  const env = (extra: Record<string, string | undefined> = {}) => ({
    OPCLI_CONFIG_DIR: config.dir,
    OPCLI_BASE_URL: gateway.url,
    OPCLI_TOKEN: token,
    NODE_EXTRA_CA_CERTS: undefined,
    ...extra,
  });

  test('without trust: "not trusted", the issuer, the host and the settings that fix it; one attempt, nothing reached nginx', async () => {
    const r = await runOpcli(['orders', 'list'], { ...instant, env: env() });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      `Error: GET ${gateway.url}/v1/orders was not sent: the certificate of 127.0.0.1:${gateway.port} is not trusted: it was issued by a certificate authority this machine does not trust`,
    );
    expect(r.stderr).toContain('issued by "CN=Example Corp Private CA');
    expect(r.stderr).toContain('opcli config set ca-file');
    expect(r.stderr).toContain('OPCLI_CA_FILE');
    expect(r.stderr).toContain('NODE_EXTRA_CA_CERTS');
    expect(r.stderr).toContain('NODE_USE_SYSTEM_CA=1');
    expect(r.stderr).not.toMatch(/retrying|trying this page again|connection was lost/);
    expect(gateway.accessLog()).toEqual([]);
    expect(sandbox.requests).toEqual([]);
  });

  test('a batch: every row not_sent, exit 1 (rerunning is safe), not 3; a single claim "was not filed"', async () => {
    await runOpcli(['config', 'set', 'store-id', sandbox.store.storeId], { env: { OPCLI_CONFIG_DIR: config.dir } });
    const rows = join(config.dir, 'rows.csv');
    writeRows(rows, 4);
    const batch = await runOpcli(['claims', 'file', '--from', rows, '--jsonl'], { ...instant, env: env() });
    expect(batch.code).toBe(1);
    expect(batch.stderr).toContain('is not trusted');
    expect(batch.stderr).not.toMatch(/uncertain \(|may or may not/);
    expect(results(batch.stdout).map((r) => r.status)).toEqual(Array(4).fill('not_sent'));
    expect(batch.stderr).toContain('4 not sent');

    const template = await runOpcli(['claims', 'template', '--json'], { env: { OPCLI_CONFIG_DIR: config.dir } });
    const data = join(config.dir, 'claim.json');
    writeFileSync(data, template.stdout);
    const single = await runOpcli(['claims', 'file', '--data', data, '--store-id', sandbox.store.storeId], { ...instant, env: env() });
    expect(single.code).toBe(1);
    expect(single.stderr).toContain('Error: The claim was not filed: POST');
    expect(single.stderr).toContain('is not trusted');
    expect(single.stderr).not.toContain('may or may not');
    expect(gateway.accessLog()).toEqual([]);
    expect(sandbox.requests).toEqual([]);
  });

  test('with --wait-for-service: no wait for a service that was never asked; the certificate is named, rows not_sent, exit 1', async () => {
    await runOpcli(['config', 'set', 'store-id', sandbox.store.storeId], { env: { OPCLI_CONFIG_DIR: config.dir } });
    const rows = join(config.dir, 'rows.csv');
    writeRows(rows, 12);
    const args = ['claims', 'file', '--from', rows, '--concurrency', '4', '--wait-for-service', '30s', '--jsonl'];
    const batch = await runOpcli(args, { ...instant, env: env() });
    expect(batch.code).toBe(1);
    // An untrusted certificate is this side's setup, not the service down (before, it waited "the service refused connections").
    expect(batch.stderr).not.toContain('looks down');
    expect(batch.stderr).toContain(`was not sent: the certificate of 127.0.0.1:${gateway.port} is not trusted`);
    expect(new Set(results(batch.stdout).map((r) => r.status))).toEqual(new Set(['not_sent']));
    expect(gateway.accessLog()).toEqual([]);
    expect(sandbox.requests).toEqual([]);
  });

  test('a certificate for another name: "for another host name", the names it is for, the base URL to check', async () => {
    const r = await runOpcli(['orders', 'list'], { ...instant, env: env({ OPCLI_BASE_URL: misnamed.url, OPCLI_CA_FILE: ca.caFile }) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the certificate of 127.0.0.1:${misnamed.port} is for another host name (ERR_TLS_CERT_ALTNAME_INVALID`);
    expect(r.stderr).toContain('for DNS:other.example');
    expect(r.stderr).toContain('opcli config get base-url');
    expect(misnamed.accessLog()).toEqual([]);
  });

  test('with the ca-file setting, or OPCLI_CA_FILE, the same command works through nginx', async () => {
    const set = await runOpcli(['config', 'set', 'ca-file', ca.caFile], { env: { OPCLI_CONFIG_DIR: config.dir } });
    expect(set.code).toBe(0);
    const viaSetting = await runOpcli(['orders', 'list', '--size', '2', '--json'], { env: env() });
    expect(viaSetting.code).toBe(0);
    expect(JSON.parse(viaSetting.stdout)).toHaveLength(2);
    const fresh = tempConfigDir();
    try {
      const viaEnv = await runOpcli(['orders', 'list', '--size', '1', '--json'], { env: env({ OPCLI_CONFIG_DIR: fresh.dir, OPCLI_CA_FILE: ca.caFile }) });
      expect(viaEnv.code).toBe(0);
    } finally {
      fresh.cleanup();
    }
    expect(await gateway.waitForAccessLog(2, (e) => e.uri.startsWith('/v1/orders'))).toHaveLength(2);
  });

  test('NODE_EXTRA_CA_CERTS works for the built binary, and together with a ca-file of another CA both are trusted', async () => {
    const r = await runBinary(['orders', 'list', '--size', '1', '--json'], { env: env({ NODE_EXTRA_CA_CERTS: ca.caFile }) });
    expect(r.stderr).not.toMatch(/Error|not trusted/);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(1);
    // A ca-file adds to Node's CAs (NODE_EXTRA_CA_CERTS included); it does not replace them: one
    // run trusts the gateway through NODE_EXTRA_CA_CERTS and a second one through OPCLI_CA_FILE.
    const other = await makeCa({ name: 'Another CA' });
    const second = await startNginx({ upstream: sandbox.url, tls: other });
    try {
      const both = { NODE_EXTRA_CA_CERTS: ca.caFile, OPCLI_CA_FILE: other.caFile };
      for (const base of [gateway.url, second.url]) {
        const run = await runBinary(['orders', 'list', '--size', '1', '--json'], { env: env({ ...both, OPCLI_BASE_URL: base }) });
        expect(run.stderr).not.toMatch(/Error|not trusted/);
        expect(run.code).toBe(0);
      }
    } finally {
      await second.stop();
      other.cleanup();
    }
  });

  test('a ca-file that is missing, a folder or not PEM: exit 2 naming it, nothing sent', async () => {
    const before = gateway.accessLog().length;
    const notPem = join(config.dir, 'ca.der');
    writeFileSync(notPem, 'not a certificate');
    const cases: [string, string][] = [
      [join(config.dir, 'missing.pem'), 'does not exist'],
      [config.dir, 'is a folder'],
      [notPem, 'holds no PEM certificate'],
    ];
    for (const [file, why] of cases) {
      const r = await runOpcli(['orders', 'list'], { env: env({ OPCLI_CA_FILE: file }) });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`The CA file ${file} (OPCLI_CA_FILE) ${why}`);
      const set = await runOpcli(['config', 'set', 'ca-file', file], { env: { OPCLI_CONFIG_DIR: config.dir } });
      expect(set.code).toBe(2);
      expect(set.stderr).toContain(file);
    }
    expect(gateway.accessLog()).toHaveLength(before);
  });
});
