import { UsageError } from '../core/errors.js';
import type { Sandbox } from '../sandbox/types.js';
import type { CredentialStore } from './credentials.js';
import { originOf, tokenUrlOf } from './origin.js';
import type { SettingsStore } from './settings.js';

/**
 * Writes a profile that points at a running sandbox: base and authorize URLs, client id and secret,
 * store, scopes, every gift card provider setting, and the sandbox's admin secret (for its /__admin
 * API: `opcli config get sandbox-admin-secret --reveal`). Used by `opcli sandbox --write-profile`, the
 * tour and the tests, so all three configure opcli the same way.
 */
export async function writeSandboxProfile(
  sandbox: Pick<Sandbox, 'url' | 'adminSecret' | 'authorizeUrl' | 'client' | 'store' | 'providerName' | 'providerUrl' | 'triggerUrl' | 'nativeUrl'>,
  settings: SettingsStore,
  credentials: CredentialStore,
  profile: string,
): Promise<void> {
  // A login an older opcli stored without its origin belongs to the base URL being replaced (src/config/origin.ts).
  const oldBase = settings.getProfile(profile)?.baseUrl;
  const oldOrigin = originOf(oldBase);
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
    ...(cur.token && !cur.token.origin && oldBase && oldOrigin !== originOf(sandbox.url)
      ? { token: { ...cur.token, origin: oldOrigin, tokenUrl: tokenUrlOf(oldBase) } }
      : {}),
    clientSecret: sandbox.client.clientSecret,
    clientSecretOrigin: originOf(sandbox.url),
    providerToken: sandbox.store.providerToken,
    providerTokenOrigin: originOf(sandbox.providerUrl),
    sandboxAdminSecret: sandbox.adminSecret,
  }));
}

/** Whether a base URL is a local sandbox's: plain http on a loopback address. */
export function isSandboxUrl(baseUrl: string): boolean {
  try {
    const url = new URL(baseUrl);
    return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  } catch {
    return false;
  }
}

/**
 * Refuses to let `sandbox --write-profile NAME` replace a profile that points anywhere but a local
 * sandbox (or holds secrets without a base URL): it would overwrite a real client secret and
 * provider token. `--force` skips this check.
 */
export function assertReplaceableBySandbox(settings: SettingsStore, credentials: CredentialStore, profile: string): void {
  const baseUrl = settings.getProfile(profile)?.baseUrl;
  const secrets = credentials.read(profile);
  const hasSecrets = !!(secrets.clientSecret || secrets.providerToken || secrets.token);
  if (baseUrl === undefined ? !hasSecrets : isSandboxUrl(baseUrl)) return;
  throw new UsageError(
    `Profile "${profile}" points at ${baseUrl ?? 'no base URL but holds secrets'}${baseUrl ? ', not a local sandbox' : ''}: --write-profile would replace its settings, client secret and provider token.`,
    `Pick another name (\`--write-profile sandbox\`), or pass --force to replace it anyway.`,
  );
}
