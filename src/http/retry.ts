/** Retry policy of the HTTP core: which failures are retried, and how long to wait. */

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

/** GET, PUT and DELETE may be repeated without changing the result; POST and PATCH may not. */
export function isIdempotent(method: Method): boolean {
  return method === 'GET' || method === 'PUT' || method === 'DELETE' || method === 'HEAD';
}

/** Statuses worth another try for an idempotent request. */
const RETRY_STATUSES = new Set([429, 502, 503, 504]);

/**
 * Whether a response status is retried. A POST is retried only on 429: the server refused it before
 * doing anything. A 500 or 502 after a POST may have created the resource, and the API has no
 * idempotency key, so it is never resent automatically.
 */
export function shouldRetryStatus(method: Method, status: number): boolean {
  if (isIdempotent(method)) return RETRY_STATUSES.has(status);
  return status === 429;
}

/** Capped exponential backoff with jitter: between half and all of min(cap, base * 2^attempt). */
export function backoffDelay(attempt: number, random: () => number, baseMs = 200, capMs = 5_000): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** attempt);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * Parses Retry-After (seconds, or an HTTP date) into milliseconds, capped; undefined when absent
 * or unreadable.
 */
export function parseRetryAfter(value: string | undefined, now: number, capMs = 60_000): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const date = Date.parse(trimmed);
    if (Number.isNaN(date)) return undefined;
    ms = date - now;
  }
  return Math.min(capMs, Math.max(0, Math.round(ms)));
}

/** A wait as a notice says it: `250ms`, `1.5s`. */
export function formatWait(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms)}ms`;
}
