/** Proxy variables of any program (HTTPS_PROXY, npm_config_https_proxy, GIT_PROXY …): a URL that may carry `user:password@`. */
const PROXY_NAME = /proxy/i;

/** A URL's `scheme://user:password@` anywhere in a value, up to the last `@` before the host ends. */
const URL_USER_INFO = /\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/?#]*@/g;

// CHOICE (docs/spec-choices.md#child-processes): names that say "secret" are left out, whatever program they belong to.
const SECRET_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|PRIVATE_?KEY|CREDENTIAL/i;

/**
 * The environment of every process opcli starts: no OPCLI_* variable (its secrets), none named as a
 * secret, and no `user:password@` in a proxy variable (unreadable with an `@`: left out) or any URL.
 */
export function childEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (/^OPCLI_/i.test(name) || SECRET_NAME.test(name)) continue;
    if (PROXY_NAME.test(name)) {
      const clean = withoutUserInfo(value);
      if (clean !== undefined) out[name] = clean;
      continue;
    }
    out[name] = value.replace(URL_USER_INFO, '$1');
  }
  return out;
}

/** A proxy URL without `user:password@`; undefined when it cannot be read and might hold them. */
function withoutUserInfo(value: string): string | undefined {
  // "host:port" without a scheme is common in proxy variables: read it as http:// to find an "@".
  const hasScheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(value);
  let url: URL;
  try {
    url = new URL(hasScheme ? value : `http://${value}`);
  } catch {
    return value.includes('@') ? undefined : value;
  }
  if (!url.username && !url.password) return value.includes('@') ? undefined : value;
  url.username = '';
  url.password = '';
  const text = url.toString();
  // URL adds a "/" after a bare host; keep the value's own shape otherwise.
  const clean = !/\/$/.test(value) && url.pathname === '/' && !url.search && !url.hash ? text.replace(/\/$/, '') : text;
  return hasScheme ? clean : clean.replace(/^http:\/\//, '');
}
