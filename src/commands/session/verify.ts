import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { ApiError, OpcliError, UsageError } from '../../errors.js';
import { textProblem } from '../../text/flag-text.js';

export interface VerifyOptions {
  /** The token from the argument; undefined with --stdin. */
  token?: string;
  stdin: boolean;
  json: boolean;
  /** On a 429, wait once for Retry-After and try again. */
  wait: boolean;
}

/** The spec's advice for a refused session token (Errors table). */
export const RELOAD_MESSAGE = 'the session token is expired or was already used: ask the merchant to reload the app';

/** Registers `session verify`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('verify')
    .description('Verify an embedded-app session token and print who is looking at which store')
    .argument('[token]', 'the session_token query parameter the dashboard gave the app (prefer --stdin)')
    .option('--stdin', 'read the token from standard input')
    .option('--json', 'print the session context as JSON')
    .option('--wait', 'when rate limited (30 per minute per IP), wait once for Retry-After and try again')
    .addHelpText(
      'after',
      `
Needs only the base URL (no login): the request carries no Authorization header. A session token
is valid for 60 seconds and can be verified once.

Examples:
  $ opcli session verify eyJhbGciOiJIUzI1NiJ9…
  $ printf %s "$SESSION_TOKEN" | opcli session verify --stdin --json
  $ OPCLI_BASE_URL=https://api.example.com opcli session verify --stdin --wait < token.txt

Exit codes: 0 verified, 1 refused (expired, forged or used) or rate limited, 2 usage.`,
    )
    .action(async (token: string | undefined, flags: { stdin?: boolean; json?: boolean; wait?: boolean }) => {
      if (token !== undefined && flags.stdin) throw new UsageError('Give the token either as an argument or with --stdin, not both.');
      if (token === undefined && !flags.stdin) {
        throw new UsageError('No session token given.', 'Pass it as an argument or pipe it in: `opcli session verify --stdin`.');
      }
      await run({ token, stdin: !!flags.stdin, json: !!flags.json, wait: !!flags.wait }, deps);
    });
}

/** A JWT in compact form: three base64url parts joined by dots (the signature part may be empty). */
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Refuses, before anything is sent, a token that cannot be a session token: the spec says the
 * dashboard generates a JWT. A token spent on a malformed request is a verification the merchant
 * must reload the app for; a clear local error tells what went wrong instead.
 */
function checkTokenShape(token: string): void {
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

/** Verifies the token (endpoint 3) and prints the session context. */
export async function run(opts: VerifyOptions, deps: Deps): Promise<void> {
  let token = opts.token;
  if (opts.stdin) {
    const { readStdinText } = await import('../../stdin.js');
    token = await readStdinText(deps);
  }
  token = (token ?? '').trim();
  deps.redactor.add(token);
  if (!token) throw new UsageError('The session token is empty.', 'Pass the session_token query parameter the dashboard appended to the App URL.');
  checkTokenShape(token);

  const [api, { parseRetryAfter }] = await Promise.all([deps.api(), import('../../http/retry.js')]);
  let context: Awaited<ReturnType<typeof api.verifySession>> | undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      context = await api.verifySession(token, deps.signal);
      break;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.status === 429) {
        const waitMs = parseRetryAfter(error.headers['retry-after'], deps.now(), 120_000) ?? 60_000;
        if (opts.wait && attempt === 0) {
          deps.err(`Session verification is rate limited; waiting ${Math.ceil(waitMs / 1000)}s as the server asks, then trying once more.\n`);
          await deps.sleep(waitMs, deps.signal);
          continue;
        }
        const at = new Date(deps.now() + waitMs).toISOString().slice(11, 19);
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
        throw new OpcliError(`${RELOAD_MESSAGE[0]?.toUpperCase()}${RELOAD_MESSAGE.slice(1)}.`, {
          hint: `${said ? `The server said: ${said}. ` : ''}A session token is valid 60 seconds and verifies once; the app should create its own session after the first verification.`,
          cause: error,
        });
      }
      throw error;
    }
  }
  if (opts.json) {
    const { printJson } = await import('../../output.js');
    printJson(deps, context);
    return;
  }
  const { outputMode, printRecord } = await import('../../output.js');
  await printRecord(
    deps,
    [
      ['Merchant', `${context.firstName} ${context.lastName} <${context.email}>`],
      ['User ID', context.userId],
      ['Store', context.storeId],
      ['Installation', context.installationId],
      ['Application', context.applicationId],
      ['Client ID', context.clientId],
      ['Scopes', context.scopes.join(' ')],
    ],
    outputMode(deps, {}),
  );
}
