/**
 * The provider's credit API, the trigger workflow and the storefront's native gift card over the HTTP
 * core. Provider calls carry the credit API token in `x-<provider>-access-token`, never the Bearer
 * token, which only the native call carries, and only to the service's own origin. Requests that move
 * money are never retried: the PUT top-up adds to a balance, so it is not idempotent either.
 */
import { providerTokenRefusal } from '../config/origin.js';
import type { ResolvedProfile } from '../config/profile.js';
import { startDeadline, type Timers } from '../core/timers.js';
import type { z } from 'zod';
import type { HttpClient } from '../http/client.js';
import type { Redactor } from '../core/redact.js';
import { ApiError, OpcliError, RedirectError, TimeoutError, UsageError, isOutcomeUncertain } from '../core/errors.js';
import {
  GiftCard,
  type GiftCardIssueRequest,
  GiftCardLookupQuery,
  type GiftCardTopUpRequest,
  type NativeGiftCardRequest,
  PROVIDER_ERRORS,
} from '../schemas.js';
import { bodySays, readErrorBody } from '../http/error-body.js';
import { safeLine } from '../text/safe.js';

export type ProviderSettings = ResolvedProfile['provider'];

/** What a provider answer means, read from its message wherever the body puts it. */
type ProviderCondition = 'api-key' | 'store-domain' | 'balance-update' | 'no-card' | 'other';

/** The spec's three provider messages, matched anywhere in the body. */
const SPEC_MESSAGES: { condition: Exclude<ProviderCondition, 'no-card' | 'other'>; message: string }[] = [
  { condition: 'api-key', message: PROVIDER_ERRORS.apiKeyNotFound },
  { condition: 'store-domain', message: PROVIDER_ERRORS.storeDomainNotFound },
  { condition: 'balance-update', message: PROVIDER_ERRORS.balanceUpdateFailure },
];

/** CHOICE (docs/spec-choices.md#no-loyalty-card): "no card" is only a 404 saying one of these (and none of the spec's messages). */
const NO_CARD_PHRASES = ['gift card not found', 'card not found', 'no gift card', 'customer has no card', 'no card found'];

/** Advice for each provider message of the spec's error table. */
export const PROVIDER_ADVICE: Record<Exclude<ProviderCondition, 'no-card' | 'other'>, string> = {
  'api-key':
    'The credit API token is wrong, expired or revoked. Create a new token at the provider and store it with `opcli giftcard setup` (or `opcli config set provider-token --stdin`); `opcli giftcard setup --check` tests it.',
  'store-domain':
    'The provider does not know this store: it is not configured there, it was archived or deactivated, or its domain does not match the storefront. Compare `opcli config get shop-url` with the store domain at the provider and fix it with `opcli giftcard setup --shop-url <domain>`.',
  'balance-update':
    'The provider could not add to the card: the gift card id does not exist, the card has expired, the card is not linked to the customer id, or the amount is not a valid positive number. Check the card at the provider, or issue without --customer-id to create a new card.',
};

/** The condition and the message (made safe for a terminal) of a provider error answer. */
export function readProviderAnswer(status: number, body: unknown): { condition: ProviderCondition; message: string } {
  const info = readErrorBody(body);
  for (const known of SPEC_MESSAGES) if (bodySays(info, known.message)) return { condition: known.condition, message: known.message };
  const said = info.message !== undefined ? safeLine(info.message) : undefined;
  if (status === 404 && NO_CARD_PHRASES.some((phrase) => bodySays(info, phrase))) return { condition: 'no-card', message: said ?? 'no card' };
  return { condition: 'other', message: said ?? `HTTP ${status}` };
}

export class ProviderRefusedError extends OpcliError {
  readonly status: number;
  readonly providerMessage: string;
  readonly condition: ProviderCondition;
  constructor(what: string, status: number, answer: { condition: ProviderCondition; message: string }, cause?: unknown) {
    const advice = answer.condition === 'no-card' || answer.condition === 'other' ? undefined : PROVIDER_ADVICE[answer.condition];
    super(`${what} was refused by the gift card provider (${status}): ${answer.message}`, {
      hint:
        advice ??
        (status >= 500
          ? 'The provider had a problem. Nothing more was sent; check the card at the provider before trying again.'
          : status === 401 || status === 403
            ? 'The provider did not accept the credit API token. Check it with `opcli giftcard setup --check`.'
            : undefined),
      details: { status, providerMessage: answer.message, condition: answer.condition },
      cause,
    });
    this.status = status;
    this.providerMessage = answer.message;
    this.condition = answer.condition;
  }
}

/** Converts a provider ApiError into ProviderRefusedError with advice; other errors pass through. */
function explain(what: string, error: unknown): unknown {
  if (error instanceof ApiError && !(error instanceof RedirectError) && !isOutcomeUncertain(error)) {
    return new ProviderRefusedError(what, error.status, readProviderAnswer(error.status, error.body), error);
  }
  return error;
}

/** Why a provider name cannot form the header `x-<name>-access-token` (an RFC 9110 token), or undefined. */
export function providerNameProblem(name: string): string | undefined {
  if (/^[A-Za-z0-9-]+$/.test(name)) return undefined;
  return `provider name "${safeLine(name)}" cannot form the header x-<name>-access-token: use letters, digits and - only (e.g. giftly).`;
}

/** Why the native call, which carries the service's Bearer token, may not go to `nativeUrl` (not the base URL's origin), or undefined. */
export function nativeUrlProblem(nativeUrl: string | undefined, baseUrl: string | undefined): string | undefined {
  if (!nativeUrl) return undefined;
  if (!URL.canParse(nativeUrl)) return `native-url "${nativeUrl}" is not a URL.`;
  const native = new URL(nativeUrl);
  if (!baseUrl)
    return `native-url ${native.origin} cannot be checked against the service's host: no base URL is configured, and the native call carries the service's access token.`;
  if (!URL.canParse(baseUrl)) return `the base URL "${baseUrl}" is not a URL, so native-url cannot be checked against it.`;
  const base = new URL(baseUrl);
  if (native.origin !== base.origin) {
    return `native-url ${native.origin} is not on the service's host ${base.origin}: the native gift card call carries the service's access token, which is sent only to the service's own host.`;
  }
  return undefined;
}

export const NATIVE_URL_HINT =
  "Point native-url at the service's own host: `opcli config set native-url <base-url>/…` (see `opcli config get base-url`), or unset it with `opcli config unset native-url`.";

/** Milliseconds as seconds for people: 4500 → "4.5 s". */
export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s < 10 ? s.toFixed(1) : s.toFixed(0)} s`;
}

function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`;
}

/** One HTTP request as `--dry-run` shows it. */
export interface PlannedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
}

export class ProviderClient {
  constructor(
    private readonly http: HttpClient,
    private readonly settings: ProviderSettings,
    private readonly signal: AbortSignal | undefined,
    private readonly timeoutMs: number | undefined,
    /** The run's timers: a poll's deadline passes by them (a test's manual clock), not by real time. */
    private readonly timers: Timers,
  ) {}

  get tokenHeader(): string {
    return `x-${(this.settings.name ?? '').toLowerCase()}-access-token`;
  }

  private headers(): Record<string, string> {
    if (!this.settings.token) return {};
    // The token goes only to the provider URL it was stored for (src/config/origin.ts).
    const refused = providerTokenRefusal(this.settings.tokenOrigin, this.settings.apiUrl);
    if (refused) throw refused;
    return { [this.tokenHeader]: this.settings.token };
  }

  private apiUrl(path: string): string {
    if (!this.settings.apiUrl)
      throw new UsageError('No provider-api-url is configured.', 'Run `opcli giftcard setup` or `opcli config set provider-api-url <url>`.');
    return joinUrl(this.settings.apiUrl, path);
  }

  /** A request as it would be sent, the token masked; `auth` says which credential goes with it. */
  plan(method: string, url: string, body?: unknown, auth: 'token' | 'bearer' | 'trigger' = 'token'): PlannedRequest {
    const withToken = auth === 'token' || (auth === 'trigger' && this.settings.triggerSendsToken);
    const headers: Record<string, string> =
      auth === 'bearer' ? { authorization: 'Bearer ***' } : withToken && this.settings.token ? { [this.tokenHeader]: '***' } : {};
    return { method, url, headers, ...(body !== undefined ? { body } : {}) };
  }

  lookupUrl(customerId: string): string {
    const url = new URL(this.apiUrl('/v2/gift-cards/'));
    url.searchParams.set('shop_url', this.settings.shopUrl ?? '');
    url.searchParams.set('customer_id', customerId);
    return url.toString();
  }

  issueUrl(): string {
    return this.apiUrl('/v2/gift-cards/issue/');
  }

  /** The top-up URL; `raw` keeps a placeholder such as {gift_card_id} readable in --dry-run. */
  topUpUrl(giftCardId: string, raw = false): string {
    return this.apiUrl(`/v2/gift-cards/${raw ? giftCardId : encodeURIComponent(giftCardId)}`);
  }

  triggerUrl(): string {
    if (!this.settings.triggerUrl || !this.settings.triggerId) throw new UsageError('No trigger-url / trigger-id is configured.');
    return joinUrl(this.settings.triggerUrl, `/${encodeURIComponent(this.settings.triggerId)}`);
  }

  nativeUrl(): string {
    if (!this.settings.nativeUrl) throw new UsageError('No native-url is configured.', 'Run `opcli config set native-url <url>`.');
    return joinUrl(this.settings.nativeUrl, '/gift-cards');
  }

  /** GET /v2/gift-cards/: the loyalty card, or null when the provider says there is none (NO_CARD_PHRASES); a poll's ends by `timeoutMs`. */
  async lookup(customerId: string, options: { retry?: 'never'; timeoutMs?: number } = {}): Promise<GiftCard | null> {
    const query = GiftCardLookupQuery.parse({ shop_url: this.settings.shopUrl, customer_id: customerId });
    const limit = options.timeoutMs !== undefined ? Math.max(1, Math.min(options.timeoutMs, this.timeoutMs ?? Number.POSITIVE_INFINITY)) : undefined;
    // The deadline (on the run's timers) aborts the request wherever it is, a shared 429 pause included.
    const deadline = limit !== undefined ? startDeadline(this.timers, limit, this.signal) : undefined;
    try {
      const res = await this.http.request(
        {
          method: 'GET',
          url: this.lookupUrl(query.customer_id),
          headers: this.headers(),
          auth: false,
          smallAnswer: true,
          signal: deadline?.signal ?? this.signal,
          timeoutMs: this.timeoutMs,
          ...(options.retry ? { retry: options.retry } : {}),
        },
        GiftCard,
      );
      return res.body;
    } catch (error) {
      if (deadline?.expired && !this.signal?.aborted) {
        throw new TimeoutError(`Looking up the loyalty card of ${customerId} did not answer within ${formatSeconds(limit ?? 0)}`, error);
      }
      // A redirect keeps its own error, named as every command names it.
      if (!(error instanceof ApiError) || error instanceof RedirectError) throw error;
      const answer = readProviderAnswer(error.status, error.body);
      if (error.status === 404 && answer.condition === 'no-card') return null;
      // Every other refusal, a 5xx included, is a ProviderRefusedError: the chain stops before money moves.
      throw new ProviderRefusedError(`Looking up the loyalty card of ${customerId}`, error.status, answer, error);
    } finally {
      deadline?.clear();
    }
  }

  /** POST /v2/gift-cards/issue/: a new card. Never retried. */
  issue(body: GiftCardIssueRequest): Promise<GiftCard> {
    return this.moveMoney('POST', this.issueUrl(), body, 'Creating the gift card', GiftCard);
  }

  /** PUT /v2/gift-cards/{id}: adds to a card's balance. Never retried (not idempotent in effect). */
  topUp(giftCardId: string, body: GiftCardTopUpRequest): Promise<GiftCard> {
    return this.moveMoney('PUT', this.topUpUrl(giftCardId), body, `Adding credit to gift card ${giftCardId}`, GiftCard);
  }

  /** POST the trigger's execute URL, never retried; it may be on another host, so the token goes only with `trigger-sends-token`. */
  async executeTrigger(body: { email: string; amount: number }): Promise<void> {
    const url = this.triggerUrl();
    await this.moveMoney('POST', url, body, 'Running the trigger workflow', undefined, this.settings.triggerSendsToken ? this.headers() : {});
  }

  /** A call that moves money: the credit API's token unless `headers` say otherwise, never retried, a refusal explained as `what`; `answer` reads the body. */
  private async moveMoney<T>(method: 'POST' | 'PUT', url: string, body: unknown, what: string, answer?: z.ZodType<T>, headers = this.headers()): Promise<T> {
    try {
      const res = await this.http.request(
        { method, url, headers, json: body, auth: false, retry: 'never', smallAnswer: true, signal: this.signal, timeoutMs: this.timeoutMs },
        answer,
      );
      return res.body;
    } catch (error) {
      throw explain(what, error);
    }
  }

  /** POST {native_url}/gift-cards with the Bearer token, never retried; only on the service's own origin. */
  async native(body: NativeGiftCardRequest): Promise<GiftCard> {
    const problem = nativeUrlProblem(this.settings.nativeUrl, this.http.baseUrl);
    if (problem) throw new UsageError(problem, NATIVE_URL_HINT);
    try {
      const res = await this.http.request(
        { method: 'POST', url: this.nativeUrl(), json: body, retry: 'never', smallAnswer: true, signal: this.signal, timeoutMs: this.timeoutMs },
        GiftCard,
      );
      return res.body;
    } catch (error) {
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) throw error;
      throw explain('Creating the native gift card', error);
    }
  }
}

export async function providerClient(
  deps: { profile(): Promise<ResolvedProfile>; http(): Promise<HttpClient>; redactor: Redactor; signal: AbortSignal; timers: Timers },
  timeoutMs?: number,
): Promise<{ client: ProviderClient; settings: ProviderSettings }> {
  const profile = await deps.profile();
  deps.redactor.add(profile.provider.token);
  const http = await deps.http();
  return { client: new ProviderClient(http, profile.provider, deps.signal, timeoutMs, deps.timers), settings: profile.provider };
}
