/** Small HTTP helpers for the sandbox tests: real requests over loopback with undici, and the per-test sandbox. */
import { request } from 'undici';
import { afterEach, beforeEach } from 'vitest';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/index.js';

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  body: any;
}

/**
 * The set-up the sandbox test files share: a new sandbox before each test (started with
 * `sandbox()`), closed after it. `bind` hands the file the sandbox and, with `token`, an access
 * token it issued (else '').
 */
export function sandboxSuite(bind: (s: { sb: Sandbox; token: string }) => void, options: { sandbox?: () => SandboxOptions; token?: boolean } = {}): void {
  let sb: Sandbox;
  beforeEach(async () => {
    sb = await startSandbox(options.sandbox?.());
    bind({ sb, token: options.token ? sb.issueTokens().access_token : '' });
  });
  afterEach(async () => {
    await sb.close();
  });
}

/** Sends one request and reads the whole answer; a JSON answer is parsed into `body`. */
export async function call(
  url: string,
  options: { method?: string; headers?: Record<string, string>; json?: unknown; body?: string; token?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  let body = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await request(url, {
    method: (options.method ?? (body !== undefined ? 'POST' : 'GET')) as 'GET',
    headers,
    body,
  });
  const text = await res.body.text();
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
  let parsed: unknown;
  if (flat['content-type']?.startsWith('application/json')) parsed = JSON.parse(text);
  return { status: res.statusCode, headers: flat, text, body: parsed };
}

/**
 * One request to a sandbox's admin API (`path` begins /__admin), with the run's admin secret as a
 * bearer token and a JSON content type on anything but a GET: the one place tests pass the secret.
 */
export function admin(
  sb: Pick<Sandbox, 'url' | 'adminSecret'>,
  path: string,
  options: { method?: string; headers?: Record<string, string>; json?: unknown; body?: string } = {},
): Promise<Answer> {
  const method = options.method ?? (options.json !== undefined || options.body !== undefined ? 'POST' : 'GET');
  const headers: Record<string, string> = { authorization: `Bearer ${sb.adminSecret}`, ...options.headers };
  if (method !== 'GET') headers['content-type'] ??= 'application/json';
  return call(`${sb.url}${path}`, { ...options, method, headers });
}

/** The client credentials of a sandbox as token request fields. */
export function clientFields(sb: Sandbox) {
  return { client_id: sb.client.clientId, client_secret: sb.client.clientSecret };
}

/** A valid offline claim body. */
export function claimBody(storeId: string, overrides: Record<string, unknown> = {}) {
  return {
    customer: { email: 'alice@example.com', phoneNumber: '+15550100' },
    item: { name: 'Kettle', price: 49.99, sku: 'KT-1', details: 'cracked lid' },
    warranty: { dateOfPurchase: '2024-05-01T10:00:00Z', warrantyPeriod: 'P1Y', receiptRequired: false },
    shippingAddress: {
      firstName: 'Alice',
      lastName: 'Example',
      address1: '1 Main St',
      city: 'Springfield',
      zip: '12345',
      country: 'United States',
    },
    storeId,
    signature: '',
    salesChannel: 'IN_STORE',
    claimCategory: 'WARRANTY',
    issueType: 'DEFECTIVE_ITEM',
    resolution: 'STORE_CREDIT',
    claimFiledFrom: 'EXTERNAL',
    options: { fromValet: false },
    ...overrides,
  };
}

/** A valid product variant body. */
export function variantBody(productId: string, overrides: Record<string, unknown> = {}) {
  return {
    productId,
    status: 'ACTIVE',
    name: 'Mug, blue',
    price: 12.5,
    inventoryQuantity: 7,
    productType: 'SIMPLE',
    ...overrides,
  };
}

/** Opens the consent page with the given query and answers it; resolves to the redirect's URL. */
export async function consent(sb: Sandbox, query: Record<string, string>, decision: 'approve' | 'deny' = 'approve'): Promise<URL> {
  const page = await call(`${sb.authorizeUrl}?${new URLSearchParams(query)}`);
  if (page.status === 302) return new URL(page.headers.location as string);
  const id = /name="request_id" value="([^"]+)"/.exec(page.text)?.[1];
  if (page.status !== 200 || !id) throw new Error(`consent page answered ${page.status}: ${page.text}`);
  const answer = await call(`${sb.url}/v1/oauth/authorize/decision`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ request_id: id, decision }).toString(),
  });
  if (answer.status !== 302) throw new Error(`decision answered ${answer.status}: ${answer.text}`);
  return new URL(answer.headers.location as string);
}
