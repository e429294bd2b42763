import type { Sandbox } from '../sandbox/types.js';
import type { CredentialStore } from './credentials.js';
import type { SettingsStore } from './settings.js';

/**
 * Writes a profile that points at a running sandbox: base and authorize URLs, client id and secret,
 * store, scopes and every gift card provider setting. Used by `opcli sandbox --write-profile`, the
 * tour and the tests, so all three configure opcli the same way.
 */
export async function writeSandboxProfile(
  sandbox: Pick<Sandbox, 'url' | 'authorizeUrl' | 'client' | 'store' | 'providerName' | 'providerUrl' | 'triggerUrl' | 'nativeUrl'>,
  settings: SettingsStore,
  credentials: CredentialStore,
  profile: string,
): Promise<void> {
  settings.setProfile(profile, {
    baseUrl: sandbox.url,
    authorizeUrl: sandbox.authorizeUrl,
    clientId: sandbox.client.clientId,
    scopes: sandbox.store.scopes,
    storeId: sandbox.store.storeId,
    provider: {
      name: sandbox.providerName,
      apiUrl: sandbox.providerUrl,
      shopUrl: sandbox.store.shopUrl,
      triggerId: sandbox.store.triggerId,
      triggerUrl: sandbox.triggerUrl,
      nativeUrl: sandbox.nativeUrl,
    },
  });
  await credentials.update(profile, (cur) => ({
    ...cur,
    clientSecret: sandbox.client.clientSecret,
    providerToken: sandbox.store.providerToken,
  }));
}
