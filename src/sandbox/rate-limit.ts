/**
 * A token bucket per access token: a server whose budget opcli cannot know in advance. The spec names
 * no limit; a real server may or may not send Retry-After and RateLimit-* / X-RateLimit-*, so each is a setting.
 */
import * as z from 'zod';

export const RateLimitSchema = z.strictObject({
  perSecond: z.number().positive().max(1_000_000),
  /** Bucket size (default: perSecond, at least 1). */
  burst: z.number().int().positive().optional(),
  /** Retry-After on a 429 (default true). */
  retryAfter: z.boolean().optional(),
  /** 'ietf': RateLimit-Limit/-Remaining/-Reset, 'x': X-RateLimit-*, 'both', or 'none' (default). */
  headers: z.enum(['none', 'ietf', 'x', 'both']).optional(),
});
export type RateLimit = z.infer<typeof RateLimitSchema>;

/** Whole seconds, never below 1, for Retry-After. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** The headers are added to the request's answer. */
export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
  /** When refused: until one request would be allowed. */
  waitMs: number;
}

export function createRateLimiter(now: () => number = Date.now) {
  let config: RateLimit | null = null;
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    /** Null: no limit. Every bucket starts full again. */
    set(limit: RateLimit | null): void {
      config = limit;
      buckets.clear();
    },
    /** Null when no limit is set. */
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
        // Seconds until the bucket is full again.
        const reset = String(Math.ceil((burst - bucket.tokens) / rate));
        if (style === 'ietf' || style === 'both') {
          headers['ratelimit-limit'] = String(burst);
          headers['ratelimit-remaining'] = remaining;
          headers['ratelimit-reset'] = reset;
          // The sustained quota, per minute below 1/s.
          headers['ratelimit-policy'] = rate >= 1 ? `${Math.round(rate)};w=1` : `${Math.max(1, Math.round(rate * 60))};w=60`;
        }
        if (style === 'x' || style === 'both') {
          headers['x-ratelimit-limit'] = String(burst);
          headers['x-ratelimit-remaining'] = remaining;
          headers['x-ratelimit-reset'] = reset;
        }
      }
      if (!allowed && config.retryAfter !== false) headers['retry-after'] = String(retryAfterSeconds(waitMs));
      return { allowed, headers, waitMs };
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
