/** Endpoint 3, session verification: the token's shape checked before anything is sent, one wait for Retry-After when asked. */
import type { ServiceApi } from '../api/service.js';
import { ApiError, OpcliError, UsageError } from '../core/errors.js';
import { parseRetryAfter } from '../http/retry.js';
import { textProblem } from '../text/safe.js';

/** A JWT in compact form: three base64url parts joined by dots (the signature part may be empty). */
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Refuses a token that cannot be a session token (the spec's JWT) before it is spent on a malformed request. */
export function checkTokenShape(token: string): void {
  const problem = textProblem(token);
  if (problem)
    throw new UsageError(`The session token ${problem}; nothing was sent.`, 'Pass the session_token query parameter exactly as the dashboard appended it.');
  if (!JWT.test(token)) {
    throw new UsageError(
      'The session token is not a JWT (three base64url parts joined by dots); nothing was sent.',
      'Pass the session_token query parameter exactly as the dashboard appended it, not the whole App URL.',
    );
  }
}

/** Verifies a token once (or, with `wait`, once more after a 429's Retry-After) and returns the session context. */
export async function verifySession(
  token: string,
  env: {
    api(): Promise<ServiceApi>;
    now(): number;
    sleep(ms: number, signal?: AbortSignal): Promise<void>;
    signal: AbortSignal;
    onNotice: (text: string) => void;
  },
  opts: { wait: boolean },
) {
  const api = await env.api();
  for (let attempt = 0; ; attempt++) {
    try {
      return await api.verifySession(token, env.signal);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.status === 429) {
        const waitMs = parseRetryAfter(error.headers['retry-after'], env.now(), 120_000) ?? 60_000;
        if (opts.wait && attempt === 0) {
          env.onNotice(`Session verification is rate limited; waiting ${Math.ceil(waitMs / 1000)}s as the server asks, then trying once more.\n`);
          await env.sleep(waitMs, env.signal);
          continue;
        }
        const at = new Date(env.now() + waitMs).toISOString().slice(11, 19);
        throw new OpcliError(`Session verification is rate limited (30 per minute per IP address): try again in ${Math.ceil(waitMs / 1000)}s (at ${at} UTC).`, {
          hint: opts.wait ? 'Still limited after waiting once; slow down and try again later.' : 'Or pass --wait to wait for it once.',
          cause: error,
        });
      }
      if (error.status === 401 || error.status === 400) {
        const said =
          typeof error.body === 'object' && error.body
            ? ((error.body as { error_description?: string; message?: string }).error_description ?? (error.body as { message?: string }).message)
            : undefined;
        // The spec's advice for a refused session token (its Errors table).
        throw new OpcliError('The session token is expired or was already used: ask the merchant to reload the app.', {
          hint: `${said ? `The server said: ${said}. ` : ''}A session token is valid 60 seconds and verifies once; the app should create its own session after the first verification.`,
          cause: error,
        });
      }
      throw error;
    }
  }
}
