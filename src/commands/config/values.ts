/**
 * A setting's value as `config set` and `giftcard setup` take it: the key's own parser (in
 * src/config/settings.ts), and before and after it what a value can never be (blank, garbled) or
 * what the key's parser lets through (a file: URL, a currency outside the spec's list, a path
 * where a domain belongs). Every refusal names the key (or the flag) and the value expected.
 */
import { ZodError } from 'zod';
import type { SettingKey } from '../../config/setting-keys.js';
import { ValidationError } from '../../core/errors.js';
import { isSafeForCredentials } from '../../http/client.js';
import { Currency } from '../../schemas.js';
import { textProblem } from '../../text/flag-text.js';

/** Keys holding a URL opcli sends requests (and tokens) to: http(s) only. */
const URL_KEYS = new Set(['base-url', 'authorize-url', 'provider-api-url', 'trigger-url', 'native-url']);
/** The consent page opens in a browser; every other URL key is one opcli itself sends requests to. */
const BROWSER_ONLY = new Set(['authorize-url']);

function urlProblem(value: unknown, key: string): string | undefined {
  const url = new URL(String(value));
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return `expected an http(s) URL such as https://api.example.com, got "${String(value)}" (opcli sends requests there)`;
  }
  // The HTTP client's own rule, applied when the value is set rather than only when it is used.
  if (!BROWSER_ONLY.has(key) && !isSafeForCredentials(url)) {
    return `plain http is allowed only to 127.0.0.1, localhost or [::1], got "${String(value)}": use https:// (opcli sends credentials there)`;
  }
  return undefined;
}

/** The provider wants the store's domain alone (shop_url): no scheme, path, query or user. */
function domainProblem(value: unknown): string | undefined {
  const text = String(value);
  // Without / ? # @ \ or spaces, what parses after https:// is a host (and maybe a port) alone.
  if (!/[/?#@\\\s]/.test(text) && URL.canParse(`https://${text}`)) return undefined;
  return `expected the store's domain alone, such as shop.example, got "${text}" (\`opcli giftcard setup --shop-url\` also takes a whole URL and keeps its domain)`;
}

function currencyProblem(value: unknown): string | undefined {
  if (Currency.safeParse(value).success) return undefined;
  return `"${String(value)}" is not a currency code of the spec's list (ISO 4217, such as USD, EUR or GBP)`;
}

const CHECKS: Record<string, (value: unknown) => string | undefined> = {
  'shop-url': domainProblem,
  currency: currencyProblem,
};

/**
 * Parses a raw value with the key's rule, as a validation error naming the key (or `label`, the
 * flag it came from). An empty value is left to the key's rule, which says what it needs.
 */
export function parseValue(key: SettingKey, raw: string, label = key.key): unknown {
  const fail = (message: string) => new ValidationError(`Invalid value for ${label}: ${message}`, [{ path: key.key, message }]);
  const problem = raw === '' ? undefined : textProblem(raw);
  if (problem) throw fail(`the value ${problem}.`);
  let value: unknown;
  try {
    value = key.parse(raw);
  } catch (error) {
    if (error instanceof ZodError) throw fail(error.issues[0]?.message ?? 'invalid value');
    throw error;
  }
  const wrong = URL_KEYS.has(key.key) ? urlProblem(value, key.key) : CHECKS[key.key]?.(value);
  if (wrong) throw fail(wrong);
  return value;
}
