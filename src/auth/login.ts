/**
 * Every way to log in (browser with loopback or a pasted address, two-step, client credentials, a
 * token on stdin) and storing the result. No prompt and no print: the verb passes a notice sink and,
 * when someone can answer, a question to ask.
 */
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import type { CredentialStore, StoredToken } from '../config/credentials.js';
import { originOf, profileFlag, profileLabel } from '../config/origin.js';
import { DEFAULT_SCOPES, type ResolvedProfile, requireClient } from '../config/profile.js';
import { ApiError, AuthError, UsageError, ValidationError } from '../core/errors.js';
import type { HttpClient } from '../http/client.js';
import type { Redactor } from '../core/redact.js';
import { AccessToken } from '../schemas.js';
import { checkState, codeFromRedirect, parsePastedRedirect, StateMismatchError, challengeS256, createState, createVerifier } from '../oauth/callback.js';
import { type LoginStatus, loginStatus } from './describe.js';
import { CALLBACK_PATH, startCallbackServer } from '../oauth/loopback.js';
import { bindingOf, clientCredentials, oauthDescription, toStoredToken, tokenClient, tokenRefusal } from '../oauth/endpoints.js';
import { PENDING_TTL_MS, savePending, takePending, utcText } from './pending.js';
import { type Deadline, startDeadline, type Timers, whenAborted } from '../core/timers.js';

/** How to log in, as the verb parsed it. */
export interface LoginRequest {
  /** Scopes to ask for; undefined: the profile's (browser) or every granted one (client credentials). */
  scopes?: string[];
  /** Pin the loopback port (apps registered with a fixed redirect URI). */
  port?: number;
  /** False (--no-browser): only show the link (with `twoStep`, start a two-step login). */
  browser: boolean;
  /** With the browser off: save the pending login and return the link instead of waiting. */
  twoStep: boolean;
  /** How long to wait for the browser, in milliseconds. */
  timeoutMs: number;
  /** The redirect URL that finishes a two-step login. */
  complete?: string;
  clientCredentials: boolean;
  storeId?: string;
  withToken: boolean;
}

/** A question the verb puts to the person at the terminal; rejects when `signal` withdraws it. */
export interface RedirectQuestion {
  message: string;
  validate: (value: string) => true | string;
  signal: AbortSignal;
}

/** What a login needs from the outside world. */
export interface LoginEnv {
  http(): Promise<HttpClient>;
  credentials(): Promise<CredentialStore>;
  redactor: Redactor;
  now(): number;
  timers: Timers;
  /** Aborted on Ctrl-C. */
  signal: AbortSignal;
  configDir(): string;
  profile: ResolvedProfile;
  /** Opens a link in the browser; rejects, never crashes, when none can be opened. */
  openBrowser(url: string): Promise<void>;
  stdinIsTTY: boolean;
  readStdin(): Promise<string>;
  /** A line for the person (the verb writes it to stderr). */
  notice(text: string): void;
  /** Present only when someone can answer: asks for the address the browser ended on. */
  askRedirect?: (question: RedirectQuestion) => Promise<string>;
}

/** Step one of a two-step login, as printed for scripts. */
export interface TwoStepStart {
  authorize_url: string;
  redirect_uri: string;
  profile: string;
  scopes: string[];
  expires_at: string;
  complete_command: string;
}

export type LoginResult = { kind: 'two-step'; start: TwoStepStart } | { kind: 'logged-in'; status: LoginStatus };

/** Logs in the way the request says and stores the token. */
export async function login(req: LoginRequest, env: LoginEnv): Promise<LoginResult> {
  if (req.withToken) return loginWithToken(env);
  if (req.clientCredentials) return loginClientCredentials(env, req);
  if (req.complete !== undefined) return completeTwoStep(env, req.complete);
  return browserLogin(env, req);
}

function client(env: LoginEnv) {
  const c = requireClient(env.profile);
  env.redactor.add(c.clientSecret);
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

/** Rejects when the login's --timeout passes (by the run's timers: a test's manual clock moves it), or with the reason it was stopped. */
function timedOut(deadline: Deadline, timeoutMs: number): Promise<never> {
  return new Promise<never>((_, reject) => {
    whenAborted(deadline.signal, () =>
      reject(
        deadline.expired
          ? new AuthError(
              `No answer from the browser within ${seconds(timeoutMs)}; the login was stopped.`,
              'Run `opcli auth login` again (raise --timeout if you need longer), or use `--no-browser --json` and `--complete` to finish later.',
            )
          : deadline.signal.reason,
      ),
    );
  });
}

/** The authorization code from the address the user pastes; never settles once the question is withdrawn. */
function pastedCode(ask: NonNullable<LoginEnv['askRedirect']>, signal: AbortSignal, state: string): Promise<string> {
  return ask({
    message: 'Or paste the full address the browser ends on:',
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
  })
    .then((pasted) => codeFromRedirect(parsePastedRedirect(pasted), state))
    .catch((error) => {
      // A withdrawn prompt (the callback came first) is not an error; wait for the winner.
      if (signal.aborted) return new Promise<string>(() => {});
      // Ctrl-C at the prompt arrives here as "Cancelled." (src/core/prompter.ts).
      throw error;
    });
}

async function browserLogin(env: LoginEnv, req: LoginRequest): Promise<LoginResult> {
  const { profile } = env;
  const { clientId } = client(env);
  const scopes = req.scopes ?? (profile.scopes.length > 0 ? profile.scopes : [...DEFAULT_SCOPES]);
  const verifier = createVerifier();
  const state = createState();
  env.redactor.add(verifier);
  const challenge = challengeS256(verifier);

  if (!req.browser && req.twoStep) return startTwoStep(env, req, { clientId, scopes, verifier, state, challenge });

  const server = await startCallbackServer<string>({
    port: req.port,
    judge: (url) => {
      try {
        return { ok: true, value: codeFromRedirect(url, state) };
      } catch (error) {
        // A wrong or missing state is not this login's redirect (a stray or forged request): it gets
        // an error page and the login keeps waiting for the real one.
        return { ok: false, error: error as Error, keepWaiting: error instanceof StateMismatchError };
      }
    },
    onIgnored: () => env.notice('Ignored a request to the callback whose state does not match this login (a stray or forged link); still waiting.\n'),
  });
  const stop = new AbortController();
  const signal = AbortSignal.any([stop.signal, env.signal]);
  const deadline = startDeadline(env.timers, req.timeoutMs, signal);
  let code: string;
  try {
    const url = authorizeUrl(profile, clientId, server.redirectUri, scopes, challenge, state);
    env.notice(`Open this link in a browser to log in${profileLabel(profile.name)}:\n\n  ${url}\n\n`);
    env.notice(`Waiting for the browser's redirect to ${server.redirectUri} (up to ${seconds(req.timeoutMs)}; Ctrl-C to stop).\n`);
    const waits: Promise<string>[] = [
      server.outcome.then((o) => {
        if (!o.ok) throw o.error;
        return o.value;
      }),
      timedOut(deadline, req.timeoutMs),
    ];
    const ask = env.askRedirect;
    // Over SSH the browser cannot reach this machine's loopback port: the user pastes the address instead.
    if (ask) waits.push(pastedCode(ask, signal, state));
    if (req.browser) {
      env.openBrowser(url).catch((error) => {
        const next = ask
          ? 'open the link above on any device, then paste the address it ends on below'
          : 'open the link above yourself (or use `opcli auth login --no-browser --json` and `--complete` for a two-step login)';
        env.notice(`No browser was opened: ${(error as Error).message}. ${next[0]?.toUpperCase()}${next.slice(1)}.\n`);
      });
    }
    code = await Promise.race(waits);
  } finally {
    deadline.clear();
    stop.abort();
    await server.close();
  }
  env.redactor.add(code);
  return exchangeCode(env, code, server.redirectUri, verifier);
}

/** Step one of the two-step login: keeps the verifier and state (0600, 10 minutes) and returns the link. */
async function startTwoStep(
  env: LoginEnv,
  req: LoginRequest,
  p: { clientId: string; scopes: string[]; verifier: string; state: string; challenge: string },
): Promise<LoginResult> {
  const { profile } = env;
  const port = req.port ?? (await freePort());
  const redirectUri = `http://127.0.0.1:${port}${CALLBACK_PATH}`;
  const url = authorizeUrl(profile, p.clientId, redirectUri, p.scopes, p.challenge, p.state);
  const now = env.now();
  const expiresAt = now + PENDING_TTL_MS;
  savePending(env.configDir(), {
    profile: profile.name,
    state: p.state,
    verifier: p.verifier,
    redirectUri,
    scopes: p.scopes,
    createdAt: now,
    expiresAt,
    origin: originOf(profile.baseUrl),
  });
  return {
    kind: 'two-step',
    start: {
      authorize_url: url,
      redirect_uri: redirectUri,
      profile: profile.name,
      scopes: p.scopes,
      expires_at: new Date(expiresAt).toISOString(),
      // The URL carries the code: on standard input it stays out of `ps` and shell history.
      complete_command: `opcli${profileFlag(profile.name)} auth login --complete --stdin`,
    },
  };
}

/** Step two: checks the pasted redirect against the kept state and exchanges the code. */
async function completeTwoStep(env: LoginEnv, redirect: string): Promise<LoginResult> {
  client(env);
  const url = parsePastedRedirect(redirect);
  // The state is checked before the pending login is used up: a stranger's or mistyped address is
  // refused and the login stays, so the right address still completes it.
  const pending = takePending(env.configDir(), env.profile.name, env.now(), (waiting) => {
    // The code and the verifier go only to the server the login was started at; the login stays.
    const here = originOf(env.profile.baseUrl);
    if (waiting.origin !== undefined && waiting.origin !== here) {
      throw new AuthError(
        `The pending login of profile "${env.profile.name}" was started at ${waiting.origin}, but the base URL is now ${here ?? 'not set'}; its code is not sent there. Nothing was exchanged; that login is still waiting.`,
        `Complete it with the base URL at ${waiting.origin} again, or start a new one here with \`opcli auth login --no-browser --json\`.`,
      );
    }
    try {
      checkState(url, waiting.state);
    } catch (error) {
      if (!(error instanceof StateMismatchError)) throw error;
      const what = url.searchParams.get('state') ? 'carries a `state` that does not match' : 'carries no `state` for';
      throw new StateMismatchError(
        `The address ${what} the login started at ${utcText(waiting.createdAt)}${profileLabel(env.profile.name)}: refused as a possible forgery or a mistyped address. Nothing was exchanged; that login is still waiting.`,
        `Pass the address the browser ended on after approving that login's link, before ${utcText(waiting.expiresAt)} (\`opcli auth login --complete --stdin\`), or start a new one with \`opcli auth login --no-browser --json\`.`,
      );
    }
  });
  env.redactor.add(pending.verifier);
  const code = codeFromRedirect(url, pending.state);
  env.redactor.add(code);
  return exchangeCode(env, code, pending.redirectUri, pending.verifier);
}

/** Endpoint 1 with the authorization_code grant: the same redirect_uri, the PKCE verifier, no Authorization header. */
async function exchangeCode(env: LoginEnv, code: string, redirectUri: string, verifier: string): Promise<LoginResult> {
  const { clientId, clientSecret, oauth, started } = await tokenClient(env, env.profile);
  let token: StoredToken;
  try {
    const response = await oauth.token(
      { grant_type: 'authorization_code', client_id: clientId, client_secret: clientSecret, code, redirect_uri: redirectUri, code_verifier: verifier },
      env.signal,
    );
    token = toStoredToken(response, 'authorization_code', started, env.profile.storeId);
  } catch (error) {
    throw tokenRefusal(error, env.profile, 'Exchanging the authorization code');
  }
  return saveToken(env, token);
}

async function loginClientCredentials(env: LoginEnv, req: LoginRequest): Promise<LoginResult> {
  const { profile } = env;
  const storeId = req.storeId ?? profile.storeId;
  if (!storeId)
    throw new UsageError('--client-credentials needs the store to log in to.', 'Pass --store-id <id>, or set it once with `opcli config set store-id <id>`.');
  let token: StoredToken;
  try {
    token = await clientCredentials(env, profile, { storeId, scopes: req.scopes }, env.signal);
  } catch (error) {
    if (error instanceof ApiError && /not installed/i.test(oauthDescription(error))) {
      throw new AuthError(
        `The app is not installed on store ${storeId}, so it cannot log in there with client credentials (the server said: ${oauthDescription(error)}).`,
        'A merchant must install the app on that store first; or pass the id of a store where it is installed with --store-id.',
      );
    }
    throw tokenRefusal(error, profile, `The client-credentials grant for store ${storeId}`);
  }
  return saveToken(env, token);
}

async function loginWithToken(env: LoginEnv): Promise<LoginResult> {
  if (env.stdinIsTTY) {
    throw new UsageError(
      '--with-token reads the token from standard input, which is a terminal here.',
      'Pipe it in: `printf %s "$TOKEN" | opcli auth login --with-token`.',
    );
  }
  const raw = (await env.readStdin()).trim();
  env.redactor.add(raw);
  // CHOICE (docs/spec-choices.md#pasted-tokens): only an access token is stored, so a pasted secret is refused.
  if (!raw) throw new ValidationError('No token arrived on standard input.', [{ path: 'stdin', message: 'expected an access token (svc_at_…)' }]);
  if (/\s/.test(raw) || !AccessToken.safeParse(raw).success) {
    throw new ValidationError('What arrived on standard input is not an access token.', [
      { path: 'stdin', message: 'expected one access token starting with svc_at_' },
    ]);
  }
  return saveToken(env, { accessToken: raw, scopes: [], grant: 'token', storeId: env.profile.storeId, obtainedAt: env.now() });
}

/** Stores a new login bound to the base URL's origin and token endpoint; a client secret not bound yet is bound where it was sent. */
async function saveToken(env: LoginEnv, issued: StoredToken): Promise<LoginResult> {
  const token = { ...issued, ...bindingOf(env.profile) };
  env.redactor.add(token.accessToken, token.refreshToken);
  const store = await env.credentials();
  const sentSecret = token.grant !== 'token' && env.profile.sources.clientSecret === 'profile';
  await store.update(env.profile.name, (cur) => ({
    ...cur,
    token,
    ...(sentSecret && cur.clientSecret && !cur.clientSecretOrigin && token.origin ? { clientSecretOrigin: token.origin } : {}),
  }));
  return { kind: 'logged-in', status: loginStatus({ ...env.profile, envToken: undefined }, token, env.now()) };
}

/** A port that was free a moment ago, for the two-step redirect URI (nothing listens on it later). */
async function freePort(): Promise<number> {
  const srv = createServer().listen({ host: '127.0.0.1', port: 0 });
  await once(srv, 'listening');
  const { port } = srv.address() as AddressInfo;
  await new Promise((closed) => srv.close(closed));
  return port;
}

/** "300 seconds", "0.3 seconds". */
function seconds(ms: number): string {
  const s = ms >= 10_000 ? Math.round(ms / 1000) : Math.round(ms / 100) / 10;
  return `${s} second${s === 1 ? '' : 's'}`;
}
