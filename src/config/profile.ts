import { isAbsolute } from 'node:path';
import { UsageError } from '../core/errors.js';
import type { ProfileSecrets } from './credentials.js';
import { boundOrigin, clientSecretRefusal, type OriginContext, originOf } from './origin.js';
import { PROFILE_NAME, PROFILE_NAME_RULE } from './profile-name.js';
import type { ProfileSettings } from './settings.js';
import { parseRecordUrl, type RecordUrl } from '../record-pg/url.js';
import { shellAdvice } from '../core/platform.js';
import { closest } from '../core/field-issues.js';

/** CHOICE (docs/spec-choices.md#default-scopes): a browser login's scopes when neither --scopes nor the profile names any. */
export const DEFAULT_SCOPES: readonly string[] = ['read_orders', 'read_claims', 'read_store'];

/** The settings in force for one command: profile values with the environment's overrides applied. */
export interface ResolvedProfile {
  name: string;
  baseUrl?: string;
  /** The profile's own base-url setting (OPCLI_BASE_URL not applied): a login of an older opcli belongs to it. */
  storedBaseUrl?: string;
  authorizeUrl?: string;
  clientId?: string;
  clientSecret?: string;
  /** The origin the stored client secret belongs to; undefined for OPCLI_CLIENT_SECRET or a secret not bound yet. */
  clientSecretOrigin?: string;
  scopes: string[];
  storeId?: string;
  /** The record folder (OPCLI_RECORD_DIR, else the `record-dir` setting); none: the config folder. */
  recordDir?: string;
  /** The team's record in PostgreSQL (OPCLI_RECORD_URL, else `record-url` with the stored password), and where the password came from. */
  record?: RecordUrl & { passwordSource?: string };
  /** The `not-processed-statuses` setting: statuses that mean a POST was not processed (besides 421 and 429). */
  notProcessedStatuses?: number[];
  /** OPCLI_TOKEN: a bearer token used as it is, instead of stored credentials. */
  envToken?: string;
  /** The provider settings, its token and the origin the token belongs to (src/config/origin.ts). */
  provider: NonNullable<ProfileSettings['provider']> & { token?: string; tokenOrigin?: string };
  /** The profile's proxy and trust settings (the environment's are read with them in src/http/network.ts). */
  network: { proxy?: string; noProxy?: string; proxyLoopback?: boolean; caFile?: string };
  /** Notices about the environment (a value trimmed), printed once on stderr. */
  warnings: string[];
  /** Where each overridable value came from, for `auth status` and `config list`. */
  sources: {
    recordDir?: 'env' | 'profile';
    recordUrl?: 'env' | 'profile';
    baseUrl?: 'env' | 'profile';
    clientId?: 'env' | 'profile';
    clientSecret?: 'env' | 'profile';
    token: 'env' | 'store';
  };
}

/** Picks the profile name: --profile, then OPCLI_PROFILE, then the one `profiles use` chose, then `default`. */
export function pickProfileName(flag: string | undefined, env: Record<string, string | undefined>, current: string | undefined): string {
  const [name, from] = flag
    ? [flag, '--profile']
    : env.OPCLI_PROFILE
      ? [env.OPCLI_PROFILE, 'OPCLI_PROFILE']
      : current
        ? [current, 'the current profile']
        : ['default', ''];
  // The ProfileName schema's own rule and words (profile-name.ts).
  if (!PROFILE_NAME.test(name)) {
    throw new UsageError(`${from}: "${name}" is not a profile name: ${PROFILE_NAME_RULE}.`, 'See `opcli profiles list` for the profiles you have.');
  }
  return name;
}

/**
 * Refuses a profile name that matches no profile (a typo such as `--profile defualt`), suggesting
 * the closest one. Only a name given on purpose (--profile, OPCLI_PROFILE) is checked, and not when
 * OPCLI_BASE_URL supplies the settings (CI with environment variables only).
 */
export function requireKnownProfile(name: string, known: string[], flag: string | undefined, env: Record<string, string | undefined>): void {
  if (known.includes(name) || env.OPCLI_BASE_URL || !(flag || env.OPCLI_PROFILE)) return;
  const [near] = closest(name, known, 1);
  throw new UsageError(
    `no profile named ${name}${near ? `; did you mean ${near}?` : '.'}`,
    known.length
      ? `Profiles: ${known.join(', ')}. Create one with \`opcli --profile ${name} config set base-url URL\`.`
      : `No profiles yet. Create one with \`opcli --profile ${name} config set base-url URL\` or \`opcli sandbox --write-profile ${name}\`.`,
  );
}

/** OPCLI_RECORD_DIR: an absolute path, or a usage error naming the variable. */
function envRecordDir(env: Record<string, string | undefined>, warnings: string[]): string | undefined {
  const value = envValue(env, 'OPCLI_RECORD_DIR', warnings);
  if (value !== undefined && !isAbsolute(value)) {
    throw new UsageError(
      `OPCLI_RECORD_DIR "${value}" is not an absolute path.`,
      'Set it to the shared record folder, such as /srv/opcli-records, or unset it.',
    );
  }
  return value;
}

/** The record in PostgreSQL: OPCLI_RECORD_URL (its password its own), else the `record-url` setting with the stored password. */
function recordOf(
  env: Record<string, string | undefined>,
  warnings: string[],
  stored: string | undefined,
  storedPassword: string | undefined,
): ResolvedProfile['record'] {
  const value = envValue(env, 'OPCLI_RECORD_URL', warnings);
  if (value !== undefined) {
    const record = parseRecordUrl(value, 'OPCLI_RECORD_URL');
    return { ...record, passwordSource: record.password === undefined ? undefined : 'OPCLI_RECORD_URL' };
  }
  if (stored === undefined) return undefined;
  return { url: stored, password: storedPassword, passwordSource: storedPassword === undefined ? undefined : 'the stored record-url' };
}

/** OPCLI_BASE_URL: an http(s) URL, or a usage error naming the variable. */
function envBaseUrl(env: Record<string, string | undefined>, warnings: string[]): string | undefined {
  const value = envValue(env, 'OPCLI_BASE_URL', warnings);
  if (value === undefined) return undefined;
  const protocol = URL.canParse(value) ? new URL(value).protocol : undefined;
  if (protocol !== 'https:' && protocol !== 'http:') {
    throw new UsageError(
      `OPCLI_BASE_URL "${value}" is not an http(s) URL.`,
      "Set it to the API base URL, such as https://api.example.com, or unset it to use the profile's base-url.",
    );
  }
  return value;
}

/** The environment's OPCLI_* values win over the profile's stored ones; each is checked first, a usage error naming it. */
export function resolveProfile(
  name: string,
  settings: ProfileSettings | undefined,
  secrets: ProfileSecrets,
  env: Record<string, string | undefined>,
): ResolvedProfile {
  const s = settings ?? {};
  const warnings: string[] = [];
  const envBase = envBaseUrl(env, warnings);
  const envClientId = envValue(env, 'OPCLI_CLIENT_ID', warnings);
  const envClientSecret = envValue(env, 'OPCLI_CLIENT_SECRET', warnings);
  const envToken = envValue(env, 'OPCLI_TOKEN', warnings);
  const envRecord = envRecordDir(env, warnings);
  const record = recordOf(env, warnings, s.recordUrl, secrets.recordPassword);
  const baseUrl = envBase || s.baseUrl;
  const clientSecret = envClientSecret || secrets.clientSecret;
  return {
    name,
    baseUrl,
    storedBaseUrl: s.baseUrl,
    // CHOICE (docs/spec-choices.md#authorization-url): the consent page defaults to {base_url}/v1/oauth/authorize.
    authorizeUrl: s.authorizeUrl ?? (baseUrl ? `${baseUrl.replace(/\/+$/, '')}/v1/oauth/authorize` : undefined),
    clientId: envClientId || s.clientId,
    clientSecret,
    // OPCLI_CLIENT_SECRET is exempt: it was given for this run, with the base URL of this run.
    clientSecretOrigin: envClientSecret || !clientSecret ? undefined : boundOrigin(secrets.clientSecretOrigin, s.baseUrl),
    scopes: s.scopes ?? [],
    storeId: s.storeId,
    recordDir: envRecord || s.recordDir,
    record,
    notProcessedStatuses: s.notProcessedStatuses,
    envToken,
    provider: {
      ...s.provider,
      token: secrets.providerToken,
      tokenOrigin: secrets.providerToken ? (secrets.providerTokenOrigin ?? originOf(s.provider?.apiUrl)) : undefined,
    },
    network: { proxy: s.proxy, noProxy: s.noProxy, proxyLoopback: s.proxyLoopback, caFile: s.caFile },
    sources: {
      recordDir: envRecord ? 'env' : s.recordDir ? 'profile' : undefined,
      recordUrl: env.OPCLI_RECORD_URL?.trim() ? 'env' : s.recordUrl ? 'profile' : undefined,
      baseUrl: envBase ? 'env' : s.baseUrl ? 'profile' : undefined,
      clientId: envClientId ? 'env' : s.clientId ? 'profile' : undefined,
      clientSecret: envClientSecret ? 'env' : secrets.clientSecret ? 'profile' : undefined,
      token: envToken ? 'env' : 'store',
    },
    warnings,
  };
}

/** What a refusal to send a credential of `profile` names (src/config/origin.ts). */
export function originContext(profile: ResolvedProfile): OriginContext {
  return { profile: profile.name, baseUrlSource: profile.sources.baseUrl, baseOrigin: originOf(profile.baseUrl) };
}

/** The client id and secret, or a usage error naming how to set them; a secret bound to another origin is refused (AuthError). */
export function requireClient(profile: ResolvedProfile): { clientId: string; clientSecret: string } {
  if (!profile.clientId || !profile.clientSecret) {
    const missing = [!profile.clientId && 'client-id', !profile.clientSecret && 'client-secret'].filter(Boolean).join(' and ');
    throw new UsageError(
      `Profile "${profile.name}" has no ${missing}.`,
      `Run \`opcli config set client-id svc_app_…\` and \`opcli config set client-secret --stdin\`, or set OPCLI_CLIENT_ID / OPCLI_CLIENT_SECRET. If \`opcli sandbox --write-profile ${profile.name}\` is starting, run this again once it prints its URLs.`,
    );
  }
  const refused = clientSecretRefusal(profile.clientSecretOrigin, originOf(profile.baseUrl), originContext(profile));
  if (refused) throw refused;
  return { clientId: profile.clientId, clientSecret: profile.clientSecret };
}

/**
 * Reads one OPCLI_* variable that carries a credential or a name: surrounding whitespace (a pasted
 * newline) is trimmed with a warning; a control character inside is refused, naming the variable.
 */
export function envValue(env: Record<string, string | undefined>, name: string, warnings: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = raw.trim();
  if (value === '') throw new UsageError(`${name} is set but holds only whitespace.`, `Unset it (\`${shellAdvice().unsetEnv(name)}\`) or give it a value.`);
  if (value !== raw) warnings.push(`Warning: ${name} had spaces or a line break around it; they were removed.`);
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) {
    throw new UsageError(
      `${name} contains a control character, so it cannot be a valid value.`,
      `Set ${name} again without the stray character (check for a pasted escape sequence).`,
    );
  }
  // U+FFFD is what bytes that were not UTF-8 decode to: the value is not the one that was meant, and
  // a token with it cannot be sent in a header (it would fail as if the connection were lost).
  if (/[\uFFFD]|[\uD800-\uDFFF]/.test(value)) {
    throw new UsageError(
      `${name} holds characters that are not valid text (U+FFFD: bytes that were not UTF-8).`,
      `Set ${name} again from the original value (check the file or terminal encoding it came from).`,
    );
  }
  return value;
}
