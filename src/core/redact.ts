/** Secret redaction: every secret opcli handles is registered here, and text bound for stderr passes through `redact`. */

/** Token shapes the spec defines: anything with these prefixes is a credential. */
const PREFIXED = /\b(svc_(?:at|rt|secret)_)[A-Za-z0-9_\-.~+/=]+/g;

/** JSON keys and query parameters whose values are secrets. */
export const SECRET_KEYS = new Set([
  'access_token',
  'refresh_token',
  'client_secret',
  'code',
  'code_verifier',
  'session_token',
  'token',
  'id_token',
  'password',
  'secret',
  'api_key',
  'apikey',
  'authorization',
  'accesstoken',
  'refreshtoken',
  'clientsecret',
  'providertoken',
]);

/** Replaces secrets in text: registered values and anything shaped like a credential. */
export class Redactor {
  private readonly secrets = new Set<string>();

  /** Remember values that must never be printed (each ignored when too short to be a secret). */
  add(...secrets: (string | undefined | null)[]): void {
    for (const secret of secrets) if (secret && secret.length >= 6) this.secrets.add(secret);
  }

  /** Returns the text with every known secret replaced by a mask. */
  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) {
      if (out.includes(secret)) out = out.split(secret).join(mask(secret));
      const encoded = encodeURIComponent(secret);
      if (encoded !== secret && out.includes(encoded)) out = out.split(encoded).join(mask(secret));
    }
    return out.replace(PREFIXED, '$1***');
  }
}

/** A short, non-reversible stand-in for a secret. */
export function mask(secret: string): string {
  const m = /^(svc_(?:at|rt|app|secret)_)/.exec(secret);
  return m ? `${m[1]}***` : '***';
}

/** Deep-copies a JSON value with the values of secret keys masked. */
export function redactJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactJson);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = SECRET_KEYS.has(k.toLowerCase()) && v != null && v !== '' ? '***' : redactJson(v);
    }
    return out;
  }
  return value;
}
