import { describe, expect, test } from 'vitest';
import { ClaimCreated } from '../../src/schemas.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { call, claimBody, sandboxSuite, variantBody } from './client.js';

let sb: Sandbox;
let token: string;
sandboxSuite((s) => ({ sb, token } = s), { token: true });

const paths = (body: { errors: { path: string }[] }) => body.errors.map((e) => e.path);

describe('POST /v1/claims/offline', () => {
  test('answers the payload less claimFiledFrom and options, plus a new sourceOrderId; stores the raw body', async () => {
    const body = claimBody(sb.store.storeId);
    const res = await call(`${sb.url}/v1/claims/offline`, { json: body, token });
    expect(res.status).toBe(200);
    const created = ClaimCreated.parse(res.body);
    const { claimFiledFrom: _f, options: _o, ...expected } = body;
    expect(res.body.payload).toEqual({ ...expected, sourceOrderId: created.payload.sourceOrderId });
    expect(res.body.payload).not.toHaveProperty('claimFiledFrom');
    expect(res.body.payload).not.toHaveProperty('options');
    const second = await call(`${sb.url}/v1/claims/offline`, { json: body, token });
    expect(second.body.payload.sourceOrderId).not.toBe(created.payload.sourceOrderId);
    expect(sb.counters.claimsCreated).toBe(2);
    expect(sb.claims).toHaveLength(2);
    expect(JSON.parse(sb.claims[0]?.raw as string)).toEqual(body);
    expect(sb.claims[0]?.sourceOrderId).toBe(created.payload.sourceOrderId);
  });

  test('a bad body is 400 with each field path, and nothing is stored', async () => {
    const body = claimBody(sb.store.storeId, {
      item: { name: 'Kettle', price: 'free' },
      customer: { email: 'not-an-email' },
      salesChannel: 'MAIL',
    });
    const res = await call(`${sb.url}/v1/claims/offline`, { json: body, token });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(paths(res.body).sort()).toEqual(['customer.email', 'item.price', 'salesChannel']);
    expect(res.body.message).toContain('invalid offline claim');
    expect(sb.counters.claimsCreated).toBe(0);
    expect(sb.claims).toHaveLength(0);
  });

  test('non-JSON content-type and invalid JSON are 400; no scope is 403', async () => {
    const text = await call(`${sb.url}/v1/claims/offline`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify(claimBody(sb.store.storeId)),
      token,
    });
    expect(text.status).toBe(400);
    const broken = await call(`${sb.url}/v1/claims/offline`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"customer":',
      token,
    });
    expect(broken.status).toBe(400);
    expect(broken.body.message).toContain('not valid JSON');
    const noClaims = sb.issueTokens({ scopes: ['read_orders', 'read_store'] }).access_token;
    const forbidden = await call(`${sb.url}/v1/claims/offline`, { json: claimBody(sb.store.storeId), token: noClaims });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.required_scope).toBe('read_claims');
    expect(sb.claims).toHaveLength(0);
  });

  // Its speed (claims against 404s per second, the ratio it used to assert) is in bench/sandbox.mjs.
  test('a claim costs about what an empty round trip costs, at concurrency 8', async () => {
    const body = JSON.stringify(claimBody(sb.store.storeId));
    const send = (path: string, expected: number) => async () => {
      const res = await call(`${sb.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, token });
      expect(res.status).toBe(expected);
    };
    const run = async (total: number, one: () => Promise<void>) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < total) {
            next++;
            await one();
          }
        }),
      );
    };
    await run(200, send('/v1/claims/offline', 200));
    await run(50, send('/v1/nothing', 404));
    expect(sb.counters.claimsCreated).toBe(200);
    expect(new Set(sb.claims.map((c) => c.sourceOrderId)).size).toBe(200);
  });
});

describe('POST /v2/products/{productId}/children', () => {
  test('creates a variant and stores it', async () => {
    const res = await call(`${sb.url}/v2/products/prod_1/children`, { json: variantBody('prod_1', { variantId: 'var_1' }), token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(sb.counters.variantsCreated).toBe(1);
    expect(sb.variants[0]).toMatchObject({ productId: 'prod_1', variant: { variantId: 'var_1', name: 'Mug, blue' } });
  });

  test('the body productId must equal the path productId', async () => {
    const res = await call(`${sb.url}/v2/products/prod_1/children`, { json: variantBody('prod_2'), token });
    expect(res.status).toBe(400);
    expect(paths(res.body)).toEqual(['productId']);
    expect(sb.variants).toHaveLength(0);
  });

  test('bundleProductIds must name variants already created', async () => {
    await call(`${sb.url}/v2/products/prod_1/children`, { json: variantBody('prod_1', { variantId: 'var_a' }), token });
    const bundle = variantBody('prod_b', { productType: 'FULL', bundleProductIds: ['var_a', 'var_missing', 'prod_1', 'x'] });
    const res = await call(`${sb.url}/v2/products/prod_b/children`, { json: bundle, token });
    expect(res.status).toBe(400);
    expect(paths(res.body)).toEqual(['bundleProductIds.1', 'bundleProductIds.3']);
    const ok = await call(`${sb.url}/v2/products/prod_b/children`, {
      json: { ...bundle, bundleProductIds: ['var_a', 'prod_1'] },
      token,
    });
    expect(ok.status).toBe(200);
    expect(sb.counters.variantsCreated).toBe(2);
  });

  test('schema errors name the fields; the scope is read_store', async () => {
    const bad = await call(`${sb.url}/v2/products/prod_1/children`, {
      json: variantBody('prod_1', { status: 'LIVE', inventoryQuantity: 'FULL', price: undefined }),
      token,
    });
    expect(bad.status).toBe(400);
    expect(paths(bad.body).sort()).toEqual(['inventoryQuantity', 'price', 'status']);
    const t = sb.issueTokens({ scopes: ['read_orders'] }).access_token;
    const forbidden = await call(`${sb.url}/v2/products/prod_1/children`, { json: variantBody('prod_1'), token: t });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({ error: 'insufficient_scope', required_scope: 'read_store' });
    expect(sb.counters.variantsCreated).toBe(0);
  });
});

describe('routing', () => {
  test('an unknown route is a JSON 404; a wrong method is a 405 with Allow', async () => {
    const missing = await call(`${sb.url}/v1/nothing`, { token });
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toBe('application/json');
    expect(missing.body.error).toBe('not_found');
    const wrong = await call(`${sb.url}/v1/claims/offline`, { token });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('POST');
  });
});
