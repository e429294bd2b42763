import type { Readable, Writable } from 'node:stream';
import { createServiceApi, type ServiceApi } from '../api/service.js';
import { createTokenSource } from '../oauth/token-source.js';
import { CredentialStore } from '../config/credentials.js';
import { pickProfileName, type ResolvedProfile, requireKnownProfile, resolveProfile } from '../config/profile.js';
import { untilSandboxWrote } from '../config/sandbox-starting.js';
import { SettingsStore } from '../config/settings.js';
import { configDirOf } from '../config/config-home.js';
import { httpLimits, isCI } from '../core/env.js';
import { HttpClient, readProxyConfig, routeFor, type TokenSource } from '../http/client.js';
import { platformEnv } from '../core/platform.js';
import { createInquirerPrompter } from '../core/prompter.js';
import { Redactor } from '../core/redact.js';
import { escapeInvisible } from '../text/safe.js';
import { type PaceClock, realPaceClock, realTimers, sleepOn, type Timers } from '../core/timers.js';
import type { Globals, IO, Prompter } from '../core/ports.js';
export type { Prompter } from '../core/ports.js';

/** Everything a command uses from the outside world, handed in and created lazily (gh's Factory); tests build their own. */
export interface Deps {
  io: IO;
  /** The environment, read by the platform's rules (src/core/platform.ts: names in any case on Windows). */
  env: Record<string, string | undefined>;
  cwd: string;
  /** The operating system whose rules paths, folders and hints follow (a test passes another). */
  platform: NodeJS.Platform;
  globals: Globals;
  redactor: Redactor;
  signal: AbortSignal;
  /** Aborted on a second Ctrl-C: stop at once (a listener may still print a summary, synchronously). */
  stopNow: AbortSignal;
  /** The clock and timers every wait and deadline of the run goes through (`now` and `sleep` read them). */
  timers: Timers;
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** The clock and sleeps that pace many requests: finer than `now` on a real run, the injected ones in a test. */
  pace: PaceClock;
  out(text: string): void;
  /** Writes a notice to stderr, redacted. */
  err(text: string): void;
  /** Writes a --verbose line to stderr (redacted); no-op otherwise. */
  debug(text: string): void;
  configDir(): string;
  settings(): Promise<SettingsStore>;
  credentials(): Promise<CredentialStore>;
  profile(): Promise<ResolvedProfile>;
  tokens(): Promise<TokenSource>;
  /** The HTTP client of the active profile (one keep-alive pool per process). */
  http(): Promise<HttpClient>;
  /** The spec's endpoints over `http()`. */
  api(): Promise<ServiceApi>;
  prompter(): Promise<Prompter>;
  /** Whether a question can be asked: a TTY on stdin and stderr, no --no-input, no CI. */
  canPrompt(): boolean;
  /** A browser opener a test (or the demo) gives; `auth login` otherwise loads the real one (src/oauth/browser.ts). */
  openBrowser?: (url: string) => Promise<void>;
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
  /** The operating system to follow (default: the one running). */
  platform?: NodeJS.Platform;
  /** The config folder of the run when the entry settled it (on Windows, after the one-time move: src/config/config-move.ts). */
  configDir?: string;
  signal?: AbortSignal;
  /** Aborted on a second Ctrl-C. */
  stopNow?: AbortSignal;
  /** The clock and timers of the run (default: the wall clock); `now` and `sleep` default to them. */
  timers?: Timers;
  /** Overrides the clock reading (default: `timers.now`). */
  now?: () => number;
  /** Overrides how the run sleeps (default: a timer on `timers`); a test may move its manual clock instead. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  prompter?: Prompter;
  openBrowser?: (url: string) => Promise<void>;
  /** Overrides for the HTTP client (timeouts, retries), mainly for tests. */
  http?: { timeoutMs?: number; maxRetries?: number; maxRetryAfterMs?: number };
  /** Replace the token source (the auth layer installs refresh this way). */
  tokenSource?: (deps: Deps, profile: ResolvedProfile) => Promise<TokenSource>;
}

/** A value made on first use and kept; a failed attempt is forgotten so the next call tries again. */
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

/** The streams of a run and what is known about them (stdin is read from its function on first use). */
function createIO(init: DepsInit, env: Record<string, string | undefined>): IO {
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  const stdoutIsTTY = init.stdoutIsTTY ?? false;
  const stderrIsTTY = init.stderrIsTTY ?? false;
  const stdinOf = init.stdin;
  let stdin: Readable | undefined = typeof stdinOf === 'function' ? undefined : stdinOf;
  return {
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
}

/** The active profile with the environment's overrides; its secrets join the redactor. */
async function readProfile(deps: Deps): Promise<ResolvedProfile> {
  const { globals, env, io, redactor } = deps;
  // Read only: resolving the profile never writes.
  let settings = await SettingsStore.openForReading(deps.configDir());
  const name = pickProfileName(globals.profile, env, settings.currentProfile());
  // A sandbox still starting may be writing this profile (`opcli sandbox --write-profile NAME &`): read what it wrote.
  if (await untilSandboxWrote(deps.configDir(), name, deps)) settings = await SettingsStore.openForReading(deps.configDir());
  const credentials = await deps.credentials();
  requireKnownProfile(name, knownProfiles(settings, credentials), globals.profile, env);
  const secrets = credentials.read(name);
  const profile = resolveProfile(name, settings.getProfile(name), secrets, env);
  for (const warning of profile.warnings) io.stderr.write(`${warning}\n`);
  redactor.add(profile.clientSecret);
  redactor.add(profile.envToken);
  redactor.add(profile.provider.token);
  redactor.add(profile.record?.password);
  redactor.add(secrets.token?.accessToken);
  redactor.add(secrets.token?.refreshToken);
  return profile;
}

/** Every profile that has settings or credentials (settings' first). */
export function knownProfiles(settings: SettingsStore, credentials: CredentialStore): string[] {
  return [...new Set([...settings.listProfiles(), ...credentials.profiles()])];
}

/** The profile's token source, made on first use, with every token it hands out added to the redactor. */
function redactedTokens(deps: Deps): TokenSource {
  return {
    get: async (target) => {
      const token = await (await deps.tokens()).get(target);
      deps.redactor.add(token);
      return token;
    },
    refreshAfterUnauthorized: async (sent) => {
      const source = await deps.tokens();
      const next = await source.refreshAfterUnauthorized?.(sent);
      deps.redactor.add(next);
      return next;
    },
  };
}

/** The HTTP client of the active profile: its base URL, proxies and trust, limits from the environment. */
async function createHttpClient(deps: Deps, init: DepsInit): Promise<HttpClient> {
  const { env, io, redactor } = deps;
  const profile = await deps.profile();
  // Proxies and trust from the run's environment (process.env no longer holds proxy passwords).
  const proxies = readProxyConfig(profile.network, env, (line) => io.stderr.write(`${redactor.redact(line)}\n`));
  for (const proxy of [proxies.http, proxies.https]) {
    redactor.add(proxy?.url.password);
    redactor.add(proxy?.url.password ? decodeURIComponent(proxy.url.password) : undefined);
  }
  // Start-up fast path (ARCHITECTURE.md, the HTTP core): the trust module (node:tls, node:http) only with a CA file.
  const ca =
    profile.network.caFile || env.OPCLI_CA_FILE !== undefined
      ? (await import('../http/trust.js')).trustedCertificates(profile.network.caFile, env, deps.cwd)
      : undefined;
  return new HttpClient({
    baseUrl: profile.baseUrl,
    userAgent: `opcli/${VERSION}`,
    tokens: redactedTokens(deps),
    trace: deps.globals.verbose ? (line) => io.stderr.write(`${escapeInvisible(redactor.redact(line))}\n`) : undefined,
    notice: (line) => io.stderr.write(`${redactor.redact(line)}\n`),
    sleep: deps.sleep,
    now: deps.now,
    ...httpLimits(env, init.http),
    timers: deps.timers,
    route: proxies.http || proxies.https ? (url) => routeFor(proxies, url) : undefined,
    ca,
    notProcessedStatuses: profile.notProcessedStatuses,
  });
}

export function createDeps(init: DepsInit): Deps {
  const platform = init.platform ?? process.platform;
  const env = platformEnv(init.env, platform);
  const io = createIO(init, env);
  const redactor = new Redactor();
  const globals: Globals = { verbose: false, input: true, accessible: false };
  const timers = init.timers ?? realTimers;
  const now = init.now ?? timers.now;
  const sleep = init.sleep ?? sleepOn(timers);
  // A test that brings its own clock paces on it too (virtual time); a real run on the finer clock.
  const injected = init.timers !== undefined || init.now !== undefined || init.sleep !== undefined;
  let httpClient: HttpClient | undefined;
  const deps: Deps = {
    io,
    env,
    cwd: init.cwd,
    platform,
    globals,
    redactor,
    signal: init.signal ?? new AbortController().signal,
    stopNow: init.stopNow ?? new AbortController().signal,
    timers,
    now,
    sleep,
    pace: injected ? { now, sleep } : realPaceClock,
    // Bidi controls and invisible characters never reach a terminal raw, whatever path forgot safeText; a pipe stays exact.
    out: (text) => {
      io.stdout.write(io.stdoutIsTTY ? escapeInvisible(text) : text);
    },
    err: (text) => {
      io.stderr.write(escapeInvisible(redactor.redact(text)));
    },
    debug: (text) => {
      if (globals.verbose) io.stderr.write(escapeInvisible(redactor.redact(`${text}\n`)));
    },
    configDir: () => init.configDir ?? configDirOf(env, platform),
    settings: once(() => SettingsStore.open(deps.configDir())),
    credentials: once(() => CredentialStore.open(deps.configDir(), (line) => io.stderr.write(`${line}\n`))),
    profile: once(() => readProfile(deps)),
    tokens: once(async () => {
      const profile = await deps.profile();
      return init.tokenSource ? init.tokenSource(deps, profile) : createTokenSource(deps, profile);
    }),
    http: once(async () => {
      httpClient = await createHttpClient(deps, init);
      return httpClient;
    }),
    api: once(async () => createServiceApi(await deps.http())),
    prompter: once(async () => init.prompter ?? createInquirerPrompter(io, { accessible: globals.accessible, signal: deps.signal })),
    // The terminal fact alone decides; a test that answers prompts says it runs on a terminal (stdinIsTTY, stderrIsTTY).
    canPrompt: () => io.stdinIsTTY && io.stderrIsTTY && globals.input && !isCI(env),
    openBrowser: init.openBrowser,
    dispose: async () => {
      await httpClient?.close();
    },
  };
  return deps;
}

import pkg from '../../package.json' with { type: 'json' };

/** opcli's version, from package.json (bundled at build time). */
export const VERSION: string = pkg.version;
