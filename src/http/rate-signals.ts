/**
 * What a server's answer says about its rate limit, in every form servers send it:
 *
 * - `Retry-After` (RFC 9110 §10.2.3): seconds or an HTTP date;
 * - `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers): `100;w=60` (drafts 00-06) or
 *   `"default";q=100;w=60` (draft 07 on): a quota of q requests a window of w seconds;
 * - the combined `RateLimit` field: `limit=100, remaining=50, reset=30` (drafts 03-06) or
 *   `"default";r=50;t=30` (draft 07 on);
 * - `RateLimit-Limit` / `-Remaining` / `-Reset` (drafts 00-02) and `X-RateLimit-*` (GitHub's,
 *   whose reset is an epoch time in seconds).
 */
import { parseRetryAfter } from './retry.js';

export interface RateSignals {
  /** The pause a refusal asks for (ms). */
  retryAfterMs?: number;
  /** The sustained rate a policy states (requests per second). */
  policyRate?: number;
  /** The budget's size, the requests left in it, and when it is refilled (ms from now). */
  limit?: number;
  remaining?: number;
  resetMs?: number;
}

/** A reset past this many seconds is an epoch time, as X-RateLimit-Reset is on GitHub. */
const EPOCH_SECONDS = 1e9;

/** A non-negative number, or undefined. */
function number(text: string | undefined): number | undefined {
  if (text === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(text)) return undefined;
  return Number(text);
}

/** The parameters of a structured field's first member (`k=v` split on `;` or `,`), keys in lower case. */
function params(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of text.split(/[;,]/)) {
    const [key, value] = part.split('=', 2);
    if (key !== undefined && value !== undefined && !out.has(key.trim().toLowerCase())) out.set(key.trim().toLowerCase(), value.trim());
  }
  return out;
}

/** The tightest rate of a policy's items: `100;w=60` (its first parameter the quota) or `"name";q=100;w=60`. */
function policyRate(text: string | undefined): number | undefined {
  let rate: number | undefined;
  for (const item of text?.split(',') ?? []) {
    const p = params(item);
    const quota = number(p.get('q')) ?? number(item.split(';')[0]);
    const window = number(p.get('w')) ?? 1;
    if (quota !== undefined && quota > 0 && window > 0) rate = Math.min(rate ?? Number.POSITIVE_INFINITY, quota / window);
  }
  return rate;
}

/** A reset value in ms from `now`: delta-seconds, or an epoch time in seconds. */
function resetMs(seconds: number | undefined, now: number): number | undefined {
  if (seconds === undefined) return undefined;
  return seconds > EPOCH_SECONDS ? Math.max(0, seconds * 1000 - now) : seconds * 1000;
}

/** Reads every rate signal of an answer's headers (names in lower case) at `now`; `maxRetryAfterMs` caps the pause. */
export function readRateSignals(headers: Record<string, string> | undefined, now: number, maxRetryAfterMs: number): RateSignals {
  if (!headers) return {};
  const combined = params(headers.ratelimit ?? '');
  const remaining =
    number(combined.get('remaining')) ?? number(combined.get('r')) ?? number(headers['ratelimit-remaining']) ?? number(headers['x-ratelimit-remaining']);
  const limit = number(combined.get('limit')) ?? number(headers['ratelimit-limit']) ?? number(headers['x-ratelimit-limit']);
  const reset = number(combined.get('reset')) ?? number(combined.get('t')) ?? number(headers['ratelimit-reset']) ?? number(headers['x-ratelimit-reset']);
  return {
    retryAfterMs: parseRetryAfter(headers['retry-after'], now, maxRetryAfterMs),
    policyRate: policyRate(headers['ratelimit-policy']),
    limit,
    remaining,
    resetMs: resetMs(reset, now),
  };
}
