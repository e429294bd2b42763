import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ClaimCreated,
  CURRENCY_CODES,
  fieldIssues,
  GiftCardAmount,
  GiftCardIssueRequest,
  OfflineClaim,
  Order,
  OrdersPage,
  ProductVariant,
  RevokeRequest,
  SessionContext,
  TokenRequest,
  TokenResponse,
} from '../../src/schemas.js';
import { sessionContext } from '../examples.js';
import { claimBody } from '../sandbox/client.js';

const validOrder = {
  sourceOrderNumber: '1001',
  currency: 'USD',
  policyCancelledAt: null,
  sourceCreatedAt: '2026-01-02T03:04:05Z',
  platformId: 'api',
  total: 99.5,
  customerEmail: 'a@example.com',
};

/** The offline claim the sandbox tests send, with the optional images, latitude and signature option. */
const claim = claimBody('store_1');
const validClaim = {
  ...claim,
  item: { ...claim.item, images: ['https://img.example.com/1.png'] },
  shippingAddress: { ...claim.shippingAddress, lat: 1.5 },
  options: { fromValet: false, requireCustomerSignature: true },
};

const validVariant = {
  productId: 'prod_1',
  status: 'ACTIVE',
  name: 'Kettle, red',
  price: 49.99,
  inventoryQuantity: 12,
  productType: 'SIMPLE',
  tax: 7,
  inventoryType: 'FULL',
  bundleProductIds: ['prod_0'],
};

/** Parses and returns the first issue's path and message, or undefined when valid. */
function firstIssue(schema: { safeParse(v: unknown): { success: boolean; error?: unknown } }, value: unknown) {
  const r = schema.safeParse(value) as { success: boolean; error?: import('zod').ZodError };
  return r.success ? undefined : fieldIssues(r.error!)[0];
}

/** The spec's currency list, copied into the repository so the check runs in every clone. */
const CURRENCIES = join(import.meta.dirname, 'spec-currencies.txt');
/** The spec itself, beside the project (../shared/spec) where it is checked out: the copy must match it. */
const SPEC = join(import.meta.dirname, '..', '..', '..', 'shared', 'spec', 'order-protection-api.md');
const listed = (text: string) => [...text.matchAll(/^- [A-Z]: ((?:[A-Z]{3} ?)+)$/gm)].flatMap((m) => (m[1] as string).trim().split(' '));

describe('currency enum', () => {
  it('is exactly the list the spec prints, in its order', () => {
    const fromSpec = listed(readFileSync(CURRENCIES, 'utf8'));
    expect(fromSpec.length).toBeGreaterThan(250);
    expect([...CURRENCY_CODES]).toEqual(fromSpec);
    // Where the spec sits beside the project, the copy has not drifted from it.
    if (existsSync(SPEC)) expect(listed(readFileSync(SPEC, 'utf8'))).toEqual(fromSpec);
  });
  it('has no duplicates and accepts the rare codes', () => {
    expect(new Set(CURRENCY_CODES).size).toBe(CURRENCY_CODES.length);
    for (const code of ['ADP', 'AZN', 'BOV', 'CHW', 'XSU', 'XXX', 'ZWR', 'USD', 'EUR', 'UYW', 'VES', 'SVC']) {
      expect(Order.safeParse({ ...validOrder, currency: code }).success, code).toBe(true);
    }
  });
  it('refuses codes the spec does not list', () => {
    expect(firstIssue(Order, { ...validOrder, currency: 'USX' })?.path).toBe('currency');
    expect(firstIssue(Order, { ...validOrder, currency: 'usd' })?.path).toBe('currency');
  });
});

describe('Order', () => {
  it('accepts the spec shape, null policyCancelledAt included', () => {
    expect(Order.parse(validOrder)).toEqual(validOrder);
  });
  it.each([
    [{ sourceOrderNumber: undefined }, 'sourceOrderNumber'],
    [{ total: '12' }, 'total'],
    [{ total: Number.POSITIVE_INFINITY }, 'total'],
    [{ sourceCreatedAt: '2026-01-02T03:04:05' }, 'sourceCreatedAt'],
    [{ sourceCreatedAt: 'yesterday' }, 'sourceCreatedAt'],
    [{ policyCancelledAt: 5 }, 'policyCancelledAt'],
    [{ platformId: 'Shopify' }, 'platformId'],
    [{ customerEmail: 'nope' }, 'customerEmail'],
    [{ unknownField: 1 }, 'unknownField'],
  ])('refuses %j at %s', (patch, path) => {
    const issue = firstIssue(Order, { ...validOrder, ...patch });
    expect(issue).toBeDefined();
    expect(issue?.path).toBe(path);
  });
});

describe('OfflineClaim', () => {
  it('accepts the spec shape, with an empty signature', () => {
    expect(OfflineClaim.safeParse(validClaim).success).toBe(true);
    expect(OfflineClaim.safeParse({ ...validClaim, signature: 'https://sig.example.com/s.png' }).success).toBe(true);
  });
  it.each([
    [{ salesChannel: 'PHONE' }, 'salesChannel'],
    [{ claimCategory: 'RETURN' }, 'claimCategory'],
    [{ issueType: 'LOST' }, 'issueType'],
    [{ resolution: 'CASH' }, 'resolution'],
    [{ claimFiledFrom: 'PARTNER' }, 'claimFiledFrom'],
    [{ signature: 'not a url' }, 'signature'],
    [{ storeId: '' }, 'storeId'],
    [{ customer: { email: 'x' } }, 'customer.email'],
    [{ item: { ...validClaim.item, price: 'free' } }, 'item.price'],
    [{ item: { ...validClaim.item, images: ['nope'] } }, 'item.images.0'],
    [{ warranty: { ...validClaim.warranty, warrantyPeriod: '1 year' } }, 'warranty.warrantyPeriod'],
    [{ warranty: { ...validClaim.warranty, dateOfPurchase: '2026-13-01T00:00:00Z' } }, 'warranty.dateOfPurchase'],
    [{ shippingAddress: { ...validClaim.shippingAddress, lat: 'north' } }, 'shippingAddress.lat'],
    [{ options: { fromValet: 'yes' } }, 'options.fromValet'],
  ])('refuses %j at %s', (patch, path) => {
    expect(firstIssue(OfflineClaim, { ...validClaim, ...patch })?.path).toBe(path);
  });
  it('accepts every enum value the spec lists', () => {
    for (const issueType of [
      'STOLEN',
      'DAMAGED',
      'ORDER_DELIVERED_NOT_RECEIVED',
      'DEFECTIVE_ITEM',
      'WRONG_ITEM',
      'MISSING_ITEM',
      'RETURNED_TO_SENDER',
      'MULTIPLE',
      'TRACKING_NOT_MOVING',
      'WRONG_ADDRESS',
    ]) {
      expect(OfflineClaim.safeParse({ ...validClaim, issueType }).success, issueType).toBe(true);
    }
    for (const resolution of ['RESHIP', 'REFUND', 'STORE_CREDIT']) expect(OfflineClaim.safeParse({ ...validClaim, resolution }).success).toBe(true);
  });
});

describe('claim creation answer', () => {
  it('needs status ok and a sourceOrderId, and keeps the echoed fields as sent', () => {
    const echo = { ...validClaim, customer: { email: 'C@EXAMPLE.COM' }, sourceOrderId: 'ord_off_1' };
    expect(ClaimCreated.parse({ status: 'ok', payload: echo }).payload).toMatchObject({ sourceOrderId: 'ord_off_1', customer: { email: 'C@EXAMPLE.COM' } });
    expect(firstIssue(ClaimCreated, { status: 'ok', payload: { ...validClaim } })?.path).toBe('payload.sourceOrderId');
    expect(firstIssue(ClaimCreated, { status: 'error', payload: echo })?.path).toBe('status');
  });
});

describe('ProductVariant', () => {
  it('accepts the spec shape; inventoryQuantity is the remaining stock, tax a number (documented choices)', () => {
    expect(ProductVariant.safeParse(validVariant).success).toBe(true);
  });
  it.each([
    [{ status: 'LIVE' }, 'status'],
    [{ productType: 'BUNDLE' }, 'productType'],
    [{ inventoryType: 'NONE' }, 'inventoryType'],
    [{ inventoryQuantity: 'FULL' }, 'inventoryQuantity'],
    [{ inventoryQuantity: -1 }, 'inventoryQuantity'],
    [{ inventoryQuantity: 1.5 }, 'inventoryQuantity'],
    [{ tax: 'tax_1' }, 'tax'],
    [{ inStock: 'yes' }, 'inStock'],
    [{ bundleProductIds: [1] }, 'bundleProductIds.0'],
  ])('refuses %j at %s', (patch, path) => {
    expect(firstIssue(ProductVariant, { ...validVariant, ...patch })?.path).toBe(path);
  });
});

describe('OAuth and session shapes', () => {
  it('token responses carry the spec prefixes and Bearer', () => {
    const ok = { access_token: 'svc_at_x', token_type: 'Bearer', expires_in: 3600, refresh_token: 'svc_rt_y', scope: 'read_orders' };
    expect(TokenResponse.safeParse(ok).success).toBe(true);
    expect(firstIssue(TokenResponse, { ...ok, access_token: 'abc' })?.path).toBe('access_token');
    expect(firstIssue(TokenResponse, { ...ok, refresh_token: 'svc_at_z' })?.path).toBe('refresh_token');
    expect(firstIssue(TokenResponse, { ...ok, token_type: 'bearer' })?.path).toBe('token_type');
  });
  it('token requests are told apart by grant type', () => {
    const base = { client_id: 'svc_app_1', client_secret: 'svc_secret_1' };
    expect(TokenRequest.safeParse({ ...base, grant_type: 'refresh_token', refresh_token: 'svc_rt_1' }).success).toBe(true);
    expect(TokenRequest.safeParse({ ...base, grant_type: 'client_credentials', store_id: 's1', scopes: ['read_orders'] }).success).toBe(true);
    expect(firstIssue(TokenRequest, { ...base, grant_type: 'client_credentials' })?.path).toBe('store_id');
    expect(firstIssue(TokenRequest, { ...base, grant_type: 'password' })?.path).toBe('grant_type');
  });
  it('revoke hints are access_token or refresh_token', () => {
    const ok = { token: 't', client_id: 'c', client_secret: 's', token_type_hint: 'refresh_token' };
    expect(RevokeRequest.safeParse(ok).success).toBe(true);
    expect(firstIssue(RevokeRequest, { ...ok, token_type_hint: 'id_token' })?.path).toBe('token_type_hint');
  });
  it('session context needs every field', () => {
    expect(SessionContext.safeParse(sessionContext).success).toBe(true);
    expect(firstIssue(SessionContext, { ...sessionContext, scopes: 'read_orders' })?.path).toBe('scopes');
  });
  it('a page of orders keeps unknown node fields', () => {
    const page = {
      pageInfo: { startCursor: 'a', endCursor: 'b', hasNextPage: true, hasPreviousPage: false },
      pageCursors: { around: [{ cursor: 'a', page: 1, isCurrent: true }] },
      totalCount: 1,
      edges: [{ node: { sourceOrderId: 'o1', currency: 'USD', somethingNew: 1 } }],
    };
    expect(OrdersPage.parse(page).edges?.[0]?.node).toMatchObject({ somethingNew: 1 });
    expect(firstIssue(OrdersPage, { ...page, totalCount: '1' })?.path).toBe('totalCount');
  });
});

describe('gift card amounts', () => {
  it.each([0, -5, 1.234, Number.NaN])('refuses %s', (n) => {
    expect(GiftCardAmount.safeParse(n).success).toBe(false);
  });
  it.each([0.01, 25, 25.5, 0.1 + 0.2, 1999.99])('accepts %s', (n) => {
    expect(GiftCardAmount.safeParse(n).success).toBe(true);
  });
  it('issue requests need a valid recipient e-mail', () => {
    const req = {
      shop_url: 's.example',
      gift_card: { balance: 5, note: 'Claim C1, order 1001' },
      email_details: { recipient: 'A', recipient_email: 'bad', title: 't', subject: 's', body: 'b' },
    };
    expect(firstIssue(GiftCardIssueRequest, req)?.path).toBe('email_details.recipient_email');
  });
});
