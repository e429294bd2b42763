/** Small formatting helpers shared by the giftcard verbs. */
import { UsageError } from '../errors.js';

/** A card code with all but its last four characters hidden. */
export function maskCode(code: string): string {
  if (code.length <= 4) return '****';
  return `****${code.slice(-4)}`;
}

/** Parses a duration flag: "4.5s", "800ms" or a bare number of milliseconds, from `minMs` to 600 s. */
export function parseDuration(raw: string, flag: string, minMs = 0): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s)?$/.exec(raw.trim());
  if (!m) throw new UsageError(`Invalid ${flag} "${raw}": expected a duration such as 4.5s or 800ms.`);
  const n = Number(m[1]);
  const ms = m[2] === 's' ? n * 1000 : n;
  if (ms > 600_000) throw new UsageError(`Invalid ${flag} "${raw}": at most 600s.`);
  if (ms < minMs) {
    throw new UsageError(
      `Invalid ${flag} "${raw}": at least ${minMs / 1000}s.`,
      `A shorter wait gives up before the trigger workflow can post, and a fallback then risks paying twice. Pass ${flag} ${minMs / 1000}s or more.`,
    );
  }
  return Math.round(ms);
}
