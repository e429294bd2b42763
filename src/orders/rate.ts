/**
 * The pace of `orders list --all` / `--limit`: one adaptive limiter (src/http/adaptive.ts) for the
 * page requests of a run. Pages follow cursors, so at most two are in flight (the page in hand and
 * the one guessed ahead from pageCursors) and more slots could not help; what the limiter adds is
 * the rate: after a 429 or 503 it pauses (Retry-After when sent), then paces just under what the
 * server accepted, and RateLimit-* / X-RateLimit-* headers slow it before the budget runs out.
 */
import { PATHS } from '../api/service.js';
import type { PaceClock } from '../core/timers.js';
import { createAdaptiveLimiter, type RequestLimiter } from '../http/adaptive.js';
import { formatWait } from '../http/retry.js';

/** Pages in flight at once: the page being asked for and the one guessed ahead. */
export const PAGES_IN_FLIGHT = 2;

/**
 * The limiter for one run. `onNotice` hears of each refusal and the pause before the page is asked
 * for again, in the words the HTTP core used before pages were paced (stderr keeps its lines).
 */
export function createPageLimiter(deps: { pace: PaceClock }, options: { rate?: number; onNotice?: (text: string) => void } = {}): RequestLimiter {
  const { now, sleep, sleepExact } = deps.pace;
  const inner = createAdaptiveLimiter({ maxConcurrency: PAGES_IN_FLIGHT, maxRate: options.rate, now, sleep, sleepExact });
  return {
    snapshot: () => inner.snapshot(),
    async acquire(signal) {
      const permit = await inner.acquire(signal);
      return {
        sent: () => permit.sent(),
        done(outcome) {
          permit.done(outcome);
          if (outcome.status !== 429 && outcome.status !== 503) return;
          const wait = inner.snapshot().pauseLeftMs;
          options.onNotice?.(`GET ${PATHS.orders} answered ${outcome.status}; retrying${wait > 0 ? ` in ${formatWait(wait)}` : ''}\n`);
        },
      };
    },
  };
}
