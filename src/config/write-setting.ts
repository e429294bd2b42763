/**
 * Writing one setting of a profile (`config set`, `config unset`, `giftcard setup`), keeping the
 * credentials bound to their origin (origin.ts): a secret is stored with its origin, and a moving
 * base-url or provider-api-url first binds unbound credentials to the old value, then warns.
 */
import type { CredentialStore, ProfileSecrets } from './credentials.js';
import { originOf, profileFlag, tokenUrlOf } from './origin.js';
import { patchAtPath, type SettingsStore } from './settings.js';
import type { SettingKey } from './setting-keys.js';

export interface SettingStores {
  settings: SettingsStore;
  credentials: CredentialStore;
  /** OPCLI_BASE_URL when set: a client secret stored while it is in force is bound to it. */
  envBaseUrl?: string;
}

/**
 * Writes `value` (undefined removes it) for `key`; returns warnings about credentials left bound to
 * another origin, except `alsoWritten` (secrets written in the same change, as `giftcard setup` does).
 */
export async function writeSetting(
  profile: string,
  key: SettingKey,
  value: unknown,
  stores: SettingStores,
  alsoWritten: readonly string[] = [],
): Promise<string[]> {
  const { settings, credentials } = stores;
  const current = settings.getProfile(profile);
  if (key.passwordSecret) {
    // The URL without its password to the settings, the password (or none) to the credential store.
    const { url, password } = (value ?? {}) as { url?: string; password?: string };
    const name = key.passwordSecret;
    if (password !== undefined || credentials.read(profile)[name] !== undefined) await credentials.update(profile, (cur) => ({ ...cur, [name]: password }));
    settings.updateProfile(profile, patchAtPath(key.path, url));
    return [];
  }
  if (key.secret) {
    const name = key.path[0] as 'clientSecret' | 'providerToken' | 'sandboxAdminSecret';
    // Each credential is bound to its own origin, and storing one never rebinds another: the client
    // secret to the base URL in force (none yet: bound later), the provider token to the provider's API.
    const binding: Partial<ProfileSecrets> =
      name === 'clientSecret'
        ? { clientSecretOrigin: value === undefined ? undefined : (originOf(stores.envBaseUrl) ?? originOf(current?.baseUrl)) }
        : name === 'providerToken'
          ? { providerTokenOrigin: value === undefined ? undefined : originOf(current?.provider?.apiUrl) }
          : {};
    await credentials.update(profile, (cur) => ({ ...cur, [name]: value, ...binding }));
    return [];
  }
  const moves = key.key === 'base-url' ? 'base' : key.key === 'provider-api-url' ? 'provider' : undefined;
  const oldUrl = moves === 'base' ? current?.baseUrl : moves === 'provider' ? current?.provider?.apiUrl : undefined;
  const old = originOf(oldUrl);
  const next = originOf(typeof value === 'string' ? value : undefined);
  const warnings: string[] = [];
  if (moves && old !== next && credentials.profiles().includes(profile)) {
    const secrets = credentials.read(profile);
    // CHOICE (docs/spec-choices.md#credentials-of-older-versions): credentials an older opcli stored belong to the old value.
    const pinToken = moves === 'base' && old !== undefined && !!secrets.token && !secrets.token.origin;
    const pinSecret = moves === 'base' && old !== undefined && !!secrets.clientSecret && !secrets.clientSecretOrigin;
    const pinProvider = moves === 'provider' && old !== undefined && !!secrets.providerToken && !secrets.providerTokenOrigin;
    if (pinToken || pinSecret || pinProvider) {
      await credentials.update(profile, (cur) => ({
        ...cur,
        ...(pinToken && cur.token && !cur.token.origin ? { token: { ...cur.token, origin: old, tokenUrl: tokenUrlOf(oldUrl as string) } } : {}),
        ...(pinSecret && cur.clientSecret && !cur.clientSecretOrigin ? { clientSecretOrigin: old } : {}),
        ...(pinProvider && cur.providerToken && !cur.providerTokenOrigin ? { providerTokenOrigin: old } : {}),
      }));
    }
    if (next !== undefined) {
      const now = credentials.read(profile);
      const p = profileFlag(profile);
      const tokenOrigin = now.token?.origin;
      if (moves === 'base' && tokenOrigin && tokenOrigin !== next) {
        warnings.push(
          `Warning: the login of profile "${profile}" was issued by ${tokenOrigin}; it does not apply to ${next}, and opcli will not send it there. Log in there with \`opcli${p} auth login\` (\`opcli${p} auth logout\` forgets the old one), or set base-url back to ${tokenOrigin}.`,
        );
      }
      if (moves === 'base' && now.clientSecret && now.clientSecretOrigin && now.clientSecretOrigin !== next && !alsoWritten.includes('clientSecret')) {
        warnings.push(
          `Warning: the client secret of profile "${profile}" was stored for ${now.clientSecretOrigin}; opcli will not send it to ${next}. Store the secret of the app there: \`opcli${p} config set client-secret --stdin\`.`,
        );
      }
      if (moves === 'provider' && now.providerToken && now.providerTokenOrigin && now.providerTokenOrigin !== next && !alsoWritten.includes('providerToken')) {
        warnings.push(
          `Warning: the gift card provider token of profile "${profile}" was stored for ${now.providerTokenOrigin}; opcli will not send it to ${next}. Give the token for ${next}: \`opcli${p} giftcard setup\` (or \`opcli${p} config set provider-token --stdin\`).`,
        );
      }
    }
  }
  settings.updateProfile(profile, patchAtPath(key.path, value));
  return warnings;
}
