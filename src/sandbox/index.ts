/** The built-in sandbox: a local emulator of the API, the gift card provider and the storefront. */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFaults } from './faults.js';
import { newAdminSecret, ownOrigins } from './guard.js';
import { createRecorder, createSandboxServer } from './server.js';
import { mintSessionToken } from './session.js';
import { createState, giftCardView, type SandboxState, zeroCounters } from './state.js';
import { orderAt } from './orders.js';
import { settleTriggers } from './provider.js';
import { createRateLimiter } from './rate-limit.js';
import { orderIndex } from './seed.js';
import { checkAccessToken, issueTokens, newFamily } from './tokens.js';
import type { Sandbox, SandboxOptions } from './types.js';
export { type ManualClock, manualClock, type SandboxClock } from './clock.js';
export type { RateLimit } from './rate-limit.js';
export type * from './types.js';

/** The port bound on 127.0.0.1; rejects when it is taken. */
async function listen(server: Server, port: number): Promise<number> {
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** The settings a running sandbox may change that live in its state. */
function configure(state: SandboxState, settings: Parameters<Sandbox['configure']>[0]): void {
  for (const key of ['accessTokenTtl', 'triggerDelayMs', 'autoApprove', 'providerErrorShape', 'unknownCustomer'] as const) {
    if (settings[key] !== undefined) Object.assign(state.settings, { [key]: settings[key] });
  }
}

/** In place: callers may hold the counters object. */
function resetCounters(state: SandboxState): void {
  const zero = zeroCounters();
  Object.assign(state.counters, zero, { creditsPosted: state.counters.creditsPosted });
  Object.assign(state.counters.creditsPosted, zero.creditsPosted);
}

/** Timers cleared, pending trigger credits dropped, every connection closed. */
function stop(state: SandboxState, server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    for (const timer of state.timers) state.clock.clearTimeout(timer);
    state.pendingTriggers = [];
    state.timers.clear();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** A new login's token pair, without the OAuth dance. */
function freshTokens(state: SandboxState, opts: Parameters<Sandbox['issueTokens']>[0]): ReturnType<Sandbox['issueTokens']> {
  const scopes = opts?.scopes ?? [...state.store.scopes];
  const issued = issueTokens(state, newFamily(state), scopes, { withRefresh: true, ttl: opts?.accessTokenTtl });
  return { ...issued, refresh_token: issued.refresh_token as string };
}

/** Trigger credits due are posted first. */
function loyaltyCard(state: SandboxState, customerId: string): ReturnType<Sandbox['loyaltyCard']> {
  settleTriggers(state);
  const id = state.customers.get(customerId)?.loyaltyCardId;
  const card = id ? state.giftCards.get(id) : undefined;
  return card ? { giftCardId: card.giftCardId, balance: card.balanceCents / 100, code: card.code } : undefined;
}

/** Resolves once it listens on 127.0.0.1. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const state = createState(options);
  const recorder = createRecorder(options.maxRecorded ?? 200_000);
  const faults = createFaults();
  const limiter = createRateLimiter(state.now);
  limiter.set(options.rateLimit ?? null);
  let latencyMs = options.latencyMs ?? 0;
  let sandbox: Sandbox | undefined;
  const guard = { origins: new Set<string>(), adminSecret: newAdminSecret() };
  const server = createSandboxServer({ state, recorder, faults, limiter, latencyMs: () => latencyMs, sandbox: () => sandbox as Sandbox, guard: () => guard });
  const port = await listen(server, options.port ?? 0);
  guard.origins = ownOrigins(port);
  const url = `http://127.0.0.1:${port}`;
  let closing: Promise<void> | undefined;

  sandbox = {
    url,
    adminSecret: guard.adminSecret,
    authorizeUrl: `${url}/v1/oauth/authorize`,
    providerUrl: `${url}/provider`,
    triggerUrl: `${url}/provider/v2/workflows/execute`,
    nativeUrl: `${url}/storefront`,
    providerName: state.providerName,
    client: state.client,
    store: state.store,
    otherStoreId: state.otherStoreId,
    customers: state.seededCustomers,
    get counters() {
      settleTriggers(state);
      return state.counters;
    },
    get requests() {
      return recorder.list;
    },
    fixtures: state.fixtures,
    get giftCards() {
      settleTriggers(state);
      return [...state.giftCards.values()].map(giftCardView);
    },
    get claims() {
      return state.claims;
    },
    get variants() {
      return state.variants;
    },
    order(sourceOrderId) {
      const index = orderIndex(sourceOrderId, state.orderCount);
      return index < 0 ? undefined : orderAt(state, index);
    },
    setFaults(rules) {
      faults.set(rules);
    },
    configure(settings) {
      configure(state, settings);
      if (settings.rateLimit !== undefined) limiter.set(settings.rateLimit);
      if (settings.latencyMs !== undefined) latencyMs = settings.latencyMs;
    },
    mintSessionToken(opts) {
      return mintSessionToken(state, url, opts?.expiresInSeconds);
    },
    issueTokens(opts) {
      return freshTokens(state, opts);
    },
    isAccessTokenValid(token) {
      return checkAccessToken(state, token).ok;
    },
    loyaltyCard(customerId) {
      return loyaltyCard(state, customerId);
    },
    resetLog() {
      recorder.clear();
      resetCounters(state);
    },
    close() {
      closing ??= stop(state, server);
      return closing;
    },
  };
  return sandbox;
}
