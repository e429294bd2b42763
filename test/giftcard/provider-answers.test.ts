import { describe, expect, it } from 'vitest';
import { PROVIDER_ERROR_SHAPES } from '../../src/sandbox/types.js';
import { quietDeps } from '../helpers.js';
import { aliceClaim, type Fixture, fixture, giftcardSuite, ledgerLines } from './fixture.js';

let fx: Fixture | undefined;
giftcardSuite();

const nothingPosted = { trigger: 0, creditApiIssue: 0, creditApiTopUp: 0, native: 0 };

describe.each(PROVIDER_ERROR_SHAPES)('a provider that answers errors as %s', (shape) => {
  it('stops before the trigger when the lookup says "Store domain not found": nothing issued, ledger failed, exit 1', async () => {
    fx = await fixture({ providerErrorShape: shape, triggerDelayMs: 0, fakeClock: true });
    await fx.run(['config', 'set', 'shop-url', 'wrong-shop.example']);
    const r = await fx.run(aliceClaim('C-100'));
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/Store domain not found/);
    expect(r.stderr).toMatch(/archived or deactivated, or its domain does not match the storefront/);
    expect(r.stderr).toMatch(/Nothing was issued for claim C-100; recorded as failed/);
    expect(fx.providerCalls()).toEqual(['GET /v2/gift-cards/']);
    expect(fx.sandbox.counters.creditsPosted).toEqual(nothingPosted);
    expect(ledgerLines(fx.dir).map((l) => [l.type, l.status])).toEqual([
      ['attempt', undefined],
      ['outcome', 'failed'],
    ]);
  });

  it('stops on "API key not found" with the advice to set a new token', async () => {
    fx = await fixture({ providerErrorShape: shape, triggerDelayMs: 0, fakeClock: true });
    await fx.run(['config', 'set', 'provider-token', '--stdin'], { stdin: 'gly_revoked_token_000' });
    const r = await fx.run(aliceClaim('C-101'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/API key not found/);
    expect(r.stderr).toMatch(/wrong, expired or revoked.*opcli giftcard setup/);
    expect(fx.sandbox.counters.creditsPosted).toEqual(nothingPosted);
    expect(r.stderr).not.toContain('gly_revoked_token_000');
  });

  it('a refused card creation (no customer id) is failed, exit 1, with the advice', async () => {
    fx = await fixture({ providerErrorShape: shape, fakeClock: true });
    await fx.run(['config', 'set', 'shop-url', 'wrong-shop.example']);
    const r = await fx.run(['giftcard', 'issue', '--claim', 'C-103', '--order', '3', '--amount', '5', '--email', 'bob@example.com', '--name', 'Bob', '--yes']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Creating the gift card was refused by the gift card provider \(404\): Store domain not found/);
    expect(r.stderr).toMatch(/archived or deactivated/);
    expect(fx.providerCalls()).toEqual(['POST /v2/gift-cards/issue/']);
    expect(fx.sandbox.counters.creditsPosted).toEqual(nothingPosted);
    expect(ledgerLines(fx.dir).find((l) => l.type === 'outcome')).toMatchObject({ status: 'failed' });
  });

  it('a refused trigger falls back to the credit API, which pays once', async () => {
    fx = await fixture({ providerErrorShape: shape, triggerDelayMs: 0, fakeClock: true });
    await fx.run(['config', 'set', 'trigger-id', '00000000-0000-4000-8000-000000000000']);
    const r = await fx.run([...aliceClaim('C-104'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      path: 'credit-api-top-up',
      notes: [expect.stringMatching(/trigger workflow was refused.*trigger not found/)],
    });
    expect(fx.sandbox.counters.creditsPosted).toEqual({ ...nothingPosted, creditApiTopUp: 1 });
  });

  it('reads its "no card" answer as no card, and creates a new card for a customer without one', async () => {
    fx = await fixture({ providerErrorShape: shape, triggerDelayMs: null, fakeClock: true, unset: ['trigger-id'] });
    const r = await fx.run([
      'giftcard',
      'issue',
      '--claim',
      'C-102',
      '--order',
      '2',
      '--amount',
      '5',
      '--email',
      'bob@example.com',
      '--name',
      'Bob',
      '--customer-id',
      'cust_1002',
      '--yes',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ path: 'credit-api-issue', amount: '5.00', currency: 'USD' });
    expect(fx.sandbox.counters.creditsPosted).toEqual({ ...nothingPosted, creditApiIssue: 1 });
  });

  it('explains "balance update failure" with its causes', async () => {
    fx = await fixture({ providerErrorShape: shape });
    const { providerClient, ProviderRefusedError } = await import('../../src/giftcard/provider.js');
    const deps = quietDeps({ OPCLI_CONFIG_DIR: fx.dir });
    const { client } = await providerClient(deps);
    const error = await client
      .topUp(fx.sandbox.fixtures.expiredGiftCardId, { shop_url: fx.sandbox.store.shopUrl, amount: 5, type: 'refund', order_id: '1' })
      .catch((e: unknown) => e);
    await deps.dispose();
    expect(error).toBeInstanceOf(ProviderRefusedError);
    expect((error as InstanceType<typeof ProviderRefusedError>).condition).toBe('balance-update');
    expect((error as Error).message).toMatch(/balance update failure/);
    expect((error as InstanceType<typeof ProviderRefusedError>).hint).toMatch(/gift card id does not exist, the card has expired, the card is not linked/);
  });

  it('setup --check tells a wrong token from a wrong store domain, exit 1 on either, with the advice', async () => {
    fx = await fixture({ providerErrorShape: shape });
    await fx.run(['config', 'set', 'provider-token', '--stdin'], { stdin: 'gly_not_the_right_one_42' });
    const token = await fx.run(['giftcard', 'setup', '--check', '--json']);
    expect(token.code).toBe(1);
    const t = JSON.parse(token.stdout).checks;
    expect(t[0]).toMatchObject({ check: 'credit API token', result: 'failed' });
    expect(t[0].detail).toMatch(/^API key not found\. The credit API token is wrong, expired or revoked/);
    expect(t[1]).toMatchObject({ check: 'store domain', result: 'not checked' });

    await fx.run(['config', 'set', 'provider-token', '--stdin'], { stdin: fx.sandbox.store.providerToken });
    await fx.run(['config', 'set', 'shop-url', 'elsewhere.example']);
    const shop = await fx.run(['giftcard', 'setup', '--check', '--json']);
    expect(shop.code).toBe(1);
    const s = JSON.parse(shop.stdout).checks;
    expect(s[0]).toMatchObject({ check: 'credit API token', result: 'ok' });
    expect(s[1]).toMatchObject({ check: 'store domain', result: 'failed' });
    expect(s[1].detail).toMatch(/^Store domain not found\. .*archived or deactivated/);
    expect(fx.sandbox.counters.creditsPosted).toEqual(nothingPosted);
  });
});

describe('a refused lookup moves no money', () => {
  it.each([
    ['a 401 without the spec message', 401],
    ['a 403', 403],
    ['a 404 that does not say the customer has no card', 404],
    ['a 500', 500],
    ['a 503', 503],
  ])('%s stops the chain before the trigger: failed, exit 1', async (_what, status) => {
    fx = await fixture({ triggerDelayMs: 0, fakeClock: true });
    fx.sandbox.setFaults([{ method: 'GET', path: '/provider/v2/gift-cards/', status, count: 20 }]);
    const r = await fx.run(aliceClaim('C-110'));
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`Looking up the loyalty card of cust_1001 was refused by the gift card provider \\(${status}\\)`));
    expect(fx.providerCalls().every((c) => c === 'GET /v2/gift-cards/')).toBe(true);
    expect(fx.sandbox.counters.creditsPosted).toEqual(nothingPosted);
    const outcome = ledgerLines(fx.dir).find((l) => l.type === 'outcome');
    expect(outcome).toMatchObject({ status: 'failed', triggerPosted: false });
    // A failed issuance proves nothing was paid: the same claim may be issued again.
    fx.sandbox.setFaults([]);
    const again = await fx.run(aliceClaim('C-110'));
    expect(again.code, again.stderr).toBe(0);
    expect(fx.sandbox.counters.creditsPosted.trigger).toBe(1);
  });

  it('stops the credit API path too (no trigger configured): no card is created on a refused lookup', async () => {
    fx = await fixture({ providerErrorShape: 'message', fakeClock: true, unset: ['trigger-id'] });
    fx.sandbox.setFaults([{ method: 'GET', path: '/provider/v2/gift-cards/', status: 404, count: 1 }]);
    const r = await fx.run(aliceClaim('C-111'));
    expect(r.code).toBe(1);
    expect(fx.providerCalls()).toEqual(['GET /v2/gift-cards/']);
    expect(fx.sandbox.counters.creditsPosted).toEqual(nothingPosted);
  });
});

describe('the provider client reads every shape', () => {
  it.each([
    [404, { message: 'Store domain not found', reason: 'shop archived' }, 'store-domain'],
    [401, { error: { message: 'api key NOT FOUND' } }, 'api-key'],
    [422, { errors: ['Balance update failure: card expired'] }, 'balance-update'],
    [404, '<html><body><p>Store domain not found</p></body></html>', 'store-domain'],
    [404, { error: 'gift card not found' }, 'no-card'],
    [404, 'Gift card not found', 'no-card'],
    [404, { message: 'route not found' }, 'other'],
    [404, { message: 'Gift card not found for store domain not found' }, 'store-domain'],
    [500, 'Internal Server Error', 'other'],
  ])('%i %j → %s', async (status, body, condition) => {
    const { readProviderAnswer } = await import('../../src/giftcard/provider.js');
    expect(readProviderAnswer(status, body).condition).toBe(condition);
  });
});
