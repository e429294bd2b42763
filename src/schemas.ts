/**
 * Every resource of the API specification as a zod schema, written once (types inferred from them).
 * Where the spec is silent or contradicts itself: "CHOICE", documented in docs/spec-choices.md.
 */
import * as z from 'zod';
import { ORDER_FIELD_NAMES } from './order-fields.js';

/** A schema built on its first use, not at import (a command uses a few); the value behaves as the schema, `instanceof` too. */
export function lazy<T extends object>(build: () => T): T {
  let real: T | undefined;
  const get = (): T => {
    real ??= build();
    return real;
  };
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(get(), key),
    has: (_, key) => Reflect.has(get(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(get()),
    set: (_, key, value) => Reflect.set(get(), key, value),
  });
}

// Scalars

/** The spec's complete currency list, every code of it, grouped by first letter as it prints them. */
export const CURRENCY_CODES = [
  ...'ADP AED AFA AFN ALK ALL AMD ANG AOA AOK AON AOR ARA ARP ARS ARY ATS AUD AWG AYM AZM AZN'.split(' '),
  ...'BAD BAM BBD BDT BEC BEF BEL BGJ BGK BGL BGN BHD BIF BMD BND BOB BOP BOV BRB BRC BRE BRL BRN BRR BSD BTN BUK BWP BYB BYN BYR BZD'.split(' '),
  ...'CAD CDF CHC CHE CHF CHW CLF CLP CNY COP COU CRC CSD CSJ CSK CUC CUP CVE CYP CZK'.split(' '),
  ...'DDM DEM DJF DKK DOP DZD'.split(' '),
  ...'ECS ECV EEK EGP ERN ESA ESB ESP ETB EUR'.split(' '),
  ...'FIM FJD FKP FRF'.split(' '),
  ...'GBP GEK GEL GHC GHP GHS GIP GMD GNE GNF GNS GQE GRD GTQ GWE GWP GYD'.split(' '),
  ...'HKD HNL HRD HRK HTG HUF'.split(' '),
  ...'IDR IEP ILP ILR ILS INR IQD IRR ISJ ISK ITL'.split(' '),
  ...'JMD JOD JPY'.split(' '),
  ...'KES KGS KHR KMF KPW KRW KWD KYD KZT'.split(' '),
  ...'LAJ LAK LBP LKR LRD LSL LSM LTL LTT LUC LUF LUL LVL LVR LYD'.split(' '),
  ...'MAD MDL MGA MGF MKD MLF MMK MNT MOP MRO MRU MTL MTP MUR MVQ MVR MWK MXN MXP MXV MYR MZE MZM MZN'.split(' '),
  ...'NAD NGN NIC NIO NLG NOK NPR NZD'.split(' '),
  ...'OMR'.split(' '),
  ...'PAB PEH PEI PEN PES PGK PHP PKR PLN PLZ PTE PYG'.split(' '),
  ...'QAR'.split(' '),
  ...'RHD ROK ROL RON RSD RUB RUR RWF'.split(' '),
  ...'SAR SBD SCR SDD SDG SDP SEK SGD SHP SIT SKK SLL SOS SRD SRG SSP STD STN SUR SVC SYP SZL'.split(' '),
  ...'THB TJR TJS TMM TMT TND TOP TPE TRL TRY TTD TWD TZS'.split(' '),
  ...'UAH UAK UGS UGW UGX USD USN USS UYI UYN UYP UYU UYW UZS'.split(' '),
  ...'VEB VEF VES VNC VND VUV'.split(' '),
  ...'WST'.split(' '),
  ...'XAF XAG XAU XBA XBB XBC XBD XCD XDR XEU XFO XFU XOF XPD XPF XPT XRE XSU XTS XUA XXX'.split(' '),
  ...'YDD YER YUD YUM YUN'.split(' '),
  ...'ZAL ZAR ZMK ZMW ZRN ZRZ ZWC ZWD ZWL ZWN ZWR'.split(' '),
] as const;

export const Currency = lazy(() => z.enum(CURRENCY_CODES));
export type Currency = z.infer<typeof Currency>;

/** An e-mail address. */
export const EmailAddress = lazy(() => z.email());

/** ISO 8601 date-time that carries a time zone (Z or an offset). */
export const DateTime = lazy(() => z.iso.datetime({ offset: true }));

/** ISO 8601 duration such as P1Y, P6M, P2W or P1DT12H. */
export const IsoDuration = lazy(() => z.iso.duration());

/**
 * CHOICE (docs/spec-choices.md#platformid): the spec names platformId's values as "api plus four lowercase platform names" without
 * printing the four. opcli accepts `api` or any lowercase identifier, so no real platform is refused.
 */
export const PlatformId = lazy(() => z.string().regex(/^[a-z][a-z0-9_-]*$/, { message: 'expected "api" or a lowercase platform name such as "shopify"' }));

const FiniteNumber = lazy(() => z.number().refine(Number.isFinite, { message: 'expected a finite number' }));
const Money = lazy(() => FiniteNumber);
/** A price, amount or cost: nothing a store charges or pays is below zero. */
const NonNegativeMoney = lazy(() => Money.refine((n) => n >= 0, { message: 'expected an amount of 0 or more' }));
/** Degrees north or south: a latitude exists only from -90 to 90. */
const Latitude = lazy(() => FiniteNumber.refine((n) => n >= -90 && n <= 90, { message: 'expected a latitude from -90 to 90' }));
/** Degrees east or west: a longitude exists only from -180 to 180. */
const Longitude = lazy(() => FiniteNumber.refine((n) => n >= -180 && n <= 180, { message: 'expected a longitude from -180 to 180' }));

/**
 * CHOICE (docs/spec-choices.md#image-urls): the spec calls these image URLs (and the signature a URI) without naming schemes. The
 * service has to fetch an image, so opcli accepts http and https only; `javascript:`, `file:` or a
 * bare `foo:bar`, which a URL parser accepts, are refused before anything is sent.
 */
const ImageUrl = lazy(() => z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }));

// Order (endpoint 5 body) and order records (endpoint 4 nodes)

/** Body of PUT /v1/orders/{sourceOrderId}. Unknown fields are refused. */
export const Order = lazy(() =>
  z.strictObject({
    sourceOrderNumber: z.string().min(1),
    currency: Currency,
    policyCancelledAt: DateTime.nullable().optional(),
    originalSourceOrderId: z.string().optional(),
    sourceCreatedAt: DateTime.optional(),
    sourceUpdatedAt: DateTime.optional(),
    sourceCancelledAt: DateTime.optional(),
    platformId: PlatformId.optional(),
    premiumPaid: NonNegativeMoney.optional(),
    total: NonNegativeMoney.optional(),
    // CHOICE (docs/spec-choices.md#signed-amounts): platforms write a discount as a positive amount off or as a negative line; the spec
    // does not say which, so either sign is accepted.
    discountTotal: Money.optional(),
    shippingCost: NonNegativeMoney.optional(),
    tax: NonNegativeMoney.optional(),
    subtotal: NonNegativeMoney.optional(),
    customerEmail: z.email().optional(),
    customerName: z.string().optional(),
    customerPhone: z.string().optional(),
    shippingCostTax: NonNegativeMoney.optional(),
  }),
);
export type Order = z.infer<typeof Order>;

/** The Order fields in the spec's order (src/order-fields.ts, reached without zod; a test holds them equal to Order's keys). */
export const ORDER_FIELDS: readonly (keyof Order)[] = ORDER_FIELD_NAMES;

/**
 * CHOICE (docs/spec-choices.md#order-records-in-a-list): the shape of a list node is "not shown". opcli reads the Order fields it knows (all
 * optional) plus sourceOrderId, and keeps every other field for --json.
 */
export const OrderRecord = lazy(() =>
  z.looseObject({
    sourceOrderId: z.string().optional(),
    ...Order.partial().shape,
    // A record read back from the server is not re-validated against the request enum: an old
    // order in a currency the list no longer has must still be listed.
    currency: z.string().optional(),
    platformId: z.string().optional(),
    customerEmail: z.string().optional(),
    policyCancelledAt: z.string().nullable().optional(),
    sourceCreatedAt: z.string().optional(),
    sourceUpdatedAt: z.string().optional(),
    sourceCancelledAt: z.string().optional(),
    // The ranges opcli checks before it sends an amount are not imposed on what the server stores: a
    // refund written as a negative total is still listed (and kept by a read-modify-write update).
    premiumPaid: Money.optional(),
    total: Money.optional(),
    shippingCost: Money.optional(),
    tax: Money.optional(),
    subtotal: Money.optional(),
    shippingCostTax: Money.optional(),
  }),
);
export type OrderRecord = z.infer<typeof OrderRecord>;

/** Response of GET /v1/orders without its records: what every page is checked against (the records are checked when read). */
export const OrdersPageShell = lazy(() =>
  z.object({
    pageInfo: z.object({
      startCursor: z.string().nullable(),
      endCursor: z.string().nullable(),
      hasNextPage: z.boolean(),
      hasPreviousPage: z.boolean(),
    }),
    pageCursors: z.object({
      around: z.array(z.object({ cursor: z.string(), page: z.number(), isCurrent: z.boolean() })),
    }),
    totalCount: z.number(),
  }),
);

/** Response of GET /v1/orders. */
export const OrdersPage = lazy(() => OrdersPageShell.extend({ edges: z.array(z.object({ node: OrderRecord })).optional() }));
export type OrdersPage = z.infer<typeof OrdersPage>;

/** Query of GET /v1/orders (all optional). */
export const OrdersQuery = lazy(() =>
  z.strictObject({
    size: z.coerce.number().int().positive().optional(),
    cursor: z.string().optional(),
    buttonNum: z.coerce.number().int().nonnegative().optional(),
  }),
);
export type OrdersQuery = z.infer<typeof OrdersQuery>;

/** The `{status: "ok"}` answer of endpoints 5 and 7. */
export const StatusOk = lazy(() => z.object({ status: z.literal('ok') }));

// Offline claim (endpoint 6)

export const SALES_CHANNELS = ['ONLINE', 'IN_STORE'] as const;
export const CLAIM_CATEGORIES = ['SHIPPING', 'WARRANTY'] as const;
export const ISSUE_TYPES = [
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
] as const;
export const RESOLUTIONS = ['RESHIP', 'REFUND', 'STORE_CREDIT'] as const;
export const CLAIM_FILED_FROM = ['EXTERNAL', 'INTERNAL'] as const;

/**
 * CHOICE (docs/spec-choices.md#required-claim-fields): which nested claim fields are required is "not shown". opcli requires the ones a claim
 * cannot be handled without (customer e-mail; item name and price; purchase date and warranty
 * period; a deliverable address) and accepts the others as optional.
 */
export const ClaimCustomer = lazy(() =>
  z.strictObject({
    email: z.email(),
    phoneNumber: z.string().optional(),
  }),
);

export const ClaimItem = lazy(() =>
  z.strictObject({
    sourceProductId: z.string().optional(),
    sourceVariantId: z.string().optional(),
    name: z.string().min(1),
    images: z.array(ImageUrl).optional(),
    sourceItemId: z.string().optional(),
    sku: z.string().optional(),
    details: z.string().optional(),
    productImage: ImageUrl.optional(),
    price: Money.refine((n) => n >= 0, { message: 'expected a price of 0 or more' }),
    subIssueId: z.string().optional(),
  }),
);

export const ClaimWarranty = lazy(() =>
  z.strictObject({
    dateOfPurchase: DateTime,
    receiptRequired: z.boolean().optional(),
    receiptImages: z.array(ImageUrl).optional(),
    warrantyPeriod: IsoDuration,
    productDescription: z.string().optional(),
  }),
);

export const ShippingAddress = lazy(() =>
  z.strictObject({
    firstName: z.string().min(1),
    lastName: z.string().min(1),
    address1: z.string().min(1),
    address2: z.string().optional(),
    city: z.string().min(1),
    state: z.string().optional(),
    stateAbr: z.string().optional(),
    zip: z.string().min(1),
    country: z.string().min(1),
    countryAbr: z.string().optional(),
    lat: Latitude.optional(),
    lng: Longitude.optional(),
    // CHOICE (docs/spec-choices.md#addressorigin): addressOrigin's allowed values are "not shown": any string.
    addressOrigin: z.string().optional(),
  }),
);

/** A signature URL, or the empty string the spec allows. */
export const Signature = lazy(() =>
  z.union([z.literal(''), z.url({ protocol: /^https?$/ })], {
    error: 'expected a URL of the signature image (http:// or https://), or an empty string',
  }),
);

/** Body of POST /v1/claims/offline. */
export const OfflineClaim = lazy(() =>
  z.strictObject({
    customer: ClaimCustomer,
    item: ClaimItem,
    warranty: ClaimWarranty,
    shippingAddress: ShippingAddress,
    storeId: z.string().min(1),
    signature: Signature,
    salesChannel: z.enum(SALES_CHANNELS),
    claimCategory: z.enum(CLAIM_CATEGORIES),
    issueType: z.enum(ISSUE_TYPES),
    resolution: z.enum(RESOLUTIONS),
    claimFiledFrom: z.enum(CLAIM_FILED_FROM).optional(),
    options: z
      .strictObject({
        fromValet: z.boolean().optional(),
        requireCustomerSignature: z.boolean().optional(),
      })
      .optional(),
  }),
);
export type OfflineClaim = z.infer<typeof OfflineClaim>;

/**
 * The payload echoed by claim creation; only sourceOrderId is checked: refusing a created claim
 * because its echo differs (a normalised e-mail) would report a claim that exists as uncertain.
 */
export const ClaimPayload = lazy(() => z.looseObject({ sourceOrderId: z.string().min(1) }));
export type ClaimPayload = z.infer<typeof ClaimPayload>;

export const ClaimCreated = lazy(() => z.object({ status: z.literal('ok'), payload: ClaimPayload }));
export type ClaimCreated = z.infer<typeof ClaimCreated>;

// Product variant (endpoint 7)

export const VARIANT_STATUSES = ['ACTIVE', 'DRAFT', 'ARCHIVED', 'DELETED'] as const;
export const PRODUCT_TYPES = ['FULL', 'SIMPLE'] as const;
export const INVENTORY_TYPES = ['FULL', 'SIMPLE'] as const;

/**
 * Body of POST /v2/products/{productId}/children.
 * CHOICE (docs/spec-choices.md#inventoryquantity): inventoryQuantity is the remaining stock as a whole number (its description), not its declared enum.
 * CHOICE (docs/spec-choices.md#variant-tax): tax is a number (its declared type), not the unique id its description says.
 */
export const ProductVariant = lazy(() =>
  z.strictObject({
    productId: z.string().min(1),
    status: z.enum(VARIANT_STATUSES),
    name: z.string().min(1),
    price: Money.refine((n) => n >= 0, { message: 'expected a price of 0 or more' }),
    inventoryQuantity: z.number().int().nonnegative(),
    productType: z.enum(PRODUCT_TYPES),
    variantId: z.string().optional(),
    description: z.string().optional(),
    sku: z.string().optional(),
    tax: FiniteNumber.optional(),
    inventoryType: z.enum(INVENTORY_TYPES).optional(),
    productImage: z.string().optional(),
    inStock: z.boolean().optional(),
    bundleProductIds: z.array(z.string()).optional(),
  }),
);
export type ProductVariant = z.infer<typeof ProductVariant>;

// OAuth (endpoints 1, 2, 3)

export const CREDENTIAL_PREFIXES = {
  accessToken: 'svc_at_',
  refreshToken: 'svc_rt_',
  clientId: 'svc_app_',
  clientSecret: 'svc_secret_',
} as const;

export const AccessToken = lazy(() => z.string().startsWith(CREDENTIAL_PREFIXES.accessToken));
export const RefreshToken = lazy(() => z.string().startsWith(CREDENTIAL_PREFIXES.refreshToken));

/** Token response of endpoint 1. client_credentials answers carry no refresh token. */
export const TokenResponse = lazy(() =>
  z.object({
    access_token: AccessToken,
    token_type: z.literal('Bearer'),
    expires_in: z.number().positive(),
    refresh_token: RefreshToken.optional(),
    scope: z.string(),
  }),
);
export type TokenResponse = z.infer<typeof TokenResponse>;

export const AuthorizationCodeGrant = lazy(() =>
  z.strictObject({
    grant_type: z.literal('authorization_code'),
    client_id: z.string().min(1),
    client_secret: z.string().min(1),
    code: z.string().min(1),
    redirect_uri: z.url(),
    code_verifier: z.string().min(43).max(128).optional(),
  }),
);

export const ClientCredentialsGrant = lazy(() =>
  z.strictObject({
    grant_type: z.literal('client_credentials'),
    client_id: z.string().min(1),
    client_secret: z.string().min(1),
    store_id: z.string().min(1),
    scopes: z.array(z.string()).optional(),
  }),
);

export const RefreshTokenGrant = lazy(() =>
  z.strictObject({
    grant_type: z.literal('refresh_token'),
    client_id: z.string().min(1),
    client_secret: z.string().min(1),
    refresh_token: z.string().min(1),
  }),
);

/** Body of POST /v1/oauth/token, by grant type. */
export const TokenRequest = lazy(() => z.discriminatedUnion('grant_type', [AuthorizationCodeGrant, ClientCredentialsGrant, RefreshTokenGrant]));
export type TokenRequest = z.infer<typeof TokenRequest>;

/** Body of POST /v1/oauth/revoke. Its response is "not shown": opcli accepts any 2xx. */
export const RevokeRequest = lazy(() =>
  z.strictObject({
    token: z.string().min(1),
    client_id: z.string().min(1),
    client_secret: z.string().min(1),
    token_type_hint: z.enum(['access_token', 'refresh_token']).optional(),
  }),
);
export type RevokeRequest = z.infer<typeof RevokeRequest>;

/** Body of POST /v1/oauth/session/verify. */
export const SessionVerifyRequest = lazy(() => z.strictObject({ session_token: z.string().min(1) }));

/** Response of POST /v1/oauth/session/verify. */
export const SessionContext = lazy(() =>
  z.object({
    userId: z.string(),
    email: z.string(),
    firstName: z.string(),
    lastName: z.string(),
    storeId: z.string(),
    installationId: z.string(),
    applicationId: z.string(),
    clientId: z.string(),
    scopes: z.array(z.string()),
  }),
);
export type SessionContext = z.infer<typeof SessionContext>;

/**
 * CHOICE (docs/spec-choices.md#error-bodies): the error body is "not shown". opcli reads `message`, `error`/`error_description` and
 * `errors[]` (field path + message) from whatever it gets; the sandbox answers in this shape.
 */
export const ApiErrorBody = lazy(() =>
  z.looseObject({
    error: z.string().optional(),
    error_description: z.string().optional(),
    message: z.string().optional(),
    /** The scope that was missing, on a 403. */
    required_scope: z.string().optional(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
);
export type ApiErrorBody = z.infer<typeof ApiErrorBody>;

// Gift card provider (outbound calls of the service; opcli calls them for `giftcard issue`)

/** The amount is a positive decimal with at most two places. */
export const GiftCardAmount = lazy(() =>
  z
    .number()
    .refine((n) => Number.isFinite(n) && n > 0, { message: 'expected an amount above zero' })
    .refine((n) => Math.abs(Math.round(n * 100) - n * 100) < 1e-6, { message: 'expected at most two decimal places' }),
);

/** Body of POST {gift_card_api_url}/v2/gift-cards/issue/. */
export const GiftCardIssueRequest = lazy(() =>
  z.strictObject({
    shop_url: z.string().min(1),
    gift_card: z.strictObject({
      balance: GiftCardAmount,
      note: z.string(),
    }),
    email_details: z.strictObject({
      recipient: z.string().min(1),
      recipient_email: z.email(),
      title: z.string().min(1),
      subject: z.string().min(1),
      body: z.string(),
    }),
  }),
);
export type GiftCardIssueRequest = z.infer<typeof GiftCardIssueRequest>;

/**
 * A gift card (loyalty card) as the provider returns it. CHOICE (docs/spec-choices.md#provider-responses): the provider's response bodies are
 * "not shown" beyond these fields; opcli expects one object per card.
 */
export const GiftCard = lazy(() =>
  z.looseObject({
    gift_card_id: z.string(),
    amount: z.number(),
    code: z.string(),
    expires_on: z.string().nullable().optional(),
  }),
);
export type GiftCard = z.infer<typeof GiftCard>;

/** Query of GET {gift_card_api_url}/v2/gift-cards/. Answers a GiftCard, or 404 when the customer has none. */
export const GiftCardLookupQuery = lazy(() =>
  z.strictObject({
    shop_url: z.string().min(1),
    customer_id: z.string().min(1),
  }),
);

/** Body of PUT {gift_card_api_url}/v2/gift-cards/{giftCardId}. Answers the updated GiftCard. */
export const GiftCardTopUpRequest = lazy(() =>
  z.strictObject({
    shop_url: z.string().min(1),
    amount: GiftCardAmount,
    type: z.literal('refund'),
    order_id: z.string().min(1),
  }),
);
export type GiftCardTopUpRequest = z.infer<typeof GiftCardTopUpRequest>;

export const PROVIDER_ERRORS = {
  apiKeyNotFound: 'API key not found',
  storeDomainNotFound: 'Store domain not found',
  balanceUpdateFailure: 'balance update failure',
} as const;

/**
 * Body of POST {trigger_base_url}/{triggerId}: the workflow's variables (an email variable at path
 * `email`, a number variable `amount`). The workflow issues store credit for 100% of amount.
 * CHOICE (docs/spec-choices.md#trigger-workflow-and-the-loyalty-card): the workflow also needs to know which loyalty card to credit; the sandbox keys loyalty
 * cards by customer id and looks the customer up by e-mail.
 */
export const TriggerExecuteRequest = lazy(() =>
  z.strictObject({
    email: z.email(),
    amount: GiftCardAmount,
  }),
);

/** A trigger id: the UUID that is the last path segment of the workflow's execute URL. */
export const TriggerId = lazy(() => z.uuid({ message: 'expected a UUID (the last path segment of the execute URL, not the whole URL)' }));

/**
 * CHOICE (docs/spec-choices.md#native-gift-card-endpoint): the spec shows no endpoint for the storefront platform's native gift card. opcli and the
 * sandbox use POST {native_url}/gift-cards with this body, answered by a GiftCard.
 */
export const NativeGiftCardRequest = lazy(() =>
  z.strictObject({
    amount: GiftCardAmount,
    email: z.email(),
    name: z.string().min(1),
    note: z.string(),
    subject: z.string().min(1),
  }),
);
export type NativeGiftCardRequest = z.infer<typeof NativeGiftCardRequest>;

// Validation errors, for every caller

export { type FieldIssue, fieldIssues } from './core/field-issues.js';
