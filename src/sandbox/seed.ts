/** Seeded data of the sandbox: the app, the store, the merchant, the customers and generated orders. */
import { randomBytes, randomUUID } from 'node:crypto';
import type { OrderRecord } from '../schemas.js';
import type { SandboxCustomer } from './types.js';

/** Granted at installation; client credentials and consent never exceed them. */
export const GRANTED_SCOPES = ['read_orders', 'read_claims', 'read_store'] as const;

/** Any port is accepted (RFC 8252 loopback rule). */
export const REGISTERED_REDIRECT_URI = 'http://127.0.0.1/callback';

export const MERCHANT = {
  userId: 'user_1001',
  email: 'merchant@example.com',
  firstName: 'Morgan',
  lastName: 'Merchant',
} as const;

export const APP_NAME = 'Order Protection Sandbox App';
export const STORE_NAME = 'Sandbox Store';

/** Secrets are random per start. */
export function makeIdentity() {
  return {
    client: {
      clientId: 'svc_app_opcli_sandbox',
      clientSecret: `svc_secret_${randomBytes(18).toString('base64url')}`,
      redirectUri: REGISTERED_REDIRECT_URI,
    },
    store: {
      storeId: 'store_1001',
      installationId: 'inst_1001',
      applicationId: 'app_1001',
      shopUrl: 'sandbox-store.example',
      providerToken: `gly_${randomBytes(18).toString('hex')}`,
      triggerId: randomUUID(),
      scopes: [...GRANTED_SCOPES] as string[],
    },
    otherStoreId: 'store_2002',
    sessionSecret: randomBytes(32),
  };
}

export function seedCustomers(): SandboxCustomer[] {
  return [
    { customerId: 'cust_1001', email: 'alice@example.com', name: 'Alice Example', loyaltyBalance: 10 },
    { customerId: 'cust_1002', email: 'bob@example.com', name: 'Bob Example', loyaltyBalance: null },
    { customerId: 'cust_1003', email: 'carol@example.com', name: 'Carol Example', loyaltyBalance: null },
  ];
}

const FIRST = ['Ada', 'Ben', 'Cleo', 'Dan', 'Eve', 'Finn', 'Gia', 'Hal', 'Ivy', 'Jon', 'Kim', 'Leo'];
const LAST = ['Archer', 'Baker', 'Carter', 'Dyer', 'Ellis', 'Fisher', 'Gardner', 'Hunter', 'Irwin', 'Jones'];
const CURRENCIES = ['USD', 'USD', 'USD', 'EUR', 'GBP', 'CAD', 'AUD'] as const;
const PLATFORMS = ['api', 'shopify', 'woocommerce', 'bigcommerce', 'magento'] as const;
const EPOCH = Date.UTC(2024, 0, 1);

/** A 32-bit hash of (seed, index), so a record never depends on the others. */
function mix(seed: number, index: number, salt: number): number {
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b1) ^ Math.imul(salt, 0x85ebca6b)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

/** ord_000001 at index 0. */
export function orderId(index: number): string {
  return `ord_${String(index + 1).padStart(6, '0')}`;
}

/** -1 when the id names none of `total` orders. */
export function orderIndex(id: string, total: number): number {
  const m = /^ord_(\d{6,})$/.exec(id);
  if (!m?.[1]) return -1;
  const n = Number(m[1]);
  if (String(n).padStart(6, '0') !== m[1]) return -1;
  return n >= 1 && n <= total ? n - 1 : -1;
}

/** From the seed alone: 100,000 orders cost no memory until read. */
export function generateOrder(seed: number, index: number): OrderRecord {
  const r = (salt: number) => mix(seed, index, salt);
  const subtotal = 1000 + (r(1) % 49000);
  const discount = r(2) % 4 === 0 ? Math.floor(subtotal / 10) : 0;
  const shipping = [0, 499, 999][r(3) % 3] ?? 0;
  const tax = Math.round((subtotal - discount) * 0.08);
  const premium = Math.round(subtotal * 0.02) + 99;
  const first = FIRST[r(4) % FIRST.length] ?? 'Ada';
  const last = LAST[r(5) % LAST.length] ?? 'Archer';
  const created = new Date(EPOCH + index * 600_000 + (r(6) % 600) * 1000).toISOString();
  return {
    sourceOrderId: orderId(index),
    sourceOrderNumber: `#${1001 + index}`,
    currency: CURRENCIES[r(7) % CURRENCIES.length] ?? 'USD',
    platformId: PLATFORMS[r(8) % PLATFORMS.length] ?? 'api',
    sourceCreatedAt: created,
    sourceUpdatedAt: created,
    subtotal: subtotal / 100,
    discountTotal: discount / 100,
    shippingCost: shipping / 100,
    tax: tax / 100,
    premiumPaid: premium / 100,
    total: (subtotal - discount + shipping + tax + premium) / 100,
    customerEmail: `${first}.${last}.${index + 1}@example.com`.toLowerCase(),
    customerName: `${first} ${last}`,
    policyCancelledAt: null,
  };
}
