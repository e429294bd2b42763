import { UsageError } from '../core/errors.js';
import type { Sandbox } from '../sandbox/types.js';
import type { CredentialStore } from './credentials.js';
import { originOf, tokenUrlOf } from './origin.js';
import type { SettingsStore } from './settings.js';

/**
 * Writes a profile that points at a running sandbox, its secrets included (the admin secret for its
 * /__admin API). `sandbox --write-profile`, the tour and the tests all configure opcli this way.
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
  const url = URL.canParse(baseUrl) ? new URL(baseUrl) : undefined;
  return url?.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

/** Refuses to let `sandbox --write-profile` (without --force) replace a profile with real secrets: one not at a local sandbox. */
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
