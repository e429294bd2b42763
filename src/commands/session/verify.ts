import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { UsageError } from '../../errors.js';

export interface VerifyOptions {
  /** The token from the argument; undefined with --stdin. */
  token?: string;
  stdin: boolean;
  json: boolean;
  /** On a 429, wait once for Retry-After and try again. */
  wait: boolean;
}

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
  const { checkTokenShape, verifySession } = await import('../../session/verify.js');
  checkTokenShape(token);
  const context = await verifySession(token, { ...deps, onNotice: (text) => deps.err(text) }, { wait: opts.wait });
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
