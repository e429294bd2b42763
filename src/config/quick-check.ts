/**
 * Quick checks of the settings and credentials files, for the common case: a file opcli wrote
 * itself. Building and running the zod schemas of these files cost a one-off command ~5 ms, more than
 * reading them. Each check returns the parsed value only when it is certain the zod schema accepts
 * it and returns it unchanged: every key known, every type exact, nothing a default would fill or a
 * transform would rewrite. Anything else returns undefined and the zod schema decides, so a damaged
 * file gets the same error naming the field as before, and an unusual but valid file the same value.
 * test/config/quick-check.test.ts holds both checks to their schemas on generated files.
 */

/**
 * What a profile name may be (the ProfileName schema of src/config/settings.ts uses it too), kept
 * here so the quick check needs no zod; `__proto__` is left to zod, which assigns keys.
 */
export const PROFILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/;
/** What PROFILE_NAME asks for, in the words of every message about a profile name. */
export const PROFILE_NAME_RULE = 'expected letters, digits, "-", "_" or "." (neither "-" nor "." first), at most 64 characters';

type Check = (value: unknown) => boolean;

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;

const isString: Check = (value) => typeof value === 'string';
const isNumber: Check = (value) => typeof value === 'number' && Number.isFinite(value);
const isBoolean: Check = (value) => typeof value === 'boolean';
const isStringArray: Check = (value) => Array.isArray(value) && value.every(isString);
/** What z.url() accepts unchanged: URL.canParse of a value that trimming and tab/newline removal leave alone. */
const isUrl: Check = (value) => typeof value === 'string' && value === value.trim() && !/[\t\n\r]/.test(value) && URL.canParse(value);

/** An object with only the keys of `fields`, each present one passing its check, and every `required` key present. */
function shape(fields: Record<string, Check>, required: string[] = []): Check {
  return (value) => {
    if (!isObject(value)) return false;
    for (const key of required) if (!Object.hasOwn(value, key)) return false;
    for (const key of Object.keys(value)) {
      const check = Object.hasOwn(fields, key) ? fields[key] : undefined;
      if (!check?.(value[key])) return false;
    }
    return true;
  };
}

/** A record keyed by profile names. */
function profiles(check: Check): Check {
  return (value) => isObject(value) && Object.keys(value).every((key) => key !== '__proto__' && PROFILE_NAME.test(key) && check(value[key]));
}

const profileSettings = shape({
  baseUrl: isUrl,
  authorizeUrl: isUrl,
  clientId: isString,
  scopes: isStringArray,
  storeId: isString,
  recordDir: isString,
  proxy: isString,
  noProxy: isString,
  proxyLoopback: isBoolean,
  caFile: isString,
  notProcessedStatuses: (value) => Array.isArray(value) && value.every((v) => Number.isInteger(v)),
  progress: (value) => value === 'auto' || value === 'plain' || value === 'none',
  accessible: isBoolean,
  provider: shape({
    name: isString,
    apiUrl: isUrl,
    shopUrl: isString,
    triggerId: isString,
    triggerUrl: isUrl,
    nativeUrl: isUrl,
    triggerSendsToken: isBoolean,
    currency: isString,
    maxAmount: isString,
  }),
});

const settingsFile = shape({ currentProfile: (v) => typeof v === 'string' && PROFILE_NAME.test(v), profiles: profiles(profileSettings) }, ['profiles']);

const storedToken = shape(
  {
    accessToken: isString,
    refreshToken: isString,
    expiresAt: isNumber,
    scopes: isStringArray,
    grant: (v) => v === 'authorization_code' || v === 'client_credentials' || v === 'token',
    storeId: isString,
    requestedScopes: isStringArray,
    obtainedAt: isNumber,
    origin: isString,
    tokenUrl: isString,
  },
  ['accessToken', 'scopes', 'grant', 'obtainedAt'],
);

const credentialsFile = shape(
  {
    profiles: profiles(
      shape({ clientSecret: isString, clientSecretOrigin: isString, providerToken: isString, providerTokenOrigin: isString, token: storedToken }),
    ),
  },
  ['profiles'],
);

/** The settings file's content when it certainly passes SettingsFile unchanged, else undefined. */
export function quickSettings<T>(raw: unknown): T | undefined {
  return settingsFile(raw) ? (raw as T) : undefined;
}

/** The credentials file's content when it certainly passes CredentialsFile unchanged, else undefined. */
export function quickCredentials<T>(raw: unknown): T | undefined {
  return credentialsFile(raw) ? (raw as T) : undefined;
}
