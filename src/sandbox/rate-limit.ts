/**
 * The sandbox's request rate limit: a token bucket per access token, so anyone can reproduce how
 * opcli behaves against a server with a budget it cannot know in advance. The spec names no limit
 * for orders or claims; a real server may answer 429 with Retry-After, without it, and may or may
 * not announce its budget in RateLimit-* / X-RateLimit-* headers, so each of those is a setting.
 */
import * as z from 'zod';

export const RateLimitSchema = z.strictObject({
  /** Requests per second refilled into each access token's bucket. */
  perSecond: z.number().positive().max(1_000_000),
  /** Bucket size: how many requests may arrive at once after a quiet spell (default: perSecond, at least 1). */
  burst: z.number().int().positive().optional(),
  /** Send Retry-After (whole seconds, at least 1) on a 429 (default true). */
  retryAfter: z.boolean().optional(),
  /** Announce the budget: 'ietf' sends RateLimit-Limit/-Remaining/-Reset, 'x' the X-RateLimit-* names, 'both', or 'none' (default). */
  headers: z.enum(['none', 'ietf', 'x', 'both']).optional(),
});
export type RateLimit = z.infer<typeof RateLimitSchema>;

interface Bucket {
  tokens: number;
  at: number;
}

/** The outcome for one request: allowed or not, and the headers to add to its answer. */
export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
  /** When refused: milliseconds until one request would be allowed. */
  waitMs: number;
}

/** A token-bucket limiter keyed by access token; `now` is injectable for tests. */
export function createRateLimiter(now: () => number = Date.now) {
  let config: RateLimit | null = null;
  const buckets = new Map<string, Bucket>();
  return {
    /** Replaces the limit (null: no limit); every bucket starts full again. */
    set(limit: RateLimit | null): void {
      config = limit;
      buckets.clear();
    },
    /** Takes one token for `key`, or refuses. Null when no limit is set. */
    take(key: string): RateDecision | null {
      if (!config) return null;
      const rate = config.perSecond;
      const burst = config.burst ?? Math.max(1, Math.floor(rate));
      const t = now();
      let bucket = buckets.get(key);
      if (!bucket) {
        bucket = { tokens: burst, at: t };
        buckets.set(key, bucket);
        if (buckets.size > 10_000) buckets.delete(buckets.keys().next().value as string);
      }
      bucket.tokens = Math.min(burst, bucket.tokens + ((t - bucket.at) / 1000) * rate);
      bucket.at = t;
      const allowed = bucket.tokens >= 1;
      if (allowed) bucket.tokens -= 1;
      const waitMs = allowed ? 0 : Math.ceil(((1 - bucket.tokens) / rate) * 1000);
      const headers: Record<string, string> = {};
      const style = config.headers ?? 'none';
      if (style !== 'none') {
        const remaining = String(Math.floor(bucket.tokens));
        // Seconds until the bucket is full again (a client may spend `limit` requests then).
        const reset = String(Math.ceil((burst - bucket.tokens) / rate));
        if (style === 'ietf' || style === 'both') {
          headers['ratelimit-limit'] = String(burst);
          headers['ratelimit-remaining'] = remaining;
          headers['ratelimit-reset'] = reset;
          // The policy states the sustained quota: `rate` requests per second (per minute below 1/s).
          headers['ratelimit-policy'] = rate >= 1 ? `${Math.round(rate)};w=1` : `${Math.max(1, Math.round(rate * 60))};w=60`;
        }
        if (style === 'x' || style === 'both') {
          headers['x-ratelimit-limit'] = String(burst);
          headers['x-ratelimit-remaining'] = remaining;
          headers['x-ratelimit-reset'] = reset;
        }
      }
      if (!allowed && config.retryAfter !== false) headers['retry-after'] = String(Math.max(1, Math.ceil(waitMs / 1000)));
      return { allowed, headers, waitMs };
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
