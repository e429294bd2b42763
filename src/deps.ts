import { isAbsolute } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { ServiceApi } from './api/service.js';
import type { CredentialStore } from './config/credentials.js';
import type { ResolvedProfile } from './config/profile.js';
import type { SettingsStore } from './config/settings.js';
import type { HttpClient, TokenSource } from './http/client.js';
import { UsageError } from './errors.js';
import { Redactor } from './redact.js';
import { escapeInvisible } from './text/safe.js';
import { VERSION } from './version.js';

/** The three streams with what is known about them. stderr output is always redacted. */
export interface IO {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  /** Colour on stdout (a TTY, and neither NO_COLOR nor --no-color). */
  colorStdout: boolean;
  /** Colour on stderr. */
  colorStderr: boolean;
}

/** Options that apply to every command. */
export interface Globals {
  profile?: string;
  verbose: boolean;
  /** False with --no-input: never prompt. */
  input: boolean;
  /** --progress, else OPCLI_PROGRESS, else the `progress` setting (default auto: src/text/progress.ts). */
  progress?: 'auto' | 'plain' | 'none';
  /** The accessible mode (OPCLI_ACCESSIBLE, else the `accessible` setting): nothing redrawn, choices as numbered lists. */
  accessible: boolean;
}

/** A question asked on the terminal; tests inject their own answers. */
export interface Prompter {
  /** `signal` withdraws the question (the prompt rejects), e.g. when the login callback arrived first. */
  input(options: {
    message: string;
    default?: string;
    validate?: (value: string) => true | string;
    signal?: AbortSignal /** Remove the question and the answer from the screen once answered (the answer is secret). */;
    secret?: boolean;
  }): Promise<string>;
  password(options: { message: string; validate?: (value: string) => true | string }): Promise<string>;
  confirm(options: { message: string; default?: boolean }): Promise<boolean>;
  select<T extends string>(options: { message: string; choices: { name: string; value: T; description?: string }[]; default?: T }): Promise<T>;
}

/**
 * Everything a command uses from the outside world, handed in rather than reached for, created
 * lazily so a command pays only for what it uses. Tests build their own with `createDeps`.
 */
export interface Deps {
  io: IO;
  env: Record<string, string | undefined>;
  cwd: string;
  globals: Globals;
  redactor: Redactor;
  /** Aborted on Ctrl-C. */
  signal: AbortSignal;
  /** Aborted on a second Ctrl-C: stop at once (a listener may still print a summary, synchronously). */
  stopNow: AbortSignal;
  /** The clock and timers every wait and deadline of the run goes through (`now` and `sleep` read them). */
  timers: Timers;
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Writes data to stdout. */
  out(text: string): void;
  /** Writes a notice to stderr, redacted. */
  err(text: string): void;
  /** Writes a --verbose line to stderr (redacted); no-op otherwise. */
  debug(text: string): void;
  configDir(): string;
  settings(): Promise<SettingsStore>;
  credentials(): Promise<CredentialStore>;
  /** The active profile with environment overrides. */
  profile(): Promise<ResolvedProfile>;
  /** The bearer token source of the active profile. */
  tokens(): Promise<TokenSource>;
  /** The HTTP client of the active profile (one keep-alive pool per process). */
  http(): Promise<HttpClient>;
  /** The spec's endpoints over `http()`. */
  api(): Promise<ServiceApi>;
  prompter(): Promise<Prompter>;
  /** Whether a question can be asked: a TTY on stdin and stderr, no --no-input, no CI. */
  canPrompt(): boolean;
  /**
   * Opens a link in the browser (BROWSER honoured). Rejects, never crashes, when none can be
   * opened: decided up front (SSH, no display) or after a failed start.
   */
  openBrowser(url: string): Promise<void>;
  /** Closes pools and timers at the end of a run. */
  dispose(): Promise<void>;
}

/** What a caller may pass to `createDeps`; anything left out gets the real implementation. */
export interface DepsInit {
  /** Standard input, or a function giving it (process.stdin costs start-up time when touched). */
  stdin: Readable | (() => Readable);
  stdout: Writable;
  stderr: Writable;
  stdinIsTTY?: boolean;
  stdoutIsTTY?: boolean;
  stderrIsTTY?: boolean;
  env: Record<string, string | undefined>;
  cwd: string;
  signal?: AbortSignal;
  /** Aborted on a second Ctrl-C. */
  stopNow?: AbortSignal;
  /** The clock and timers of the run (default: the wall clock); `now` and `sleep` default to them. */
  timers?: Timers;
  /** Overrides the clock reading (default: `timers.now`). */
  now?: () => number;
  /**
   * Overrides how the run sleeps (default: a timer on `timers`). A test on a manual clock may pass
   * one that moves the clock forward instead, so every wait passes at once in virtual time.
   */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  prompter?: Prompter;
  openBrowser?: (url: string) => Promise<void>;
  /** Overrides for the HTTP client (timeouts, retries), mainly for tests. */
  http?: { timeoutMs?: number; maxRetries?: number; maxRetryAfterMs?: number };
  /** Replace the token source (the auth layer installs refresh this way). */
  tokenSource?: (deps: Deps, profile: ResolvedProfile) => Promise<TokenSource>;
}

/**
 * The clock and timers of a run: the wall clock by default. A test passes a manual clock (the
 * sandbox's `manualClock()` has this shape, so both can share one) and every wait and deadline of
 * the run then happens in virtual time.
 */
export interface Timers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Real time and real timers. */
export const realTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** A sleep on `timers` that wakes early (rejecting with the signal's reason) when the signal aborts. */
export function sleepOn(timers: Timers): (ms: number, signal?: AbortSignal) => Promise<void> {
  return (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      const timer = timers.setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        timers.clearTimeout(timer);
        reject(signal?.reason ?? new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
}

/** Sleeps on the wall clock, waking early (with an AbortError) when the signal aborts. */
export const abortableSleep = sleepOn(realTimers);

/** A time limit on a piece of work, kept by a run's timers (see `startDeadline`). */
export interface Deadline {
  /** Aborts when the time is up (with a TimeoutError-like reason) or when the parent signal aborts. */
  readonly signal: AbortSignal;
  /** True once the time is up (not when only the parent aborted). */
  readonly expired: boolean;
  /** Ends the deadline (call it when the work is done, so no timer is left behind). */
  clear(): void;
}

/**
 * A deadline `ms` from now on `timers`, for work that is bounded in time (a poll's lookup, a login
 * waiting for the browser). On the injected timers, not `AbortSignal.timeout`, so a test's manual
 * clock decides when it passes. `parent` (Ctrl-C) aborts it too.
 */
export function startDeadline(timers: Timers, ms: number, parent?: AbortSignal): Deadline {
  const own = new AbortController();
  let expired = false;
  const timer = timers.setTimeout(
    () => {
      expired = true;
      own.abort(Object.assign(new Error(`the deadline of ${ms} ms passed`), { name: 'TimeoutError' }));
    },
    Math.max(0, ms),
  );
  const signal = parent ? AbortSignal.any([parent, own.signal]) : own.signal;
  return {
    signal,
    get expired() {
      return expired;
    },
    clear: () => timers.clearTimeout(timer),
  };
}

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= make().catch((error) => {
      value = undefined;
      throw error;
    });
    return value;
  };
}

/** Builds the dependencies of one run. */
export function createDeps(init: DepsInit): Deps {
  const env = init.env;
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  const stdoutIsTTY = init.stdoutIsTTY ?? false;
  const stderrIsTTY = init.stderrIsTTY ?? false;
  const stdinOf = init.stdin;
  let stdin: Readable | undefined = typeof stdinOf === 'function' ? undefined : stdinOf;
  const io: IO = {
    get stdin(): Readable {
      stdin ??= (stdinOf as () => Readable)();
      return stdin;
    },
    stdout: init.stdout,
    stderr: init.stderr,
    stdinIsTTY: init.stdinIsTTY ?? false,
    stdoutIsTTY,
    stderrIsTTY,
    colorStdout: stdoutIsTTY && !noColor && env.TERM !== 'dumb',
    colorStderr: stderrIsTTY && !noColor && env.TERM !== 'dumb',
  };
  const redactor = new Redactor();
  const globals: Globals = { verbose: false, input: true, accessible: false };
  const timers = init.timers ?? realTimers;
  const now = init.now ?? timers.now;
  const sleep = init.sleep ?? sleepOn(timers);
  const signal = init.signal ?? new AbortController().signal;
  let httpClient: HttpClient | undefined;

  const deps: Deps = {
    io,
    env,
    cwd: init.cwd,
    globals,
    redactor,
    signal,
    stopNow: init.stopNow ?? new AbortController().signal,
    timers,
    now,
    sleep,
    // Bidi controls and invisible characters never reach a terminal raw, whatever path forgot safeText
    // (src/text/safe.ts); stdout to a pipe stays exact.
    out: (text) => {
      io.stdout.write(io.stdoutIsTTY ? escapeInvisible(text) : text);
    },
    err: (text) => {
      io.stderr.write(escapeInvisible(redactor.redact(text)));
    },
    debug: (text) => {
      if (globals.verbose) io.stderr.write(escapeInvisible(redactor.redact(`${text}\n`)));
    },
    configDir: () => resolveDir(env),
    settings: once(async () => {
      const { SettingsStore } = await import('./config/settings.js');
      return SettingsStore.open(deps.configDir());
    }),
    credentials: once(async () => {
      const { CredentialStore } = await import('./config/credentials.js');
      return CredentialStore.open(deps.configDir(), (line) => io.stderr.write(`${line}\n`));
    }),
    profile: once(async () => {
      const [{ pickProfileName, requireKnownProfile, resolveProfile }, { SettingsStore }] = await Promise.all([
        import('./config/profile.js'),
        import('./config/settings.js'),
      ]);
      // Read only: resolving the profile never writes, so it does not load the settings writer (conf).
      const settings = await SettingsStore.openForReading(deps.configDir());
      const name = pickProfileName(globals.profile, env, settings.currentProfile());
      const credentials = await deps.credentials();
      requireKnownProfile(name, [...new Set([...settings.listProfiles(), ...credentials.profiles()])], globals.profile, env);
      const secrets = credentials.read(name);
      const profile = resolveProfile(name, settings.getProfile(name), secrets, env);
      for (const warning of profile.warnings) io.stderr.write(`${warning}\n`);
      redactor.add(profile.clientSecret);
      redactor.add(profile.envToken);
      redactor.add(profile.provider.token);
      redactor.add(secrets.token?.accessToken);
      redactor.add(secrets.token?.refreshToken);
      return profile;
    }),
    tokens: once(async () => {
      const profile = await deps.profile();
      if (init.tokenSource) return init.tokenSource(deps, profile);
      const { createTokenSource } = await import('./auth/token-source.js');
      return createTokenSource(deps, profile);
    }),
    http: once(async () => {
      const [{ HttpClient }, { readProxyConfig, routeFor }, profile] = await Promise.all([
        import('./http/client.js'),
        import('./http/proxy.js'),
        deps.profile(),
      ]);
      // Proxies and trust from the run's environment (process.env no longer holds proxy passwords).
      const proxies = readProxyConfig(profile.network, env, (line) => io.stderr.write(`${redactor.redact(line)}\n`));
      for (const proxy of [proxies.http, proxies.https]) {
        redactor.add(proxy?.url.password);
        redactor.add(proxy?.url.password ? decodeURIComponent(proxy.url.password) : undefined);
      }
      // The trust module (node:tls, node:crypto) is loaded only when a CA file is named: a one-off without one never pays for it.
      const ca =
        profile.network.caFile || env.OPCLI_CA_FILE !== undefined
          ? (await import('./http/trust.js')).trustedCertificates(profile.network.caFile, env, deps.cwd)
          : undefined;
      const lazyTokens: TokenSource = {
        get: async (target) => {
          const token = await (await deps.tokens()).get(target);
          redactor.add(token);
          return token;
        },
        refreshAfterUnauthorized: async (sent) => {
          const source = await deps.tokens();
          const next = await source.refreshAfterUnauthorized?.(sent);
          redactor.add(next);
          return next;
        },
      };
      httpClient = new HttpClient({
        baseUrl: profile.baseUrl,
        userAgent: `opcli/${VERSION}`,
        tokens: lazyTokens,
        redactor,
        trace: globals.verbose ? (line) => io.stderr.write(`${escapeInvisible(redactor.redact(line))}\n`) : undefined,
        notice: (line) => io.stderr.write(`${redactor.redact(line)}\n`),
        sleep,
        now,
        timeoutMs: init.http?.timeoutMs ?? numberEnv(env.OPCLI_HTTP_TIMEOUT, 'OPCLI_HTTP_TIMEOUT'),
        maxRetries: init.http?.maxRetries ?? numberEnv(env.OPCLI_HTTP_RETRIES, 'OPCLI_HTTP_RETRIES'),
        maxRetryAfterMs: init.http?.maxRetryAfterMs,
        deadlineMs: positiveEnv(env.OPCLI_HTTP_DEADLINE, 'OPCLI_HTTP_DEADLINE', 'milliseconds, e.g. 120000'),
        maxBodyBytes: positiveEnv(env.OPCLI_HTTP_MAX_BODY, 'OPCLI_HTTP_MAX_BODY', 'bytes, e.g. 67108864 for 64 MiB'),
        maxSmallBodyBytes: positiveEnv(env.OPCLI_HTTP_MAX_SMALL_BODY, 'OPCLI_HTTP_MAX_SMALL_BODY', 'bytes, e.g. 1048576 for 1 MiB'),
        timers: deps.timers,
        route: proxies.http || proxies.https ? (url) => routeFor(proxies, url) : undefined,
        ca,
        notProcessedStatuses: profile.notProcessedStatuses,
      });
      return httpClient;
    }),
    api: once(async () => {
      const { createServiceApi } = await import('./api/service.js');
      return createServiceApi(await deps.http());
    }),
    prompter: once(async () => {
      if (init.prompter) return init.prompter;
      const { createInquirerPrompter } = await import('./prompter.js');
      return createInquirerPrompter(io, { accessible: globals.accessible, signal });
    }),
    // The terminal fact alone decides; a test that answers prompts says it runs on a terminal (stdinIsTTY, stderrIsTTY).
    canPrompt: () => io.stdinIsTTY && io.stderrIsTTY && globals.input && !isCI(env),
    openBrowser: async (url) => {
      if (init.openBrowser) return init.openBrowser(url);
      const { openInBrowser } = await import('./auth/browser.js');
      await openInBrowser(url, env, (message) => io.stderr.write(`The browser did not open (${message}); open the link above yourself.\n`));
    },
    dispose: async () => {
      await httpClient?.close();
    },
  };
  return deps;
}

/** A whole-number OPCLI_* variable; anything else is a usage error naming it (not silently ignored). */
function numberEnv(value: string | undefined, name: string, unit?: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (value.trim() === '') throw new UsageError(`${name} is set but holds only whitespace.`, `Unset it (\`unset ${name}\`) or give it a whole number.`);
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

/**
 * The config folder: OPCLI_CONFIG_DIR, else $XDG_CONFIG_HOME/opcli, else ~/.config/opcli. A relative
 * XDG_CONFIG_HOME is ignored, as the XDG Base Directory spec says (it would put the secrets in
 * whatever folder the command runs from).
 */
function resolveDir(env: Record<string, string | undefined>): string {
  if (env.OPCLI_CONFIG_DIR) return env.OPCLI_CONFIG_DIR;
  const home = env.HOME || env.USERPROFILE || '.';
  const xdg = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : `${home}/.config`;
  return `${xdg}/opcli`;
}
