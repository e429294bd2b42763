/**
 * Each stored credential is bound to the origin it is meant for (src/config/origin.ts), and storing
 * one secret never rebinds another: setting the sandbox's admin secret once moved the provider
 * token's binding to whatever provider-api-url said at the time (write-setting.ts read every secret
 * but the client secret as the provider token).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { CredentialStore } from '../../src/config/credentials.js';
import { findSettingKey } from '../../src/config/setting-keys.js';
import { SettingsStore } from '../../src/config/settings.js';
import { writeSetting } from '../../src/config/write-setting.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opcli-binding-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const stored = () => JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8')).profiles.default;

async function write(key: string, value: unknown) {
  const stores = { settings: await SettingsStore.open(dir), credentials: await CredentialStore.open(dir) };
  return writeSetting('default', findSettingKey(key)!, value, stores);
}

test('the provider token keeps its origin when provider-api-url moves and another secret is stored', async () => {
  await write('provider-api-url', 'https://provider-a.example/api');
  await write('provider-token', 'token-for-provider-a');
  expect(stored().providerTokenOrigin).toBe('https://provider-a.example');
  const warnings = await write('provider-api-url', 'https://provider-b.example/api');
  expect(warnings.join('\n')).toContain('was stored for https://provider-a.example');

  await write('sandbox-admin-secret', 'admin-secret-value');
  await write('client-secret', 'svc_secret_abcdef');

  expect(stored()).toMatchObject({
    providerToken: 'token-for-provider-a',
    providerTokenOrigin: 'https://provider-a.example',
    sandboxAdminSecret: 'admin-secret-value',
  });
});

test('removing the sandbox admin secret leaves the other bindings as they are', async () => {
  await write('base-url', 'https://api-a.example');
  await write('client-secret', 'svc_secret_abcdef');
  await write('provider-api-url', 'https://provider-a.example/api');
  await write('provider-token', 'token-for-provider-a');
  await write('sandbox-admin-secret', 'admin-secret-value');
  await write('sandbox-admin-secret', undefined);
  const now = stored();
  expect(now.sandboxAdminSecret).toBeUndefined();
  expect(now).toMatchObject({ clientSecretOrigin: 'https://api-a.example', providerTokenOrigin: 'https://provider-a.example' });
});
