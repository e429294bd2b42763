import { UsageError } from '../errors.js';
import type { ProfileSecrets } from './credentials.js';
import type { ProfileSettings } from './settings.js';

/** The settings in force for one command: profile values with the environment's overrides applied. */
export interface ResolvedProfile {
  name: string;
  baseUrl?: string;
  authorizeUrl?: string;
  clientId?: string;
  clientSecret?: string;
  scopes: string[];
  storeId?: string;
  /** OPCLI_TOKEN: a bearer token used as it is, instead of stored credentials. */
  envToken?: string;
  provider: NonNullable<ProfileSettings['provider']> & { token?: string };
  /** Where each overridable value came from, for `auth status` and `config list`. */
  sources: { baseUrl?: 'env' | 'profile'; clientId?: 'env' | 'profile'; clientSecret?: 'env' | 'profile'; token: 'env' | 'store' };
}

/**
 * Picks the profile name: --profile, then OPCLI_PROFILE, then the one `profiles use` chose, then
 * `default`.
 */
export function pickProfileName(flag: string | undefined, env: Record<string, string | undefined>, current: string | undefined): string {
  return flag || env.OPCLI_PROFILE || current || 'default';
}

/**
 * Applies precedence: environment (OPCLI_BASE_URL, OPCLI_CLIENT_ID, OPCLI_CLIENT_SECRET,
 * OPCLI_TOKEN) wins over the profile's stored values.
 */
export function resolveProfile(
  name: string,
  settings: ProfileSettings | undefined,
  secrets: ProfileSecrets,
  env: Record<string, string | undefined>,
): ResolvedProfile {
  const s = settings ?? {};
  const baseUrl = env.OPCLI_BASE_URL || s.baseUrl;
  return {
    name,
    baseUrl,
    authorizeUrl: s.authorizeUrl ?? (baseUrl ? `${baseUrl.replace(/\/+$/, '')}/v1/oauth/authorize` : undefined),
    clientId: env.OPCLI_CLIENT_ID || s.clientId,
    clientSecret: env.OPCLI_CLIENT_SECRET || secrets.clientSecret,
    scopes: s.scopes ?? [],
    storeId: s.storeId,
    envToken: env.OPCLI_TOKEN || undefined,
    provider: { ...s.provider, token: secrets.providerToken },
    sources: {
      baseUrl: env.OPCLI_BASE_URL ? 'env' : s.baseUrl ? 'profile' : undefined,
      clientId: env.OPCLI_CLIENT_ID ? 'env' : s.clientId ? 'profile' : undefined,
      clientSecret: env.OPCLI_CLIENT_SECRET ? 'env' : secrets.clientSecret ? 'profile' : undefined,
      token: env.OPCLI_TOKEN ? 'env' : 'store',
    },
  };
}

/** The client id and secret, or a usage error naming how to set them. */
export function requireClient(profile: ResolvedProfile): { clientId: string; clientSecret: string } {
  if (!profile.clientId || !profile.clientSecret) {
    const missing = [!profile.clientId && 'client-id', !profile.clientSecret && 'client-secret'].filter(Boolean).join(' and ');
    throw new UsageError(
      `Profile "${profile.name}" has no ${missing}.`,
      `Run \`opcli config set client-id svc_app_…\` and \`opcli config set client-secret --stdin\`, or set OPCLI_CLIENT_ID / OPCLI_CLIENT_SECRET.`,
    );
  }
  return { clientId: profile.clientId, clientSecret: profile.clientSecret };
}
