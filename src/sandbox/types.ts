/**
 * The contract of the built-in sandbox: what `startSandbox()` takes and returns. Tests, the tour
 * (`opcli demo`) and `opcli sandbox` all use it; the implementation lives beside this file.
 */
import type { SandboxClock } from './clock.js';
import type { FaultRule } from './faults.js';
import type { RateLimit } from './rate-limit.js';

export type { FaultRule };

/** One request the sandbox received, kept for tests and the admin endpoint. */
export interface ReceivedRequest {
  seq: number;
  at: number;
  method: string;
  /** Path without the query string, e.g. `/v1/claims/offline`. */
  path: string;
  query: Record<string, string>;
  /** Lower-cased header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Raw body text ('' when none). */
  body: string;
  /** Status the sandbox answered (0 when the connection was dropped). */
  status: number;
}

/** Counters the admin endpoint and tests read. */
export interface SandboxCounters {
  tokensIssued: number;
  refreshes: number;
  reuseDetections: number;
  revocations: number;
  sessionVerifications: number;
  ordersUpdated: number;
  claimsCreated: number;
  variantsCreated: number;
  /** Credits that reached a customer's card, by path. */
  creditsPosted: { trigger: number; creditApiIssue: number; creditApiTopUp: number; native: number };
}

/** How the sandbox's gift card provider words its error bodies (the spec does not show them). */
export const PROVIDER_ERROR_SHAPES = ['error', 'message', 'errors', 'error-object', 'reason', 'text', 'html'] as const;
export type ProviderErrorShape = (typeof PROVIDER_ERROR_SHAPES)[number];

/**
 * How the sandbox's provider answers a lookup for a customer id it does not know: `balance-update-failure`
 * (the default: 404 "balance update failure", the spec's words for a customer id not linked) or
 * `no-card` (404 "gift card not found", as for a known customer without a card).
 */
export const UNKNOWN_CUSTOMER_ANSWERS = ['balance-update-failure', 'no-card'] as const;
export type UnknownCustomerAnswer = (typeof UNKNOWN_CUSTOMER_ANSWERS)[number];

export interface SandboxOptions {
  /** 0 (the default) picks a free port. The sandbox always binds 127.0.0.1. */
  port?: number;
  /** How many orders the seeded store has (default 250; at least 100,000 must work). */
  orders?: number;
  /** Access token lifetime in seconds (default 3600). */
  accessTokenTtl?: number;
  /** The consent page redirects at once instead of showing Approve / Deny. */
  autoApprove?: boolean;
  /** Milliseconds after which a trigger execution posts its credit (default 1000); null: never. */
  triggerDelayMs?: number | null;
  /** The body shape of the gift card provider's errors (default `error`: `{"error": "..."}`). */
  providerErrorShape?: ProviderErrorShape;
  /** The answer to a lookup of a customer id the provider does not know (default `balance-update-failure`, as the spec words it). */
  unknownCustomer?: UnknownCustomerAnswer;
  /**
   * The sandbox's clock and timers for everything timed in it (default: the wall clock). Tests pass
   * `manualClock()` and advance it instead of sleeping.
   */
  clock?: SandboxClock;
  /** A bare clock reading without timers (trigger credits then post at the first read once due); prefer `clock`. */
  now?: () => number;
  /** Seed for generated data, so two sandboxes with one seed have the same orders. */
  seed?: number;
  /** Keep at most this many received requests (default 200,000). */
  maxRecorded?: number;
  /** Session verifications allowed per minute per client IP (default 30, as the spec says). */
  sessionVerifyPerMinute?: number;
  /** A request rate limit per access token (default none); see rate-limit.ts. */
  rateLimit?: RateLimit | null;
  /** Milliseconds added before every API answer (default 0). */
  latencyMs?: number;
}

/** A token pair as the token endpoint answers it (RFC 6749 5.1). */
export interface IssuedTokens {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

/** What a seeded customer of the provider looks like. */
export interface SandboxCustomer {
  customerId: string;
  email: string;
  name: string;
  /** Balance of the customer's loyalty card at start, or null for no card. */
  loyaltyBalance: number | null;
}

export interface Sandbox {
  /** The API's base URL, e.g. http://127.0.0.1:43123 */
  url: string;
  /** This run's secret for the admin API under /__admin: `Authorization: Bearer <adminSecret>` (src/sandbox/guard.ts). */
  adminSecret: string;
  /** The consent page: `${url}/v1/oauth/authorize`. */
  authorizeUrl: string;
  /** The gift card provider's base URL (paths below it begin /v2). */
  providerUrl: string;
  /** Base of the trigger workflow's execute URL: POST `${triggerUrl}/${triggerId}`. */
  triggerUrl: string;
  /** The storefront's native gift card base URL (the sandbox's own endpoint: POST `${nativeUrl}/gift-cards`). */
  nativeUrl: string;
  /** The provider name that forms the header `x-<provider>-access-token`. */
  providerName: string;
  client: { clientId: string; clientSecret: string; redirectUri: string };
  store: {
    storeId: string;
    installationId: string;
    applicationId: string;
    shopUrl: string;
    providerToken: string;
    triggerId: string;
    scopes: string[];
  };
  /** A store on which the app is not installed (client credentials must be refused). */
  otherStoreId: string;
  customers: SandboxCustomer[];
  counters: SandboxCounters;
  /** Every request received, oldest first (bounded by maxRecorded). */
  requests: ReceivedRequest[];
  /** Replace the fault rules. */
  setFaults(rules: FaultRule[]): void;
  /** Change settings at run time (a rate limit of null removes the limit). */
  configure(
    settings: Pick<SandboxOptions, 'accessTokenTtl' | 'triggerDelayMs' | 'autoApprove' | 'rateLimit' | 'latencyMs' | 'providerErrorShape' | 'unknownCustomer'>,
  ): void;
  /** Mint a session token (JWT) for the seeded store and merchant, valid 60 s, single use. */
  mintSessionToken(options?: { expiresInSeconds?: number }): string;
  /** Issue a token pair directly (as the token endpoint would), for tests that need a logged-in state. */
  issueTokens(options?: { scopes?: string[]; accessTokenTtl?: number }): Required<IssuedTokens>;
  /** Whether an access token is currently valid (not expired, not revoked). */
  isAccessTokenValid(token: string): boolean;
  /** The loyalty card of a customer, or undefined. */
  loyaltyCard(customerId: string): { giftCardId: string; balance: number; code: string } | undefined;
  /** Forget recorded requests and zero the counters (state such as orders and tokens stays). */
  resetLog(): void;
  close(): Promise<void>;
  /** Every gift card the provider and the storefront hold (seeded, issued, credited), as snapshots. */
  readonly giftCards: SandboxGiftCard[];
  /** Claims created through POST /v1/claims/offline, oldest first. */
  readonly claims: SandboxClaim[];
  /** Variants created through POST /v2/products/{productId}/children, oldest first. */
  readonly variants: SandboxVariant[];
  /** The current record of an order (generated or updated), or undefined. */
  order(sourceOrderId: string): Record<string, unknown> | undefined;
  /** Seeded gift cards for the provider's error paths. */
  fixtures: { expiredGiftCardId: string; unlinkedGiftCardId: string };
}

/** A gift card as tests see it (amounts in currency units). */
export interface SandboxGiftCard {
  giftCardId: string;
  code: string;
  balance: number;
  /** The linked customer, or null for a card linked to none. */
  customerId: string | null;
  expiresOn: string | null;
  /** How the card came to exist. */
  source: 'seed' | 'issue' | 'trigger' | 'native';
  note: string;
  subject: string;
  title: string;
  body: string;
  recipient: string;
  recipientEmail: string;
  /** Every credit posted to the card (the initial balance of an issued card included), oldest first. */
  credits: { amount: number; kind: string; reference: string }[];
}

/** A claim the sandbox stored. */
export interface SandboxClaim {
  sourceOrderId: string;
  /** The payload answered (request less claimFiledFrom and options, plus sourceOrderId). */
  payload: Record<string, unknown>;
  /** The raw request body. */
  raw: string;
  receivedAt: number;
}

/** A product variant the sandbox stored. */
export interface SandboxVariant {
  productId: string;
  variant: Record<string, unknown>;
  receivedAt: number;
}
