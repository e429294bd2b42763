import { describe, expect, test } from 'vitest';
import { GiftCard } from '../../src/schemas.js';
import { type ManualClock, manualClock, type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { admin, call, sandboxSuite } from './client.js';

let sb: Sandbox;
let clock: ManualClock;
sandboxSuite((s) => ({ sb } = s), { sandbox: () => ({ triggerDelayMs: 50, clock: (clock = manualClock()) }) });

const auth = () => ({ 'x-giftly-access-token': sb.store.providerToken });

function issueBody(overrides: { balance?: number; email?: string; shop?: string } = {}) {
  return {
    shop_url: overrides.shop ?? sb.store.shopUrl,
    gift_card: { balance: overrides.balance ?? 25.1, note: 'claim C-1 order #1001' },
    email_details: {
      recipient: 'Bob Example',
      recipient_email: overrides.email ?? 'bob@example.com',
      title: 'Order Protection',
      subject: 'Gift Card for Claim #C-1',
      body: 'Here is your store credit.',
    },
  };
}

const issue = (body: unknown, headers = auth()) => call(`${sb.providerUrl}/v2/gift-cards/issue/`, { json: body, headers });
const lookup = (customerId: string, shop = sb.store.shopUrl, headers = auth()) =>
  call(`${sb.providerUrl}/v2/gift-cards/?${new URLSearchParams({ shop_url: shop, customer_id: customerId })}`, { headers });
const topUp = (id: string, body: Record<string, unknown>, headers = auth()) =>
  call(`${sb.providerUrl}/v2/gift-cards/${id}`, {
    method: 'PUT',
    json: { shop_url: sb.store.shopUrl, amount: 5, type: 'refund', order_id: '#1001', ...body },
    headers,
  });

describe('seeded customers', () => {
  test('alice has a loyalty card of 10.00, bob and carol none', async () => {
    expect(sb.customers.map((c) => [c.customerId, c.email, c.name, c.loyaltyBalance])).toEqual([
      ['cust_1001', 'alice@example.com', 'Alice Example', 10],
      ['cust_1002', 'bob@example.com', 'Bob Example', null],
      ['cust_1003', 'carol@example.com', 'Carol Example', null],
    ]);
    expect(sb.loyaltyCard('cust_1001')?.balance).toBe(10);
    expect(sb.loyaltyCard('cust_1002')).toBeUndefined();
    const res = await lookup('cust_1001');
    expect(res.status).toBe(200);
    expect(GiftCard.parse(res.body)).toMatchObject({ amount: 10, expires_on: null, gift_card_id: sb.loyaltyCard('cust_1001')?.giftCardId });
    const none = await lookup('cust_1002');
    expect(none.status).toBe(404);
    expect(none.body).toEqual({ error: 'gift card not found' });
  });
});

describe('provider credit API', () => {
  test("issue creates a card with the amount, note, subject and recipient; it becomes bob's loyalty card", async () => {
    const res = await issue(issueBody());
    expect(res.status).toBe(200);
    const card = GiftCard.parse(res.body);
    expect(card).toMatchObject({ amount: 25.1, expires_on: null });
    expect(card.code).toMatch(/^[0-9A-F-]+$/);
    expect(sb.counters.creditsPosted.creditApiIssue).toBe(1);
    const stored = sb.giftCards.find((c) => c.giftCardId === card.gift_card_id);
    expect(stored).toMatchObject({
      balance: 25.1,
      note: 'claim C-1 order #1001',
      subject: 'Gift Card for Claim #C-1',
      recipient: 'Bob Example',
      recipientEmail: 'bob@example.com',
      customerId: 'cust_1002',
      source: 'issue',
    });
    expect(sb.loyaltyCard('cust_1002')?.giftCardId).toBe(card.gift_card_id);
  });

  test('top-up adds the amount in cents, without float drift', async () => {
    const id = sb.loyaltyCard('cust_1001')?.giftCardId as string;
    for (let i = 0; i < 10; i++) {
      const res = await topUp(id, { amount: 0.1 });
      expect(res.status).toBe(200);
    }
    const res = await topUp(id, { amount: 0.2 });
    expect(res.body.amount).toBe(11.2);
    expect(sb.loyaltyCard('cust_1001')?.balance).toBe(11.2);
    expect(sb.counters.creditsPosted.creditApiTopUp).toBe(11);
    expect(sb.giftCards.find((c) => c.giftCardId === id)?.credits.at(-1)).toEqual({ amount: 0.2, kind: 'refund', reference: '#1001' });
  });

  test('a wrong or missing token is 401 API key not found, on every route', async () => {
    const wrong = { 'x-giftly-access-token': 'nope' };
    for (const res of [
      await issue(issueBody(), wrong),
      await issue(issueBody(), {} as ReturnType<typeof auth>),
      await lookup('cust_1001', sb.store.shopUrl, wrong),
      await topUp(sb.loyaltyCard('cust_1001')?.giftCardId as string, {}, wrong),
      await call(`${sb.triggerUrl}/${sb.store.triggerId}`, { json: { email: 'bob@example.com', amount: 1 }, headers: wrong }),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'API key not found' });
    }
    expect(sb.counters.creditsPosted).toEqual({ trigger: 0, creditApiIssue: 0, creditApiTopUp: 0, native: 0 });
  });

  test('a wrong shop_url is 404 Store domain not found', async () => {
    expect((await issue(issueBody({ shop: 'other.example' }))).body).toEqual({ error: 'Store domain not found' });
    const res = await lookup('cust_1001', 'other.example');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Store domain not found' });
    const put = await topUp(sb.loyaltyCard('cust_1001')?.giftCardId as string, { shop_url: 'other.example' });
    expect(put.status).toBe(404);
    expect(put.body.error).toBe('Store domain not found');
  });

  test('issue needs a valid e-mail and an amount above zero (422)', async () => {
    const email = await issue(issueBody({ email: 'not-an-email' }));
    expect(email.status).toBe(422);
    expect(email.body.error).toContain('e-mail');
    for (const balance of [0, -5]) {
      const amount = await issue(issueBody({ balance }));
      expect(amount.status).toBe(422);
      expect(amount.body.error).toContain('above zero');
    }
    expect(sb.counters.creditsPosted.creditApiIssue).toBe(0);
  });

  test('top-up of an unknown, expired or unlinked card, or a bad amount, is 422 balance update failure', async () => {
    const alice = sb.loyaltyCard('cust_1001')?.giftCardId as string;
    for (const [id, body] of [
      ['gc_999999', {}],
      [sb.fixtures.expiredGiftCardId, {}],
      [sb.fixtures.unlinkedGiftCardId, {}],
      [alice, { amount: 0 }],
      [alice, { amount: -1 }],
      [alice, { amount: '5' }],
    ] as [string, Record<string, unknown>][]) {
      const res = await topUp(id, body);
      expect(res.status, `${id} ${JSON.stringify(body)}`).toBe(422);
      expect(res.body.error).toBe('balance update failure');
    }
    expect(sb.loyaltyCard('cust_1001')?.balance).toBe(10);
    expect(sb.counters.creditsPosted.creditApiTopUp).toBe(0);
  });

  test('the issue path needs its trailing slash', async () => {
    // Without it the path reads as PUT /v2/gift-cards/{giftCardId} with the id "issue".
    const res = await call(`${sb.providerUrl}/v2/gift-cards/issue`, { json: issueBody(), headers: auth() });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('PUT');
    expect(sb.counters.creditsPosted.creditApiIssue).toBe(0);
  });
});

describe('trigger workflow', () => {
  test('accepted at once, credits the loyalty card after the delay', async () => {
    const res = await call(`${sb.triggerUrl}/${sb.store.triggerId}`, {
      json: { email: 'alice@example.com', amount: 7.5 },
      headers: auth(),
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ status: 'accepted' });
    expect(sb.loyaltyCard('cust_1001')?.balance).toBe(10);
    clock.advance(49);
    expect(sb.loyaltyCard('cust_1001')?.balance).toBe(10);
    clock.advance(1);
    expect(sb.loyaltyCard('cust_1001')?.balance).toBe(17.5);
    expect(sb.counters.creditsPosted.trigger).toBe(1);
  });

  test('creates a loyalty card for a customer with none', async () => {
    await call(`${sb.triggerUrl}/${sb.store.triggerId}`, { json: { email: 'CAROL@example.com', amount: 3 }, headers: auth() });
    clock.advance(50);
    expect(sb.loyaltyCard('cust_1003')?.balance).toBe(3);
    const res = await lookup('cust_1003');
    expect(res.body.amount).toBe(3);
  });

  test('an unknown trigger id is 404; never means never', async () => {
    const unknown = await call(`${sb.triggerUrl}/00000000-0000-4000-8000-000000000000`, {
      json: { email: 'alice@example.com', amount: 1 },
      headers: auth(),
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'trigger not found' });
    sb.configure({ triggerDelayMs: null });
    const res = await call(`${sb.triggerUrl}/${sb.store.triggerId}`, { json: { email: 'alice@example.com', amount: 1 }, headers: auth() });
    expect(res.status).toBe(202);
    expect(clock.pending).toBe(0);
    clock.advance(3_600_000);
    expect(sb.loyaltyCard('cust_1001')?.balance).toBe(10);
    expect(sb.counters.creditsPosted.trigger).toBe(0);
  });

  test('close() clears pending trigger timers', async () => {
    sb.configure({ triggerDelayMs: 100 });
    await call(`${sb.triggerUrl}/${sb.store.triggerId}`, { json: { email: 'alice@example.com', amount: 1 }, headers: auth() });
    expect(clock.pending).toBe(1);
    await sb.close();
    expect(clock.pending).toBe(0);
    clock.advance(150);
    expect(sb.counters.creditsPosted.trigger).toBe(0);
  });
});

describe('native gift card', () => {
  const body = { amount: 12.34, email: 'bob@example.com', name: 'Bob Example', note: 'order #1001', subject: 'Bonus Store Credit for Order #1001' };

  test('creates a card with a bearer token carrying read_store', async () => {
    const res = await call(`${sb.nativeUrl}/gift-cards`, { json: body, token: sb.issueTokens().access_token });
    expect(res.status).toBe(200);
    const card = GiftCard.parse(res.body);
    expect(card.amount).toBe(12.34);
    expect(sb.counters.creditsPosted.native).toBe(1);
    expect(sb.giftCards.find((c) => c.giftCardId === card.gift_card_id)).toMatchObject({
      source: 'native',
      balance: 12.34,
      recipient: 'Bob Example',
      recipientEmail: 'bob@example.com',
      subject: 'Bonus Store Credit for Order #1001',
      note: 'order #1001',
    });
  });

  test('401 without a token, 403 without the scope, 400 on a bad body', async () => {
    const none = await call(`${sb.nativeUrl}/gift-cards`, { json: body });
    expect(none.status).toBe(401);
    const scoped = await call(`${sb.nativeUrl}/gift-cards`, { json: body, token: sb.issueTokens({ scopes: ['read_orders'] }).access_token });
    expect(scoped.status).toBe(403);
    expect(scoped.body.required_scope).toBe('read_store');
    const bad = await call(`${sb.nativeUrl}/gift-cards`, { json: { ...body, amount: 0 }, token: sb.issueTokens().access_token });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('amount');
    expect(sb.counters.creditsPosted.native).toBe(0);
  });
});

describe('provider error shapes (the spec shows the messages, not the bodies)', () => {
  test.each([
    ['error', (a: { body: unknown; text: string }) => expect(a.body).toEqual({ error: 'Store domain not found' })],
    ['message', (a: { body: unknown; text: string }) => expect(a.body).toMatchObject({ message: 'Store domain not found' })],
    ['errors', (a: { body: unknown; text: string }) => expect(a.body).toEqual({ errors: [{ message: 'Store domain not found' }] })],
    ['error-object', (a: { body: unknown; text: string }) => expect(a.body).toMatchObject({ error: { message: 'Store domain not found' } })],
    ['reason', (a: { body: unknown; text: string }) => expect(a.body).toMatchObject({ reason: 'Store domain not found' })],
    ['text', (a: { body: unknown; text: string }) => expect(a.text).toBe('Store domain not found\n')],
    ['html', (a: { body: unknown; text: string }) => expect(a.text).toMatch(/<p>Store domain not found<\/p>/)],
  ] as const)('answers %s, set through the admin API', async (shape, check) => {
    const set = await admin(sb, '/__admin/configure', { json: { providerErrorShape: shape } });
    expect(set.status).toBe(200);
    const res = await lookup('cust_1001', 'wrong.example');
    expect(res.status).toBe(404);
    check(res);
  });

  test('refuses an unknown shape', async () => {
    const set = await admin(sb, '/__admin/configure', { json: { providerErrorShape: 'yaml' } });
    expect(set.status).toBe(400);
  });
});

describe('trigger workflow on an injected clock', () => {
  test('posts the credit once the clock passes the delay, with no real timer, and takes no token', async () => {
    const clock = manualClock(1_000);
    const clocked = await startSandbox({ triggerDelayMs: 4000, clock });
    try {
      const res = await call(`${clocked.triggerUrl}/${clocked.store.triggerId}`, { json: { email: 'alice@example.com', amount: 2 } });
      expect(res.status).toBe(202);
      clock.advance(3999);
      expect(clocked.loyaltyCard('cust_1001')?.balance).toBe(10);
      clock.advance(1);
      expect(clocked.loyaltyCard('cust_1001')?.balance).toBe(12);
      expect(clocked.counters.creditsPosted.trigger).toBe(1);
      const wrong = await call(`${clocked.triggerUrl}/${clocked.store.triggerId}`, {
        json: { email: 'alice@example.com', amount: 2 },
        headers: { 'x-giftly-access-token': 'nope' },
      });
      expect(wrong.status).toBe(401);
    } finally {
      await clocked.close();
    }
  });
});
