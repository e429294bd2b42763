/** The mutable state of one sandbox: settings, counters, tokens, records and gift cards. */
import { randomBytes } from 'node:crypto';
import type { OrderRecord } from '../schemas.js';
import { type TimerHandle, wallClock } from './clock.js';
import { makeIdentity, seedCustomers } from './seed.js';
import type {
  SandboxClaim,
  SandboxCounters,
  SandboxCustomer,
  SandboxGiftCard,
  SandboxOptions,
  SandboxVariant,
  ProviderErrorShape,
  UnknownCustomerAnswer,
} from './types.js';

export interface AccessTokenRecord {
  familyId: number;
  scopes: string[];
  expiresAt: number;
  revoked: boolean;
}

export interface RefreshTokenRecord extends Omit<AccessTokenRecord, 'expiresAt'> {
  /** Rotated out by a refresh: presenting it again is reuse. */
  rotated: boolean;
}

/** Every token descended from one login. */
export interface TokenFamily {
  access: string[];
  refresh: string[];
}

export interface PendingAuthorization {
  clientId: string;
  redirectUri: string;
  scopes: string[];
  state: string | null;
  challenge: string | null;
  expiresAt: number;
}

/** The authorization it was issued for, with its own expiry. */
export interface AuthorizationCode extends PendingAuthorization {
  used: boolean;
  /** The family the exchange created, revoked if the code is replayed. */
  familyId: number | null;
}

/** SandboxGiftCard in cents. */
export interface GiftCardRecord extends Omit<SandboxGiftCard, 'balance' | 'credits'> {
  balanceCents: number;
  credits: { amountCents: number; kind: string; reference: string }[];
}

export interface CustomerRecord {
  customerId: string;
  email: string;
  name: string;
  loyaltyCardId: string | null;
}

export function zeroCounters(): SandboxCounters {
  return {
    tokensIssued: 0,
    refreshes: 0,
    reuseDetections: 0,
    revocations: 0,
    sessionVerifications: 0,
    ordersUpdated: 0,
    claimsCreated: 0,
    variantsCreated: 0,
    creditsPosted: { trigger: 0, creditApiIssue: 0, creditApiTopUp: 0, native: 0 },
  };
}

export function createState(options: SandboxOptions) {
  const identity = makeIdentity();
  const seedList = seedCustomers();
  const clock = options.clock ?? wallClock;
  const state = {
    ...identity,
    providerName: 'giftly',
    seed: options.seed ?? 1,
    orderCount: options.orders ?? 250,
    settings: {
      accessTokenTtl: options.accessTokenTtl ?? 3600,
      triggerDelayMs: options.triggerDelayMs === undefined ? 1000 : options.triggerDelayMs,
      autoApprove: options.autoApprove ?? false,
      sessionVerifyPerMinute: options.sessionVerifyPerMinute ?? 30,
      providerErrorShape: (options.providerErrorShape ?? 'error') as ProviderErrorShape,
      unknownCustomer: (options.unknownCustomer ?? 'balance-update-failure') as UnknownCustomerAnswer,
    },
    clock,
    now: clock.now,
    pendingTriggers: [] as { dueAt: number; email: string; cents: number; triggerId: string }[],
    counters: zeroCounters(),
    nextFamily: 1,
    families: new Map<number, TokenFamily>(),
    accessTokens: new Map<string, AccessTokenRecord>(),
    refreshTokens: new Map<string, RefreshTokenRecord>(),
    codes: new Map<string, AuthorizationCode>(),
    pending: new Map<string, PendingAuthorization>(),
    usedJtis: new Map<string, number>(),
    sessionHits: new Map<string, number[]>(),
    /** Orders that were updated; every other order is generated from the seed when read. */
    orderOverrides: new Map<number, OrderRecord>(),
    claims: [] as SandboxClaim[],
    variants: [] as SandboxVariant[],
    variantIds: new Set<string>(),
    seededCustomers: seedList as SandboxCustomer[],
    customers: new Map<string, CustomerRecord>(),
    giftCards: new Map<string, GiftCardRecord>(),
    fixtures: { expiredGiftCardId: '', unlinkedGiftCardId: '' },
    nextCustomer: 5001,
    nextGiftCard: 1,
    nextClaim: 1,
    timers: new Set<TimerHandle>(),
  };
  seedCustomersAndCards(state, seedList);
  return state;
}

export type SandboxState = ReturnType<typeof createState>;

/** The seeded customers with their loyalty cards, and the expired and unlinked fixture cards. */
function seedCustomersAndCards(state: SandboxState, seedList: ReturnType<typeof seedCustomers>): void {
  for (const c of seedList) {
    const record: CustomerRecord = { customerId: c.customerId, email: c.email, name: c.name, loyaltyCardId: null };
    state.customers.set(c.customerId, record);
    if (c.loyaltyBalance !== null) {
      const card = newGiftCard(state, {
        source: 'seed',
        customerId: c.customerId,
        recipient: c.name,
        recipientEmail: c.email,
        note: 'loyalty card',
      });
      card.balanceCents = Math.round(c.loyaltyBalance * 100);
      record.loyaltyCardId = card.giftCardId;
    }
  }
  const expired = newGiftCard(state, {
    source: 'seed',
    customerId: 'cust_1001',
    recipient: 'Alice Example',
    recipientEmail: 'alice@example.com',
    note: 'expired card',
  });
  expired.expiresOn = '2020-01-01';
  expired.balanceCents = 500;
  state.fixtures.expiredGiftCardId = expired.giftCardId;
  const unlinked = newGiftCard(state, {
    source: 'seed',
    customerId: null,
    recipient: 'Walk-in Customer',
    recipientEmail: 'walk-in@example.com',
    note: 'card not linked to a customer',
  });
  unlinked.balanceCents = 2500;
  state.fixtures.unlinkedGiftCardId = unlinked.giftCardId;
}

/** A new stored card, balance zero. */
export function newGiftCard(
  state: Pick<SandboxState, 'giftCards' | 'nextGiftCard'>,
  init: {
    source: GiftCardRecord['source'];
    customerId: string | null;
    recipient: string;
    recipientEmail: string;
    note: string;
    subject?: string;
    title?: string;
    body?: string;
  },
): GiftCardRecord {
  const giftCardId = `gc_${String(state.nextGiftCard++).padStart(6, '0')}`;
  const code = randomBytes(8)
    .toString('hex')
    .toUpperCase()
    .replace(/(.{4})(?!$)/g, '$1-');
  const card: GiftCardRecord = {
    ...init,
    giftCardId,
    code,
    balanceCents: 0,
    expiresOn: null,
    subject: init.subject ?? '',
    title: init.title ?? '',
    body: init.body ?? '',
    credits: [],
  };
  state.giftCards.set(giftCardId, card);
  return card;
}

export function isExpired(card: GiftCardRecord, now: number): boolean {
  return card.expiresOn !== null && Date.parse(card.expiresOn) <= now;
}

/** Runs `fn` after `ms` on the sandbox's clock; `close()` clears the timers that have not fired. */
export function later(state: Pick<SandboxState, 'clock' | 'timers'>, ms: number, fn: () => void): void {
  const timer = state.clock.setTimeout(() => {
    state.timers.delete(timer);
    fn();
  }, ms);
  state.timers.add(timer);
}

/** Case-insensitive. */
export function customerByEmail(state: SandboxState, email: string): CustomerRecord | undefined {
  const wanted = email.toLowerCase();
  for (const c of state.customers.values()) if (c.email.toLowerCase() === wanted) return c;
  return undefined;
}

/** As the provider answers it. */
export function giftCardBody(card: GiftCardRecord) {
  return {
    gift_card_id: card.giftCardId,
    amount: card.balanceCents / 100,
    code: card.code,
    expires_on: card.expiresOn,
  };
}

export function giftCardView({ balanceCents, credits, ...card }: GiftCardRecord): SandboxGiftCard {
  return { ...card, balance: balanceCents / 100, credits: credits.map((c) => ({ amount: c.amountCents / 100, kind: c.kind, reference: c.reference })) };
}

/** Without float drift, for at most two decimals. */
export function toCents(amount: number): number {
  return Math.round(amount * 100);
}
