/** What `startSandbox()` takes and returns, for tests, `opcli demo` and `opcli sandbox`. */
import type { TokenResponse } from '../schemas.js';
import type { SandboxClock } from './clock.js';
import type { FaultRule } from './faults.js';
import type { RateLimit } from './rate-limit.js';

export type { FaultRule };

/** One request the sandbox received, kept for tests and the admin endpoint. */
export interface ReceivedRequest {
  seq: number;
  at: number;
  method: string;
  /** Without the query string. */
  path: string;
  query: Record<string, string>;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: string;
  /** 0 when the connection was dropped. */
  status: number;
}

export interface SandboxCounters {
  tokensIssued: number;
  refreshes: number;
  reuseDetections: number;
  revocations: number;
  sessionVerifications: number;
  ordersUpdated: number;
  claimsCreated: number;
  variantsCreated: number;
  creditsPosted: { trigger: number; creditApiIssue: number; creditApiTopUp: number; native: number };
}

/** The provider's error body shapes (the spec does not show them). */
export const PROVIDER_ERROR_SHAPES = ['error', 'message', 'errors', 'error-object', 'reason', 'text', 'html'] as const;
export type ProviderErrorShape = (typeof PROVIDER_ERROR_SHAPES)[number];

/** The provider's 404 for an unknown customer id: the spec's "balance update failure", or "gift card not found". */
export const UNKNOWN_CUSTOMER_ANSWERS = ['balance-update-failure', 'no-card'] as const;
export type UnknownCustomerAnswer = (typeof UNKNOWN_CUSTOMER_ANSWERS)[number];

export interface SandboxOptions {
  /** 0 (the default) picks a free port; always on 127.0.0.1. */
  port?: number;
  /** Default 250; at least 100,000 must work. */
  orders?: number;
  /** Seconds (default 3600). */
  accessTokenTtl?: number;
  /** The consent page redirects at once instead of showing Approve / Deny. */
  autoApprove?: boolean;
  /** After which a trigger execution posts its credit (default 1000); null: never. */
  triggerDelayMs?: number | null;
  /** Default `error`: `{"error": "..."}`. */
  providerErrorShape?: ProviderErrorShape;
  /** Default `balance-update-failure`. */
  unknownCustomer?: UnknownCustomerAnswer;
  /** Everything timed in the sandbox (default the wall clock); tests pass `manualClock()`. */
  clock?: SandboxClock;
  /** Two sandboxes with one seed have the same orders. */
  seed?: number;
  /** Received requests kept (default 200,000). */
  maxRecorded?: number;
  /** Per client IP (default 30, as the spec says). */
  sessionVerifyPerMinute?: number;
  /** Per access token (default none). */
  rateLimit?: RateLimit | null;
  /** Added before every API answer (default 0). */
  latencyMs?: number;
}

export interface SandboxCustomer {
  customerId: string;
  email: string;
  name: string;
  /** Null: no card. */
  loyaltyBalance: number | null;
}

export interface Sandbox {
  /** e.g. http://127.0.0.1:43123 */
  url: string;
  /** The admin API's bearer token (src/sandbox/guard.ts). */
  adminSecret: string;
  authorizeUrl: string;
  /** Paths below it begin /v2. */
  providerUrl: string;
  /** POST `${triggerUrl}/${triggerId}`. */
  triggerUrl: string;
  /** POST `${nativeUrl}/gift-cards`. */
  nativeUrl: string;
  /** In the header `x-<provider>-access-token`. */
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
  /** A store on which the app is not installed. */
  otherStoreId: string;
  customers: SandboxCustomer[];
  counters: SandboxCounters;
  /** Oldest first. */
  requests: ReceivedRequest[];
  setFaults(rules: FaultRule[]): void;
  /** A rate limit of null removes the limit. */
  configure(
    settings: Pick<SandboxOptions, 'accessTokenTtl' | 'triggerDelayMs' | 'autoApprove' | 'rateLimit' | 'latencyMs' | 'providerErrorShape' | 'unknownCustomer'>,
  ): void;
  /** A session token (JWT) for the seeded store and merchant, valid 60 s, single use. */
  mintSessionToken(options?: { expiresInSeconds?: number }): string;
  /** A token pair as the token endpoint would issue it. */
  issueTokens(options?: { scopes?: string[]; accessTokenTtl?: number }): Required<TokenResponse>;
  isAccessTokenValid(token: string): boolean;
  loyaltyCard(customerId: string): { giftCardId: string; balance: number; code: string } | undefined;
  /** Forgets recorded requests and zeroes the counters; orders and tokens stay. */
  resetLog(): void;
  close(): Promise<void>;
  /** Snapshots of every card the provider and the storefront hold. */
  readonly giftCards: SandboxGiftCard[];
  readonly claims: SandboxClaim[];
  readonly variants: SandboxVariant[];
  /** The current record of an order (generated or updated). */
  order(sourceOrderId: string): Record<string, unknown> | undefined;
  /** Seeded gift cards for the provider's error paths. */
  fixtures: { expiredGiftCardId: string; unlinkedGiftCardId: string };
}

/** Amounts in currency units. */
export interface SandboxGiftCard {
  giftCardId: string;
  code: string;
  balance: number;
  customerId: string | null;
  expiresOn: string | null;
  source: 'seed' | 'issue' | 'trigger' | 'native';
  note: string;
  subject: string;
  title: string;
  body: string;
  recipient: string;
  recipientEmail: string;
  /** Oldest first, an issued card's initial balance included. */
  credits: { amount: number; kind: string; reference: string }[];
}

export interface SandboxClaim {
  sourceOrderId: string;
  /** The request less claimFiledFrom and options, plus sourceOrderId. */
  payload: Record<string, unknown>;
  raw: string;
  receivedAt: number;
}

export interface SandboxVariant {
  productId: string;
  variant: Record<string, unknown>;
  receivedAt: number;
}
