import { afterEach, describe, expect, test } from 'vitest';
import { OrdersPage } from '../../src/schemas.js';
import { manualClock, type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { call } from './client.js';

const open: Sandbox[] = [];
async function sandbox(options?: Parameters<typeof startSandbox>[0]) {
  const sb = await startSandbox(options);
  open.push(sb);
  return sb;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

describe('GET /v1/orders', () => {
  test('needs a bearer token, then the read_orders scope', async () => {
    const sb = await sandbox();
    const none = await call(`${sb.url}/v1/orders`);
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('invalid_token');
    expect(none.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    const unknown = await call(`${sb.url}/v1/orders`, { token: 'svc_at_nope' });
    expect(unknown.status).toBe(401);
    const noScope = sb.issueTokens({ scopes: ['read_claims'] });
    const forbidden = await call(`${sb.url}/v1/orders`, { token: noScope.access_token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({ error: 'insufficient_scope', required_scope: 'read_orders' });
  });

  test('an expired access token is 401', async () => {
    const clock = manualClock();
    const sb = await sandbox({ clock });
    const t = sb.issueTokens({ accessTokenTtl: 60 });
    clock.advance(59_999);
    expect(sb.isAccessTokenValid(t.access_token)).toBe(true);
    clock.advance(1);
    const res = await call(`${sb.url}/v1/orders`, { token: t.access_token });
    expect(res.status).toBe(401);
    expect(res.body.error_description).toContain('expired');
    expect(sb.isAccessTokenValid(t.access_token)).toBe(false);
  });

  test('a default page: 20 records, page info, 5 page cursors, the total', async () => {
    const sb = await sandbox();
    const { access_token } = sb.issueTokens();
    const res = await call(`${sb.url}/v1/orders`, { token: access_token });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const page = OrdersPage.parse(res.body);
    expect(page.totalCount).toBe(250);
    expect(page.edges).toHaveLength(20);
    expect(page.edges?.[0]?.node).toMatchObject({ sourceOrderId: 'ord_000001', sourceOrderNumber: '#1001' });
    expect(page.edges?.[0]?.node.currency).toMatch(/^[A-Z]{3}$/);
    expect(page.edges?.[0]?.node.customerEmail).toMatch(/@example\.com$/);
    expect(page.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(page.pageCursors.around.map((c) => c.page)).toEqual([1, 2, 3, 4, 5]);
    expect(page.pageCursors.around.filter((c) => c.isCurrent).map((c) => c.page)).toEqual([1]);
    const third = await call(`${sb.url}/v1/orders?cursor=${page.pageCursors.around[2]?.cursor}`, { token: access_token });
    expect(third.body.edges[0].node.sourceOrderId).toBe('ord_000041');
    expect(third.body.pageCursors.around.find((c: { isCurrent: boolean }) => c.isCurrent).page).toBe(3);
  });

  test('following endCursor over 1,000 orders yields every id exactly once, in order', async () => {
    const sb = await sandbox({ orders: 1000 });
    const { access_token } = sb.issueTokens();
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    for (;;) {
      const q = new URLSearchParams({ size: '73', buttonNum: '3' });
      if (cursor) q.set('cursor', cursor);
      const res = await call(`${sb.url}/v1/orders?${q}`, { token: access_token });
      expect(res.status).toBe(200);
      const page = OrdersPage.parse(res.body);
      pages++;
      expect(page.pageCursors.around.length).toBeLessThanOrEqual(3);
      for (const e of page.edges ?? []) ids.push(e.node.sourceOrderId as string);
      if (!page.pageInfo.hasNextPage) break;
      cursor = page.pageInfo.endCursor;
    }
    expect(pages).toBe(Math.ceil(1000 / 73));
    expect(ids).toHaveLength(1000);
    expect(new Set(ids).size).toBe(1000);
    expect(ids).toEqual(Array.from({ length: 1000 }, (_, i) => `ord_${String(i + 1).padStart(6, '0')}`));
  });

  test('the same seed gives the same orders; records are stable between reads', async () => {
    const a = await sandbox({ seed: 7 });
    const b = await sandbox({ seed: 7 });
    const pa = await call(`${a.url}/v1/orders?size=5`, { token: a.issueTokens().access_token });
    const pb = await call(`${b.url}/v1/orders?size=5`, { token: b.issueTokens().access_token });
    expect(pa.body.edges).toEqual(pb.body.edges);
  });

  // How fast it starts is measured in bench/sandbox.mjs.
  test('a 100,000-order store starts fast and pages to the end', async () => {
    const sb = await sandbox({ orders: 100_000 });
    const { access_token } = sb.issueTokens();
    const first = await call(`${sb.url}/v1/orders?size=250&buttonNum=7`, { token: access_token });
    expect(first.body.totalCount).toBe(100_000);
    expect(first.body.pageCursors.around.at(-1).page).toBe(7);
    // Jump through the farthest page cursor until the last page (400) is current.
    let page = first.body;
    for (let hops = 0; page.pageInfo.hasNextPage && hops < 20; hops++) {
      const far = page.pageCursors.around.at(-1);
      const res = await call(`${sb.url}/v1/orders?size=250&buttonNum=100&cursor=${far.cursor}`, { token: access_token });
      expect(res.status).toBe(200);
      page = res.body;
    }
    expect(page.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    expect(page.pageCursors.around.find((c: { isCurrent: boolean }) => c.isCurrent).page).toBe(400);
    expect(page.edges.at(-1).node.sourceOrderId).toBe('ord_100000');
    expect(sb.order('ord_100000')).toMatchObject({ sourceOrderNumber: '#101000' });
    expect(sb.order('ord_100001')).toBeUndefined();
  });

  test('size over 250, size 0, a bad cursor, an unknown parameter are 400 with the field', async () => {
    const sb = await sandbox();
    const { access_token } = sb.issueTokens();
    const cases: [string, string][] = [
      ['size=251', 'size'],
      ['size=0', 'size'],
      ['size=abc', 'size'],
      ['cursor=not-a-cursor', 'cursor'],
      [`cursor=${Buffer.from('o1:999999').toString('base64url')}`, 'cursor'],
      ['buttonNum=-1', 'buttonNum'],
    ];
    for (const [query, path] of cases) {
      const res = await call(`${sb.url}/v1/orders?${query}`, { token: access_token });
      expect(res.status, query).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(
        res.body.errors.map((e: { path: string }) => e.path),
        query,
      ).toContain(path);
    }
    const max = await call(`${sb.url}/v1/orders?size=250`, { token: access_token });
    expect(max.body.edges).toHaveLength(250);
  });
});

describe('PUT /v1/orders/{id}', () => {
  test('updates the record; the list shows the new fields', async () => {
    const sb = await sandbox();
    const { access_token } = sb.issueTokens();
    const body = { sourceOrderNumber: '#9001', currency: 'EUR', total: 12.34, customerEmail: 'new@example.com' };
    const res = await call(`${sb.url}/v1/orders/ord_000002`, { method: 'PUT', json: body, token: access_token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(sb.counters.ordersUpdated).toBe(1);
    const list = await call(`${sb.url}/v1/orders?size=3`, { token: access_token });
    expect(list.body.edges[1].node).toEqual({ sourceOrderId: 'ord_000002', ...body });
    expect(sb.order('ord_000002')).toEqual({ sourceOrderId: 'ord_000002', ...body });
  });

  test('an unknown order is 404 not_found', async () => {
    const sb = await sandbox();
    const { access_token } = sb.issueTokens();
    for (const id of ['ord_000251', 'ord_999999', 'nope', 'ord_00001']) {
      const res = await call(`${sb.url}/v1/orders/${id}`, {
        method: 'PUT',
        json: { sourceOrderNumber: '#1', currency: 'USD' },
        token: access_token,
      });
      expect(res.status, id).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: `order ${id} not found` });
    }
    expect(sb.counters.ordersUpdated).toBe(0);
  });

  test('validates the body with field paths, refuses non-JSON and needs read_orders', async () => {
    const sb = await sandbox();
    const { access_token } = sb.issueTokens();
    const bad = await call(`${sb.url}/v1/orders/ord_000001`, {
      method: 'PUT',
      json: { sourceOrderNumber: '#1', currency: 'usd', total: 'x', extra: 1 },
      token: access_token,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['currency', 'extra', 'total']);
    const form = await call(`${sb.url}/v1/orders/ord_000001`, {
      method: 'PUT',
      headers: { 'content-type': 'text/plain' },
      body: '{"sourceOrderNumber":"#1","currency":"USD"}',
      token: access_token,
    });
    expect(form.status).toBe(400);
    expect(form.body.message).toContain('application/json');
    const noOrders = sb.issueTokens({ scopes: ['read_claims', 'read_store'] });
    const forbidden = await call(`${sb.url}/v1/orders/ord_000001`, {
      method: 'PUT',
      json: { sourceOrderNumber: '#1', currency: 'USD' },
      token: noOrders.access_token,
    });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.required_scope).toBe('read_orders');
    expect(sb.order('ord_000001')?.sourceOrderNumber).toBe('#1001');
  });
});
