import type { Command } from 'commander';
import type { Deps } from '../../cli/deps.js';
import { lazyGroup } from '../../cli/program.js';
import { type LoginRequest, login, type RedirectQuestion } from '../../auth/login.js';
import { UsageError, AuthError } from '../../core/errors.js';
import { parseDuration } from '../../core/flags.js';
import { parsePort, parseScopes, parseStoreId, refuseConflicts } from '../../auth/login-flags.js';
import { relativeTime, statusPairs, loginStatus } from '../../auth/describe.js';
import { outputMode, printJson, printRecord } from '../../core/output.js';
import { readSecret } from '../secret-input.js';
import { readStdinText } from '../../input/data.js';
import { openInBrowser } from '../../oauth/browser.js';
import { profileStatuses, allProfiles } from '../../auth/status.js';
import { originOf, profileFlag, profileLabel } from '../../config/origin.js';
import { createTokenSource } from '../../oauth/token-source.js';
import { type LogoutResult, logout } from '../../auth/logout.js';

/** `opcli auth`: log in, show the login, print or refresh the token, log out. */
export const register = lazyGroup({
  name: 'auth',
  description: 'Log in, show the login, print or refresh the token, log out',
  examples: `  $ opcli auth login                     # browser login with PKCE
  $ opcli auth status
  $ curl -H "Authorization: Bearer $(opcli auth token)" …
  $ opcli auth logout

Environment: OPCLI_TOKEN (a bearer token that overrides the stored login), OPCLI_PROFILE,
OPCLI_CLIENT_ID, OPCLI_CLIENT_SECRET, OPCLI_BASE_URL.`,
  verbs: {
    login: registerLogin,
    status: registerStatus,
    token: registerToken,
    refresh: registerRefresh,
    logout: registerLogout,
  },
});

/** How to log in (--json picks the two-step start), and where `--complete`'s redirect URL comes from. */
export type LoginOptions = Omit<LoginRequest, 'twoStep'> & { json: boolean; completeFrom?: { stdin?: boolean; fromFile?: string; argument?: string } };

// CHOICE (docs/spec-choices.md#login-timeouts): how long a browser login waits for the redirect.
const DEFAULT_TIMEOUT_MS = 5 * 60_000;

function registerLogin(group: Command, deps: Deps): void {
  group
    .command('login')
    .description('Log in: browser (PKCE), headless two-step, client credentials, or a token from stdin')
    .option('--scopes <list>', "scopes to ask for, comma-separated (default: the profile's `scopes`, else read_orders,read_claims,read_store)")
    .option('--port <n>', "listen for the browser's redirect on this port of 127.0.0.1 (default: a free one)")
    .option('--no-browser', 'do not open a browser; print the link only (with --json: two-step login)')
    .option('--timeout <duration>', 'how long to wait for the browser, e.g. 90s or 5m', '5m')
    .option('--json', 'print the result (or the two-step start) as JSON on stdout')
    .option('--complete [redirect-url]', 'finish a two-step login with the URL the browser was sent to (give it with --stdin or --from-file)')
    .option('--stdin', 'with --complete: read the redirect URL from standard input')
    .option('--from-file <path>', 'with --complete: read the redirect URL from a file')
    .option('--client-credentials', 'server-to-server login for one store, no browser')
    .option('--store-id <id>', "the store for --client-credentials (default: the profile's store-id)")
    .option('--with-token', 'read an access token from standard input (CI)')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli auth login                                   # opens the browser, waits for the redirect
  $ opcli auth login --no-browser                      # prints the link; paste the redirect URL if asked
  $ opcli auth login --scopes read_orders,read_claims
  $ opcli auth login --no-browser --json               # two-step, for scripts and agents ...
  $ printf '%s' "$REDIRECT_URL" | opcli auth login --complete --stdin   # ... step two
  $ opcli auth login --client-credentials --store-id st_123
  $ printf '%s' "$TOKEN" | opcli auth login --with-token

The link is always printed on stderr. BROWSER (a command; %s stands for the link) picks the
browser. Over SSH, or on Linux with neither DISPLAY nor WAYLAND_DISPLAY, no browser is started:
open the link on any device, then paste the address the browser ends on at the prompt (the
browser there cannot reach this machine's 127.0.0.1). The redirect URL carries the authorization
code: \`--complete URL\` still works, with a warning, but other users see it in \`ps\`.
Exit codes: 0 logged in, 2 bad flags, 4 refused or denied, 130 interrupted.`,
    )
    .action(async (flags: Record<string, string | boolean | undefined>) => {
      await runLogin(parseFlags(flags), deps);
    });
}

/** Validates the flags and their combinations; nothing is sent here. */
export function parseFlags(flags: Record<string, string | boolean | undefined>): LoginOptions {
  const opts: LoginOptions = {
    scopes: typeof flags.scopes === 'string' ? parseScopes(flags.scopes) : undefined,
    port: typeof flags.port === 'string' ? parsePort(flags.port) : undefined,
    browser: flags.browser !== false,
    timeoutMs: typeof flags.timeout === 'string' ? parseDuration(flags.timeout, '--timeout') : DEFAULT_TIMEOUT_MS,
    json: !!flags.json,
    completeFrom:
      flags.complete === undefined
        ? undefined
        : {
            argument: typeof flags.complete === 'string' ? flags.complete : undefined,
            stdin: !!flags.stdin,
            fromFile: typeof flags.fromFile === 'string' ? flags.fromFile : undefined,
          },
    clientCredentials: !!flags.clientCredentials,
    storeId: typeof flags.storeId === 'string' ? parseStoreId(flags.storeId) : undefined,
    withToken: !!flags.withToken,
  };
  if (opts.completeFrom === undefined && (flags.stdin || flags.fromFile !== undefined)) {
    const flag = flags.stdin ? '--stdin' : '--from-file';
    throw new UsageError(
      `${flag} gives the redirect URL of --complete, which is not here.`,
      opts.withToken
        ? '--with-token reads standard input already: leave --stdin out.'
        : `Finish a two-step login with \`opcli auth login --complete ${flag}${flag === '--stdin' ? '' : ' PATH'}\`.`,
    );
  }
  refuseConflicts({ ...opts, complete: opts.completeFrom ? '' : undefined });
  return opts;
}

/** Logs in the way the options say and renders the outcome. */
async function runLogin(opts: LoginOptions, deps: Deps): Promise<void> {
  const profile = await deps.profile();
  if (profile.envToken) {
    deps.err('Warning: OPCLI_TOKEN is set; it overrides the stored login until you unset it.\n');
  }
  const complete = opts.completeFrom ? await redirectToComplete(deps, opts.completeFrom) : undefined;
  const result = await login(
    { ...opts, complete, twoStep: opts.json },
    {
      ...deps,
      profile,
      stdinIsTTY: deps.io.stdinIsTTY,
      readStdin: () => readStdinText(deps),
      notice: (text) => deps.err(text),
      openBrowser:
        deps.openBrowser ??
        ((url) => openInBrowser(url, deps.env, (message) => deps.io.stderr.write(`The browser did not open (${message}); open the link above yourself.\n`))),
      askRedirect: deps.canPrompt() ? (question) => askRedirect(deps, question) : undefined,
    },
  );
  if (result.kind === 'two-step') {
    printJson(deps, result.start);
    deps.err('Open authorize_url in a browser, approve, then pipe the address it ends on to `opcli auth login --complete --stdin` within 10 minutes.\n');
    return;
  }
  const { status } = result;
  const expiry = status.expiresIn === null ? 'unknown expiry' : `the access token expires ${relativeTime(status.expiresIn)}`;
  deps.err(`Logged in${profileLabel(profile.name)}${status.scopes.length ? ` with scopes ${status.scopes.join(' ')}` : ''}; ${expiry}.\n`);
  if (opts.json) printJson(deps, status);
}

/** The pasted-address prompt; the address carries the authorization code, so it does not stay on screen. */
async function askRedirect(deps: Deps, question: RedirectQuestion): Promise<string> {
  const prompter = await deps.prompter();
  // The callback may have won while the prompt library loaded (a prompt with an aborted signal would hold the terminal).
  if (question.signal.aborted) throw question.signal.reason;
  return prompter.input({ message: question.message, secret: true, signal: question.signal, validate: question.validate });
}

/** `--complete`'s redirect URL: from --stdin, --from-file, the argument (with a warning), or asked for on a terminal. */
async function redirectToComplete(deps: Deps, from: NonNullable<LoginOptions['completeFrom']>): Promise<string> {
  const given = await readSecret(deps, from, 'the redirect URL (it carries the authorization code)');
  if (given !== undefined) return given;
  if (!deps.canPrompt())
    throw new UsageError(
      '--complete needs the redirect URL the browser ended on.',
      'Pipe it in (`printf \'%s\' "$URL" | opcli auth login --complete --stdin`) or read it from a file (`--complete --from-file PATH`).',
    );
  const prompter = await deps.prompter();
  return prompter.input({ message: 'Paste the full address the browser ended on:', secret: true, validate: (v) => (v.trim() ? true : 'paste the address') });
}

export interface StatusOptions {
  json: boolean;
  all: boolean;
  /** Also ask the server whether the token is accepted (one GET /v1/orders?size=1, refreshing first when needed). */
  check: boolean;
}

function registerStatus(group: Command, deps: Deps): void {
  group
    .command('status')
    .description('Show the login of the active profile (or --all): grant, store, scopes, expiry, token source')
    .option('--json', 'print JSON on stdout')
    .option('--all', 'every profile')
    .option('--check', 'also make one authenticated call to see that the server accepts the token')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli auth status
  $ opcli auth status --all --json
  $ opcli auth status --check          # refreshes if needed, then asks the server

Never prints a secret. Exit codes: 0 logged in, 4 not logged in (or, with --check, refused).`,
    )
    .action(async (flags: { json?: boolean; all?: boolean; check?: boolean }) => {
      await runStatus({ json: !!flags.json, all: !!flags.all, check: !!flags.check }, deps);
    });
}

/** Prints the login status of one or every profile. */
async function runStatus(opts: StatusOptions, deps: Deps): Promise<void> {
  const rows = await profileStatuses(deps, opts);
  const mode = outputMode(deps, opts);
  if (mode === 'json') printJson(deps, opts.all ? rows : rows[0]);
  else {
    for (const [i, row] of rows.entries()) {
      if (i > 0) deps.out('\n');
      const pairs = statusPairs(row);
      if (row.connection) pairs.push(['Connection', row.connection]);
      if (row.accepted !== undefined && row.accepted !== null) pairs.push(['Server check', row.accepted ? 'token accepted' : 'token refused']);
      await printRecord(deps, pairs, mode);
    }
  }
  const first = rows[0];
  if (!opts.all && first && (!first.loggedIn || first.accepted === false)) {
    const elsewhere = first.source === 'store' && first.issuedBy !== null && first.baseUrl !== null && first.issuedBy !== originOf(first.baseUrl);
    throw new AuthError(
      first.loggedIn
        ? `The server refused the token of profile "${first.profile}".`
        : elsewhere
          ? `Profile "${first.profile}" is logged in at ${first.issuedBy}, not at its base URL ${first.baseUrl}: that login is not sent there.`
          : `Profile "${first.profile}" is not logged in.`,
      `Run \`opcli${profileFlag(first.profile)} auth login\`.`,
    );
  }
}

function registerToken(group: Command, deps: Deps): void {
  group
    .command('token')
    .description('Print a valid access token (refreshed first when needed) and nothing else')
    .addHelpText(
      'after',
      `
Examples:
  $ curl -H "Authorization: Bearer $(opcli auth token)" "$BASE_URL/v1/orders?size=5"
  $ opcli --profile staging auth token

The token is the only thing on stdout; keep it out of logs. Exit codes: 0 ok, 4 not logged in.`,
    )
    // The access token of the active profile (OPCLI_TOKEN when set), and nothing else on stdout.
    .action(async () => deps.out(`${await (await deps.tokens()).get()}\n`));
}

function registerRefresh(group: Command, deps: Deps): void {
  group
    .command('refresh')
    .description('Refresh the access token now (rotates the refresh token)')
    .option('--json', 'print the new login status as JSON on stdout')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli auth refresh
  $ opcli --profile staging auth refresh --json

Tokens are refreshed on their own when they expire within 5 minutes; this forces it.
A client-credentials login runs its grant again. Exit codes: 0 ok, 1 retry later, 4 log in again.`,
    )
    .action(async (flags: { json?: boolean }) => {
      await runRefresh(!!flags.json, deps);
    });
}

/** Forces a refresh of the active profile's token under the credentials lock. */
async function runRefresh(json: boolean, deps: Deps): Promise<void> {
  const profile = await deps.profile();
  const token = await createTokenSource(deps, profile).refresh();
  const status = loginStatus(profile, token, deps.now());
  deps.err(`Refreshed; the new access token expires ${relativeTime(status.expiresIn)}.\n`);
  if (json) printJson(deps, status);
}

export interface LogoutOptions {
  all: boolean;
  json: boolean;
}

function registerLogout(group: Command, deps: Deps): void {
  group
    .command('logout')
    .description('Revoke the tokens at the server and delete them locally')
    .option('--all', 'every profile')
    .option('--json', 'print what was revoked and removed as JSON on stdout')
    .addHelpText(
      'after',
      `
Examples:
  $ opcli auth logout
  $ opcli auth logout --all

Revokes the refresh token, then the access token, then deletes them from the credential store.
When revocation fails (server down) the tokens are still deleted here, with a warning.
The client secret and provider token stay (remove them with \`opcli config unset\`).`,
    )
    .action(async (flags: { all?: boolean; json?: boolean }) => {
      await runLogout({ all: !!flags.all, json: !!flags.json }, deps);
    });
}

/** Logs out the active profile, or every profile. */
async function runLogout(opts: LogoutOptions, deps: Deps): Promise<void> {
  const profiles = opts.all ? await allProfiles(deps) : [await deps.profile()];
  const results: LogoutResult[] = [];
  for (const profile of profiles) {
    const result = await logout(profile, { ...deps, warn: (message) => deps.err(`Warning: ${message}\n`) });
    const label = profileLabel(profile.name);
    if (!result.wasLoggedIn) deps.err(`Not logged in${label}; nothing to do.\n`);
    else deps.err(`Logged out${label}: tokens ${result.accessTokenRevoked && result.refreshTokenRevoked !== false ? 'revoked and ' : ''}deleted.\n`);
    results.push(result);
  }
  if (opts.json) printJson(deps, opts.all ? results : results[0]);
  if (deps.env.OPCLI_TOKEN) deps.err('Note: OPCLI_TOKEN is still set in the environment and is used until you unset it.\n');
}
