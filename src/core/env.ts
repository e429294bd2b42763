/** What a run reads from its environment besides a profile: limits of the HTTP client, CI (the config folder: src/config/config-home.ts). */
import { UsageError } from './errors.js';
import { shellAdvice } from './platform.js';

/** The HTTP client's limits: a test's overrides, else the OPCLI_HTTP_* variables (checked, each named in its error). */
export function httpLimits(env: Record<string, string | undefined>, overrides: { timeoutMs?: number; maxRetries?: number; maxRetryAfterMs?: number } = {}) {
  return {
    timeoutMs: overrides.timeoutMs ?? numberEnv(env.OPCLI_HTTP_TIMEOUT, 'OPCLI_HTTP_TIMEOUT'),
    maxRetries: overrides.maxRetries ?? numberEnv(env.OPCLI_HTTP_RETRIES, 'OPCLI_HTTP_RETRIES'),
    maxRetryAfterMs: overrides.maxRetryAfterMs,
    deadlineMs: positiveEnv(env.OPCLI_HTTP_DEADLINE, 'OPCLI_HTTP_DEADLINE', 'milliseconds, e.g. 120000'),
    maxBodyBytes: positiveEnv(env.OPCLI_HTTP_MAX_BODY, 'OPCLI_HTTP_MAX_BODY', 'bytes, e.g. 67108864 for 64 MiB'),
    maxSmallBodyBytes: positiveEnv(env.OPCLI_HTTP_MAX_SMALL_BODY, 'OPCLI_HTTP_MAX_SMALL_BODY', 'bytes, e.g. 1048576 for 1 MiB'),
  };
}

/** A whole-number OPCLI_* variable; anything else is a usage error naming it (not silently ignored). */
function numberEnv(value: string | undefined, name: string, unit?: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (value.trim() === '')
    throw new UsageError(`${name} is set but holds only whitespace.`, `Unset it (\`${shellAdvice().unsetEnv(name)}\`) or give it a whole number.`);
  if (!/^\d+$/.test(value.trim()))
    throw new UsageError(
      `${name} "${value}" is not a whole number.`,
      `Set ${name} to a whole number (${unit ?? (name === 'OPCLI_HTTP_TIMEOUT' ? 'milliseconds, e.g. 30000' : 'e.g. 4')}), or unset it.`,
    );
  return Number(value.trim());
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** A limit from an OPCLI_* variable: a whole number of at least 1 (`unit` says of what), else a usage error naming it. */
function positiveEnv(value: string | undefined, name: string, unit: string): number | undefined {
  const number = numberEnv(value, name, unit);
  if (number === 0) throw new UsageError(`${name} is 0; it must be at least 1.`, `Set ${name} to a whole number (${unit}), or unset it for the default.`);
  // A timer longer than this fires at once in Node: refused rather than read as "no deadline".
  if (number !== undefined && number > MAX_TIMER_MS && /DEADLINE/.test(name))
    throw new UsageError(
      `${name} "${value}" is longer than ${MAX_TIMER_MS} ms (about 24 days).`,
      `Set ${name} to a whole number (${unit}), or unset it for the default.`,
    );
  return number;
}

/** CI is set by every common CI system; there, nobody can answer a prompt. */
export function isCI(env: Record<string, string | undefined>): boolean {
  return !!env.CI && env.CI !== 'false' && env.CI !== '0';
}
