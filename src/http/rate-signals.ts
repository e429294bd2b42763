/** A server's rate signals in every form (docs/http.md#rate-limits): Retry-After (RFC 9110), draft-ietf-httpapi-ratelimit-headers' fields (drafts 00-02 and 07 on), X-RateLimit-*. */
import { parseRetryAfter } from './retry.js';

const number = (text?: string) => (text !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(text) ? Number(text) : undefined);

/** The `k=v` parameters of a structured field (split on `;` or `,`), keys in lower case, the first of each kept. */
function params(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [, key = '', value = ''] of text.matchAll(/([^;,=\s]+)\s*=\s*([^;,]*)/g))
    if (!out.has(key.toLowerCase())) out.set(key.toLowerCase(), value.trim());
  return out;
}

/** The tightest rate of a policy's items: `100;w=60` (the quota first) or `"name";q=100;w=60`. */
function policyRate(text = ''): number | undefined {
  const rates = text.split(',').map((item) => (number(params(item).get('q')) ?? number(item.split(';')[0]) ?? 0) / (number(params(item).get('w')) ?? 1));
  const valid = rates.filter((rate) => rate > 0 && Number.isFinite(rate));
  return valid.length > 0 ? Math.min(...valid) : undefined;
}

/** The rate signals of an answer's headers (lower-case names) at `now`: a refusal's pause (ms), a policy's rate a second, the budget and what is left. */
export function readRateSignals(headers: Record<string, string> = {}, now: number) {
  const combined = params(headers.ratelimit ?? '');
  return {
    retryAfterMs: parseRetryAfter(headers['retry-after'], now),
    policyRate: policyRate(headers['ratelimit-policy']),
    limit: number(combined.get('limit')) ?? number(headers['ratelimit-limit']) ?? number(headers['x-ratelimit-limit']),
    remaining:
      number(combined.get('remaining')) ?? number(combined.get('r')) ?? number(headers['ratelimit-remaining']) ?? number(headers['x-ratelimit-remaining']),
  };
}
