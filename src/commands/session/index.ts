import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { UsageError } from '../../core/errors.js';
import { isFieldList, type JsonFlag, jsonFields, pickFields } from '../../core/json-fields.js';
import { outputMode, printJson, printRecord } from '../../core/output.js';
import { readSecret } from '../secret-input.js';
import { checkTokenShape, verifySession } from '../../session/verify.js';

/** The fields of the session context in `--json` (docs/json.md), as the spec's SessionContext names them. */
export const SESSION_FIELDS = ['userId', 'email', 'firstName', 'lastName', 'storeId', 'installationId', 'applicationId', 'clientId', 'scopes'];

export interface VerifyOptions {
  /** The token from the argument; undefined with --stdin or --from-file. */
  token?: string;
  stdin: boolean;
  fromFile?: string;
  json: boolean;
  fields?: string[];
  wait: boolean;
}

/** `opcli session`: embedded-app session tokens. */
export function register(program: Command, deps: Deps): void {
  const group = program
    .command('session')
    .description('Verify embedded-app session tokens')
    .addHelpText(
      'after',
      `
Examples:
  $ printf %s "$SESSION_TOKEN" | opcli session verify --stdin`,
    );

  group
    .command('verify')
    .description('Verify an embedded-app session token and print who is looking at which store')
    .argument('[token]', 'the session_token query parameter the dashboard gave the app (prefer --stdin or --from-file)')
    .option('--stdin', 'read the token from standard input')
    .option('--from-file <path>', 'read the token from a file')
    .option('--json [fields]', 'print the session context as JSON; with fields (comma-separated), only those (docs/json.md)')
    .option('--wait', 'when rate limited (30 per minute per IP), wait once for Retry-After and try again')
    .addHelpText(
      'after',
      `
Needs only the base URL (no login): the request carries no Authorization header. A session token
is valid for 60 seconds and can be verified once.

Examples:
  $ printf %s "$SESSION_TOKEN" | opcli session verify --stdin --json
  $ printf %s "$SESSION_TOKEN" | opcli session verify --stdin --json storeId,email
  $ OPCLI_BASE_URL=https://api.example.com opcli session verify --from-file token.txt --wait

A token given as an argument still works, with a warning: other users see it in \`ps\`.

Exit codes: 0 verified, 1 refused (expired, forged or used) or rate limited, 2 usage.`,
    )
    .action(async (argument: string | undefined, flags: { stdin?: boolean; fromFile?: string; json?: JsonFlag; wait?: boolean }) => {
      let token = argument;
      // `--json TOKEN` as before field lists: with no --stdin or --from-file, a word that is not a list of fields is the token argument.
      if (typeof flags.json === 'string' && token === undefined && !flags.stdin && flags.fromFile === undefined && !isFieldList(flags.json, SESSION_FIELDS)) {
        token = flags.json;
        flags.json = true;
      }
      const fields = jsonFields(flags.json, '--json', SESSION_FIELDS);
      if (token === undefined && !flags.stdin && flags.fromFile === undefined) {
        throw new UsageError('No session token given.', 'Pipe it in (`opcli session verify --stdin`) or read it from a file (`--from-file PATH`).');
      }
      await runVerify({ token, stdin: !!flags.stdin, fromFile: flags.fromFile, json: !!flags.json, fields, wait: !!flags.wait }, deps);
    });
}

/** Verifies the token (endpoint 3) and prints the session context. */
async function runVerify(opts: VerifyOptions, deps: Deps): Promise<void> {
  const token = ((await readSecret(deps, { stdin: opts.stdin, fromFile: opts.fromFile, argument: opts.token }, 'the session token')) ?? '').trim();
  deps.redactor.add(token);
  if (!token) throw new UsageError('The session token is empty.', 'Pass the session_token query parameter the dashboard appended to the App URL.');
  checkTokenShape(token);
  const context = await verifySession(token, { ...deps, onNotice: (text) => deps.err(text) }, { wait: opts.wait });
  if (opts.json) {
    printJson(deps, pickFields(context, opts.fields));
    return;
  }
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
