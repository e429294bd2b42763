/**
 * One customer, one credit (issue 38, row 1): the e-mail and the customer id must be one person.
 * The review's case: `--email alice@exmaple.com --customer-id cust_1001` paid 50.00 for a 25.00
 * claim (the trigger credited a new card for the misspelt address, the fallback topped up Alice's
 * card) and `history --verify` found "0 possible double credit(s)".
 */
import { describe, expect, it } from 'vitest';
import { type ChainEnv, type ChainProgress, type CreditRequest, planChain, runChain } from '../../src/giftcard/issuance.js';
import { CardHolderMismatchError, UnknownHolderError } from '../../src/giftcard/issuance.js';
import { ledgerFor } from '../../src/giftcard/ledger.js';
import type { ProviderClient, ProviderSettings } from '../../src/giftcard/provider.js';
import type { GiftCard } from '../../src/schemas.js';
import { aliceClaim, type Fixture, fixture, giftcardSuite, ledgerLines } from './fixture.js';

let fx: Fixture | undefined;
giftcardSuite();

/** Requests that move money, as "METHOD path". */
const moneyCalls = (f: Fixture) => f.providerCalls().filter((c) => !c.startsWith('GET'));

/** Alice's claim flags with another e-mail. */
const withEmail = (email: string, claim: string, extra: string[] = []) => aliceClaim(claim, extra).map((a) => (a === 'alice@example.com' ? email : a));

describe("an e-mail that is not the customer id's", () => {
  it('the review case, the address confirmed as typed: held before the trigger, exit 3, naming both; nothing paid', async () => {
    fx = await fixture({ triggerDelayMs: 0, fakeClock: true });
    const r = await fx.run(withEmail('alice@exmaple.com', 'TYPO-1', ['--email-confirmed']));
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/the e-mail alice@exmaple\.com does not belong to customer cust_1001: their loyalty card \S+ is alice@example\.com's/);
    expect(r.stderr).toMatch(/pass --email alice@example\.com/);
    expect(moneyCalls(fx)).toEqual([]);
    expect(fx.sandbox.counters.creditsPosted).toEqual({ trigger: 0, creditApiIssue: 0, creditApiTopUp: 0, native: 0 });
    expect(fx.sandbox.loyaltyCard('cust_1001')?.balance).toBe(10);
    expect(ledgerLines(fx.dir).map((l) => [l.type, l.status])).toEqual([
      ['attempt', undefined],
      ['outcome', 'failed'],
    ]);
  });

  it("on the credit API path (no trigger) a top-up of the other customer's card is held too", async () => {
    fx = await fixture({ unset: ['trigger-id'] });
    const r = await fx.run(withEmail('alicia@example.com', 'TYPO-2'));
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/alicia@example\.com does not belong to customer cust_1001/);
    expect(moneyCalls(fx)).toEqual([]);
  });

  it('the same address written in other case is the same person, and is paid once', async () => {
    fx = await fixture({ triggerDelayMs: 0, fakeClock: true });
    const r = await fx.run(withEmail('Alice@Example.COM', 'CASE-1'));
    expect(r.code, r.stderr).toBe(0);
    expect(fx.sandbox.counters.creditsPosted).toEqual({ trigger: 1, creditApiIssue: 0, creditApiTopUp: 0, native: 0 });
    expect(fx.sandbox.loyaltyCard('cust_1001')?.balance).toBe(35);
  });
});

describe('a card that does not say whose it is', () => {
  const settings: ProviderSettings = {
    name: 'giftly',
    apiUrl: 'https://provider.example',
    token: 't',
    shopUrl: 'shop.example',
    triggerId: '3f1c2a4e-8d5b-4c1e-9f7a-2b6d8e0c1a3f',
    triggerUrl: 'https://hooks.example/execute',
  };
  const req: CreditRequest = {
    issuance: 'i-1',
    claimId: 'C-60',
    orderNumber: '1',
    bonus: false,
    amountCents: 2500,
    email: 'alice@exmaple.com',
    name: 'Alice',
    customerId: 'cust_1001',
    currency: 'USD',
  };

  /** A provider whose lookup answers `card`, whose trigger is accepted and never seen, and which records what moved money. */
  function provider(card: GiftCard) {
    const moved: string[] = [];
    const client = {
      lookup: async () => ({ ...card }),
      executeTrigger: async () => {
        moved.push('trigger');
      },
      issue: async () => {
        moved.push('issue');
        return { gift_card_id: 'gc_new', amount: 25, code: 'NEWCARD00001' };
      },
      topUp: async () => {
        moved.push('top-up');
        return { ...card, amount: card.amount + 25 };
      },
    } as unknown as ProviderClient;
    let clock = 0;
    const env: ChainEnv = {
      client,
      settings,
      timing: { triggerWaitMs: 1000, lateCheckMs: 1000, pollIntervalMs: 250 },
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
      say: () => {},
    };
    return { env, moved };
  }

  it('is never topped up after a posted trigger whose credit did not show: the outcome stays uncertain', async () => {
    const { env, moved } = provider({ gift_card_id: 'gc_alice', amount: 10, code: 'ALICE0000001' });
    const progress: ChainProgress = { moneyMayHaveMoved: false, triggerPosted: false, notes: [] };
    await expect(runChain(req, planChain(settings, req, undefined), env, progress)).rejects.toThrow(UnknownHolderError);
    expect(moved).toEqual(['trigger']);
    expect(progress.triggerPosted).toBe(true);
  });

  it('a card that names another holder (as `email`) holds the trigger itself', async () => {
    const { env, moved } = provider({ gift_card_id: 'gc_alice', amount: 10, code: 'ALICE0000001', email: 'alice@example.com' } as GiftCard);
    const progress: ChainProgress = { moneyMayHaveMoved: false, triggerPosted: false, notes: [] };
    await expect(runChain(req, planChain(settings, req, undefined), env, progress)).rejects.toThrow(CardHolderMismatchError);
    expect(moved).toEqual([]);
  });

  it("a card that names the e-mail's holder is topped up after a slow trigger, as the spec's fallback says", async () => {
    const { env, moved } = provider({ gift_card_id: 'gc_alice', amount: 10, code: 'ALICE0000001', customer_email: 'alice@exmaple.com' } as GiftCard);
    const progress: ChainProgress = { moneyMayHaveMoved: false, triggerPosted: false, notes: [] };
    const result = await runChain(req, planChain(settings, req, undefined), env, progress);
    expect(result.path).toBe('credit-api-top-up');
    expect(moved).toEqual(['trigger', 'top-up']);
  });
});

describe('history --verify and a credit paid by two paths', () => {
  /** The ledger today's main wrote for the review's case: the trigger posted for `email`, then a top-up of Alice's card. */
  async function fellBackLedger(f: Fixture, email: string): Promise<void> {
    const ledger = ledgerFor(f.dir, undefined);
    const card = f.sandbox.loyaltyCard('cust_1001');
    const key = `shop:${f.sandbox.store.shopUrl}|store:${f.sandbox.store.storeId}|claim:typo-1`;
    const common = { v: 1 as const, issuance: 'i-typo-1', key, at: new Date().toISOString(), user: 'maria' };
    await ledger.appendLocked({
      ...common,
      type: 'attempt',
      claimId: 'TYPO-1',
      orderNumber: '1001',
      bonus: false,
      amountCents: 2500,
      amount: '25.00',
      currency: 'USD',
      email,
      name: 'Alice Example',
      customerId: 'cust_1001',
      profile: 'default',
      shopUrl: f.sandbox.store.shopUrl,
      storeId: f.sandbox.store.storeId,
      firstPath: 'trigger',
      forced: false,
      host: 'desk-1',
    });
    // The card holds what the watch expected: no late credit shows on it.
    const expectedCents = Math.round((card?.balance ?? 0) * 100);
    await ledger.appendLocked({
      ...common,
      type: 'outcome',
      status: 'issued',
      path: 'credit-api-top-up',
      cardId: card?.giftCardId,
      balanceCents: expectedCents,
      triggerPosted: true,
      watch: { customerId: 'cust_1001', cardId: card?.giftCardId ?? null, expectedCents, ourCardId: card?.giftCardId },
      possibleDoubleCredit: false,
      notes: [],
    });
  }

  it("counts the trigger for alice@exmaple.com plus the top-up of Alice's card as a possible double credit, exit 3", async () => {
    fx = await fixture();
    await fellBackLedger(fx, 'alice@exmaple.com');
    const r = await fx.run(['giftcard', 'history', '--verify', '--json']);
    expect(r.code).toBe(3);
    const doc = JSON.parse(r.stdout);
    expect(doc.verify).toEqual([expect.objectContaining({ issuance: 'i-typo-1', result: 'possible-double-credit' })]);
    expect(r.stderr).toMatch(/paid by two paths: the trigger workflow was posted for alice@exmaple\.com, and then credit-api-top-up paid too/);
    expect(r.stderr).toMatch(/is alice@example\.com's, so it may be on another card of alice@exmaple\.com/);
    const shown = await fx.run(['giftcard', 'history', '--json']);
    expect(JSON.parse(shown.stdout).issuances[0].possibleDoubleCredit).toBe(true);
  });

  it("finds nothing when the card is the e-mail's own and shows no late credit", async () => {
    fx = await fixture();
    await fellBackLedger(fx, 'alice@example.com');
    const r = await fx.run(['giftcard', 'history', '--verify']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/0 possible double/);
  });
});
