import type { Command } from 'commander';
import type { StoredToken } from '../../config/credentials.js';
import type { ResolvedProfile } from '../../config/profile.js';
import type { Deps } from '../../deps.js';
import { AuthError, UsageError, ValidationError } from '../../errors.js';
import { parseDuration } from '../../flags.js';
import { textProblem } from '../../text/flag-text.js';

export interface LoginOptions {
  /** Scopes to ask for; undefined: the profile's (browser) or every granted one (client credentials). */
  scopes?: string[];
  /** Pin the loopback port (apps registered with a fixed redirect URI). */
  port?: number;
  /** False with --no-browser: only print the URL. */
  browser: boolean;
  /** How long to wait for the browser, in milliseconds. */
  timeoutMs: number;
  json: boolean;
  /** The redirect URL that finishes a two-step login. */
  complete?: string;
  clientCredentials: boolean;
  storeId?: string;
  withToken: boolean;
}

// CHOICE (docs/spec-choices.md#login-timeouts): how long a browser login waits for the redirect.
const DEFAULT_TIMEOUT_MS = 5 * 60_000;

/** Registers `auth login`. */
export function register(group: Command, deps: Deps): void {
  group
    .command('login')
    .description('Log in: browser (PKCE), headless two-step, client credentials, or a token from stdin')
    .option('--scopes <list>', "scopes to ask for, comma-separated (default: the profile's `scopes`, else read_orders,read_claims,read_store)")
    .option('--port <n>', "listen for the browser's redirect on this port of 127.0.0.1 (default: a free one)")
    .option('--no-browser', 'do not open a browser; print the link only (with --json: two-step login)')
    .option('--timeout <duration>', 'how long to wait for the browser, e.g. 90s or 5m', '5m')
    .option('--json', 'print the result (or the two-step start) as JSON on stdout')
    .option('--complete <redirect-url>', 'finish a two-step login with the URL the browser was sent to')
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
  $ opcli auth login --complete 'http://127.0.0.1:53123/callback?code=…&state=…'   # ... step two
  $ opcli auth login --client-credentials --store-id st_123
  $ printf '%s' "$TOKEN" | opcli auth login --with-token

The link is always printed on stderr. BROWSER (a command; %s stands for the link) picks the
browser. Over SSH, or on Linux with neither DISPLAY nor WAYLAND_DISPLAY, no browser is started:
open the link on any device, then paste the address the browser ends on at the prompt (the
browser there cannot reach this machine's 127.0.0.1).
Exit codes: 0 logged in, 2 bad flags, 4 refused or denied, 130 interrupted.`,
    )
    .action(async (flags: Record<string, string | boolean | undefined>) => {
      await run(parseFlags(flags), deps);
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
    complete: typeof flags.complete === 'string' ? flags.complete : undefined,
    clientCredentials: !!flags.clientCredentials,
    storeId: typeof flags.storeId === 'string' ? parseStoreId(flags.storeId) : undefined,
    withToken: !!flags.withToken,
  };
  const modes = [opts.complete !== undefined && '--complete', opts.clientCredentials && '--client-credentials', opts.withToken && '--with-token'].filter(
    Boolean,
  );
  if (modes.length > 1) throw new UsageError(`${modes.join(' and ')} cannot be combined: each is a different way to log in.`);
  if (opts.storeId !== undefined && !opts.clientCredentials)
    throw new UsageError(
      '--store-id goes with --client-credentials.',
      "Add --client-credentials, or set the profile's store with `opcli config set store-id`.",
    );
  if (opts.port !== undefined && (opts.clientCredentials || opts.withToken || opts.complete !== undefined)) {
    throw new UsageError('--port applies only to the browser login.');
  }
  if (opts.withToken && opts.scopes) throw new UsageError('--scopes cannot be used with --with-token: the token already has its scopes.');
  return opts;
}

function parseScopes(raw: string): string[] {
  const problem = /[\r\u0000-\u0008\u000b-\u001f\u007f-\u009f\uFFFD]/.test(raw) ? textProblem(raw.replace(/[\r]/g, '\u0001')) : undefined;
  if (problem)
    throw new ValidationError(`--scopes ${problem}.`, [
      { path: '--scopes', message: 'expected scope names separated by commas or spaces, e.g. read_orders,read_claims' },
    ]);
  const scopes = raw.split(/[\s,]+/).filter(Boolean);
  if (scopes.length === 0)
    throw new ValidationError('--scopes is empty.', [{ path: '--scopes', message: 'expected scope names separated by commas, e.g. read_orders,read_claims' }]);
  const bad = scopes.find((s) => !/^[A-Za-z0-9_:.-]+$/.test(s));
  if (bad) throw new ValidationError(`--scopes: "${bad}" is not a scope name.`, [{ path: '--scopes', message: 'expected letters, digits and _ : . - only' }]);
  return [...new Set(scopes)];
}

/** A store id goes to the token endpoint as typed: a blank or garbled one is a typing mistake, not a store. */
function parseStoreId(raw: string): string {
  const problem = textProblem(raw);
  if (problem)
    throw new UsageError(
      `--store-id ${problem}.`,
      "Pass the store id the app is installed on, e.g. --store-id st_123, or leave --store-id out to use the profile's store-id.",
    );
  return raw;
}

function parsePort(raw: string): number {
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 1 || port > 65535) {
    throw new ValidationError(`--port: "${raw}" is not a port.`, [{ path: '--port', message: 'expected a whole number from 1 to 65535' }]);
  }
  return port;
}

/** Logs in the way the options say and stores the token. */
export async function run(opts: LoginOptions, deps: Deps): Promise<void> {
  const profile = await deps.profile();
  if (profile.envToken) {
    deps.err('Warning: OPCLI_TOKEN is set; it overrides the stored login until you unset it.\n');
  }
  if (opts.withToken) return loginWithToken(deps, profile, opts);
  if (opts.clientCredentials) return loginClientCredentials(deps, profile, opts);
  if (opts.complete !== undefined) return completeTwoStep(deps, profile, opts, opts.complete);
  return browserLogin(deps, profile, opts);
}

async function client(deps: Deps, profile: ResolvedProfile) {
  const { requireClient } = await import('../../config/profile.js');
  const c = requireClient(profile);
  deps.redactor.add(c.clientSecret);
  return c;
}

/** The authorization request's URL (RFC 6749 4.1.1 with RFC 7636 S256). */
function authorizeUrl(profile: ResolvedProfile, clientId: string, redirectUri: string, scopes: string[], challenge: string, state: string): string {
  if (!profile.authorizeUrl) {
    throw new UsageError(
      `Profile "${profile.name}" has no base URL, so there is no consent page to open.`,
      'Run `opcli config set base-url https://…` (or `opcli config set authorize-url …`).',
    );
  }
  const url = new URL(profile.authorizeUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('redirect_uri', redirectUri);
  if (scopes.length > 0) url.searchParams.set('scope', scopes.join(' '));
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', challenge);
  url.searchParams.set('code_challenge_method', 'S256');
  return url.toString();
}

async function browserLogin(deps: Deps, profile: ResolvedProfile, opts: LoginOptions): Promise<void> {
  const [{ createVerifier, challengeS256, createState }, { startCallbackServer }, { codeFromRedirect, parsePastedRedirect, StateMismatchError }] =
    await Promise.all([import('../../auth/pkce.js'), import('../../auth/loopback.js'), import('../../auth/callback.js')]);
  const { clientId } = await client(deps, profile);
  const { DEFAULT_SCOPES } = await import('../../config/profile.js');
  const scopes = opts.scopes ?? (profile.scopes.length > 0 ? profile.scopes : [...DEFAULT_SCOPES]);
  const verifier = createVerifier();
  const state = createState();
  deps.redactor.add(verifier);
  const challenge = challengeS256(verifier);

  if (!opts.browser && opts.json) return startTwoStep(deps, profile, opts, { clientId, scopes, verifier, state, challenge });

  const server = await startCallbackServer<string>({
    port: opts.port,
    judge: (url) => {
      try {
        return { ok: true, value: codeFromRedirect(url, state) };
      } catch (error) {
        // A wrong or missing state is not this login's redirect (a stray or forged request): it gets
        // an error page and the login keeps waiting for the real one.
        return { ok: false, error: error as Error, keepWaiting: error instanceof StateMismatchError };
      }
    },
    onIgnored: () => deps.err('Ignored a request to the callback whose state does not match this login (a stray or forged link); still waiting.\n'),
  });
  const stop = new AbortController();
  const signal = AbortSignal.any([stop.signal, deps.signal]);
  let code: string;
  try {
    const url = authorizeUrl(profile, clientId, server.redirectUri, scopes, challenge, state);
    deps.err(`Open this link in a browser to log in${profile.name === 'default' ? '' : ` (profile "${profile.name}")`}:\n\n  ${url}\n\n`);
    deps.err(`Waiting for the browser's redirect to ${server.redirectUri} (up to ${seconds(opts.timeoutMs)}; Ctrl-C to stop).\n`);
    const waits: Promise<string>[] = [
      server.outcome.then((o) => {
        if (!o.ok) throw o.error;
        return o.value;
      }),
      deps.sleep(opts.timeoutMs, signal).then(() => {
        throw new AuthError(
          `No answer from the browser within ${seconds(opts.timeoutMs)}; the login was stopped.`,
          'Run `opcli auth login` again (raise --timeout if you need longer), or use `--no-browser --json` and `--complete` to finish later.',
        );
      }),
    ];
    if (deps.canPrompt()) {
      // Over SSH the browser cannot reach this machine's loopback port: the user pastes the address instead.
      waits.push(
        (async () => {
          const prompter = await deps.prompter();
          // The callback may have won while the prompt library loaded: then there is nothing to ask
          // (a prompt started with an aborted signal would hold the terminal and keep the process alive).
          if (signal.aborted) return new Promise<string>(() => {});
          const pasted = await prompter.input({
            message: 'Or paste the full address the browser ends on:',
            // The address carries the authorization code: not left in the terminal's scrollback.
            secret: true,
            signal,
            validate: (value) => {
              try {
                codeFromRedirect(parsePastedRedirect(value), state);
                return true;
              } catch (error) {
                // A refusal the server put in the redirect (access_denied, …) ends the login below.
                if (error instanceof AuthError && !(error instanceof StateMismatchError)) return true;
                return (error as Error).message;
              }
            },
          });
          return codeFromRedirect(parsePastedRedirect(pasted), state);
        })().catch((error) => {
          // A withdrawn prompt (the callback came first) is not an error; wait for the winner.
          if (signal.aborted) return new Promise<string>(() => {});
          // Ctrl-C at the prompt arrives here as "Cancelled." (src/prompter.ts).
          throw error;
        }),
      );
    }
    if (opts.browser) {
      deps.openBrowser(url).catch((error) => {
        const next = deps.canPrompt()
          ? 'open the link above on any device, then paste the address it ends on below'
          : 'open the link above yourself (or use `opcli auth login --no-browser --json` and `--complete` for a two-step login)';
        deps.err(`No browser was opened: ${(error as Error).message}. ${next[0]?.toUpperCase()}${next.slice(1)}.\n`);
      });
    }
    code = await Promise.race(waits);
  } finally {
    stop.abort();
    await server.close();
  }
  deps.redactor.add(code);
  await exchangeCode(deps, profile, opts, code, server.redirectUri, verifier);
}

/** Step one of the two-step login: prints the link and keeps the verifier and state (0600, 10 minutes). */
async function startTwoStep(
  deps: Deps,
  profile: ResolvedProfile,
  opts: LoginOptions,
  p: { clientId: string; scopes: string[]; verifier: string; state: string; challenge: string },
): Promise<void> {
  const [{ savePending, PENDING_TTL_MS }, { printJson }] = await Promise.all([import('../../auth/pending.js'), import('../../output.js')]);
  const port = opts.port ?? (await freePort());
  const redirectUri = `http://127.0.0.1:${port}/callback`;
  const url = authorizeUrl(profile, p.clientId, redirectUri, p.scopes, p.challenge, p.state);
  const now = deps.now();
  const expiresAt = now + PENDING_TTL_MS;
  savePending(deps.configDir(), { profile: profile.name, state: p.state, verifier: p.verifier, redirectUri, scopes: p.scopes, createdAt: now, expiresAt });
  printJson(deps, {
    authorize_url: url,
    redirect_uri: redirectUri,
    profile: profile.name,
    scopes: p.scopes,
    expires_at: new Date(expiresAt).toISOString(),
    complete_command: `opcli${profile.name === 'default' ? '' : ` --profile ${profile.name}`} auth login --complete '<the URL the browser ends on>'`,
  });
  deps.err('Open authorize_url in a browser, approve, then pass the address it ends on to `opcli auth login --complete` within 10 minutes.\n');
}

/** Step two: checks the pasted redirect against the kept state and exchanges the code. */
async function completeTwoStep(deps: Deps, profile: ResolvedProfile, opts: LoginOptions, redirect: string): Promise<void> {
  const [{ takePending }, { codeFromRedirect, parsePastedRedirect }] = await Promise.all([import('../../auth/pending.js'), import('../../auth/callback.js')]);
  await client(deps, profile);
  const url = parsePastedRedirect(redirect);
  const pending = takePending(deps.configDir(), profile.name, deps.now());
  deps.redactor.add(pending.verifier);
  const code = codeFromRedirect(url, pending.state);
  deps.redactor.add(code);
  await exchangeCode(deps, profile, opts, code, pending.redirectUri, pending.verifier);
}

/** Endpoint 1 with the authorization_code grant: the same redirect_uri, the PKCE verifier, no Authorization header. */
async function exchangeCode(deps: Deps, profile: ResolvedProfile, opts: LoginOptions, code: string, redirectUri: string, verifier: string): Promise<void> {
  const [{ oauthEndpoints, toStoredToken, tokenRefusal }, { clientId, clientSecret }] = await Promise.all([
    import('../../auth/oauth.js'),
    client(deps, profile),
  ]);
  const oauth = oauthEndpoints(await deps.http(), profile.baseUrl);
  const started = deps.now();
  let token: StoredToken;
  try {
    const response = await oauth.token(
      { grant_type: 'authorization_code', client_id: clientId, client_secret: clientSecret, code, redirect_uri: redirectUri, code_verifier: verifier },
      deps.signal,
    );
    token = toStoredToken(response, 'authorization_code', started, profile.storeId);
  } catch (error) {
    throw tokenRefusal(error, profile, 'Exchanging the authorization code');
  }
  await saveToken(deps, profile, token, opts);
}

async function loginClientCredentials(deps: Deps, profile: ResolvedProfile, opts: LoginOptions): Promise<void> {
  const storeId = opts.storeId ?? profile.storeId;
  if (!storeId)
    throw new UsageError('--client-credentials needs the store to log in to.', 'Pass --store-id <id>, or set it once with `opcli config set store-id <id>`.');
  const [{ oauthEndpoints, toStoredToken, oauthDescription, tokenRefusal }, { clientId, clientSecret }, { ApiError }] = await Promise.all([
    import('../../auth/oauth.js'),
    client(deps, profile),
    import('../../errors.js'),
  ]);
  const oauth = oauthEndpoints(await deps.http(), profile.baseUrl);
  const started = deps.now();
  let token: StoredToken;
  try {
    const response = await oauth.token(
      {
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
        store_id: storeId,
        ...(opts.scopes ? { scopes: opts.scopes } : {}),
      },
      deps.signal,
    );
    token = { ...toStoredToken(response, 'client_credentials', started, storeId), requestedScopes: opts.scopes };
  } catch (error) {
    if (error instanceof ApiError && /not installed/i.test(oauthDescription(error))) {
      throw new AuthError(
        `The app is not installed on store ${storeId}, so it cannot log in there with client credentials (the server said: ${oauthDescription(error)}).`,
        'A merchant must install the app on that store first; or pass the id of a store where it is installed with --store-id.',
      );
    }
    throw tokenRefusal(error, profile, `The client-credentials grant for store ${storeId}`);
  }
  await saveToken(deps, profile, token, opts);
}

async function loginWithToken(deps: Deps, profile: ResolvedProfile, opts: LoginOptions): Promise<void> {
  if (deps.io.stdinIsTTY) {
    throw new UsageError(
      '--with-token reads the token from standard input, which is a terminal here.',
      'Pipe it in: `printf %s "$TOKEN" | opcli auth login --with-token`.',
    );
  }
  const [{ readStdinText }, { AccessToken }] = await Promise.all([import('../../stdin.js'), import('../../schemas.js')]);
  const raw = (await readStdinText(deps)).trim();
  deps.redactor.add(raw);
  // CHOICE (docs/spec-choices.md#pasted-tokens): only an access token is stored, so a pasted secret is refused.
  if (!raw) throw new ValidationError('No token arrived on standard input.', [{ path: 'stdin', message: 'expected an access token (svc_at_…)' }]);
  if (/\s/.test(raw) || !AccessToken.safeParse(raw).success) {
    throw new ValidationError('What arrived on standard input is not an access token.', [
      { path: 'stdin', message: 'expected one access token starting with svc_at_' },
    ]);
  }
  await saveToken(deps, profile, { accessToken: raw, scopes: [], grant: 'token', storeId: profile.storeId, obtainedAt: deps.now() }, opts);
}

/** Stores a new login under the credentials lock and says so (stderr, or the status as JSON). */
async function saveToken(deps: Deps, profile: ResolvedProfile, token: StoredToken, opts: LoginOptions): Promise<void> {
  deps.redactor.add(token.accessToken);
  deps.redactor.add(token.refreshToken);
  const store = await deps.credentials();
  await store.update(profile.name, (cur) => ({ ...cur, token }));
  const [{ loginStatus, relativeTime }, { printJson }] = await Promise.all([import('../../auth/describe.js'), import('../../output.js')]);
  const status = loginStatus({ ...profile, envToken: undefined }, token, deps.now());
  const expiry = status.expiresIn === null ? 'unknown expiry' : `the access token expires ${relativeTime(status.expiresIn)}`;
  deps.err(
    `Logged in${profile.name === 'default' ? '' : ` (profile "${profile.name}")`}${status.scopes.length ? ` with scopes ${status.scopes.join(' ')}` : ''}; ${expiry}.\n`,
  );
  if (opts.json) printJson(deps, status);
}

/** A port that was free a moment ago, for the two-step redirect URI (nothing listens on it later). */
async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen({ host: '127.0.0.1', port: 0 }, () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** "300 seconds", "0.3 seconds". */
function seconds(ms: number): string {
  const s = ms >= 10_000 ? Math.round(ms / 1000) : Math.round(ms / 100) / 10;
  return `${s} second${s === 1 ? '' : 's'}`;
}
