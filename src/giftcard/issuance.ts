/**
 * One store credit issuance, exactly once. `prepare()` checks, asks (through the verb's callback) and
 * plans, sending and recording nothing: its result is what a person confirms. `issue()` records the
 * attempt (the duplicate check again under the ledger's lock: another run may have written since),
 * runs the chain and records the outcome. No prompt and no print: this module takes ports.
 *
 * The chain is the spec's fallback order: the trigger workflow (confirmed by polling the loyalty
 * card), the credit API (top-up or new card), the storefront's native gift card. After a fallback
 * from a posted trigger the card is watched once more, so a late trigger credit (a double payment) is
 * reported. The trigger pays the e-mail's customer while opcli confirms and tops up the card of the
 * customer id given: a card that says it is another's is held before money moves.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, AuthError, ExitCode, isOutcomeUncertain, OpcliError, UsageError, ValidationError } from '../core/errors.js';
import { emailIdentity, orderLabel } from '../core/identity.js';
import { neverLeft } from '../http/client.js';
import { type GiftCard, GiftCardIssueRequest, GiftCardTopUpRequest, NativeGiftCardRequest, TriggerExecuteRequest, TriggerId } from '../schemas.js';
import { safeLine, shellQuote } from '../text/safe.js';
import {
  type AttemptRecord,
  type CreditLedger,
  type CreditPath,
  groupIssuances,
  type Issuance,
  issuanceKey,
  keyParts,
  type OutcomeRecord,
  sameKey,
  sameScope,
  type UncertainLine,
} from './ledger.js';
import { centsToNumber, DEFAULT_CURRENCY, DEFAULT_MAX_CENTS, formatCents, formatMoney, groupAmount, numberToCents, parseAmount } from './money.js';
import {
  formatSeconds,
  NATIVE_URL_HINT,
  nativeUrlProblem,
  type PlannedRequest,
  type ProviderClient,
  ProviderRefusedError,
  type ProviderSettings,
  providerNameProblem,
} from './provider.js';
import type { ResolvedProfile } from '../config/profile.js';

/** The fields that name a credit (what it is for, how much), in the order every `--json` listing of store credit prints them (docs/json.md). */
export const CREDIT_FIELDS = ['issuance', 'claimId', 'orderNumber', 'bonus', 'amount', 'currency'] as const;

// Preparing: everything known and checked before a person confirms; nothing sent or recorded.

/** The fields as typed (flags or answers), each required one given. */
export interface TypedFields {
  claim?: string;
  bonus: boolean;
  order: string;
  amount: string;
  email: string;
  name: string;
  customerId?: string;
}

type IssueProfile = Pick<ResolvedProfile, 'name' | 'baseUrl' | 'storeId'>;

/** An issuance ready to confirm and send: nothing has been sent or recorded. */
export interface PreparedIssue {
  req: CreditRequest;
  plan: ChainPlan;
  key: string;
  /** "claim C-1" or "bonus credit for order #1001". */
  what: string;
  profile: IssueProfile;
  settings: ProviderSettings;
  /** How many earlier records of the ledger name this claim or order, or a similar credit (what a dry run reports). */
  earlier: number;
}

function maxCents(settings: ProviderSettings): number {
  if (!settings.maxAmount) return DEFAULT_MAX_CENTS;
  try {
    return parseAmount(settings.maxAmount, 'max-amount');
  } catch {
    throw new UsageError(
      `The setting max-amount "${settings.maxAmount}" of this profile is not an amount; nothing was sent.`,
      'Set it again with `opcli config set max-amount <amount>`, e.g. 1000.',
    );
  }
}

/** Refuses an amount above the profile's ceiling (exit 2, naming the setting) unless `allowLarge`. */
function checkCeiling(amountCents: number, settings: ProviderSettings, profile: string, allowLarge: boolean): void {
  const currency = settings.currency ?? DEFAULT_CURRENCY;
  const ceiling = maxCents(settings);
  if (allowLarge || amountCents <= ceiling) return;
  throw new UsageError(
    `The amount ${formatMoney(amountCents, currency)} is above the ceiling of profile "${profile}" (setting max-amount: ${formatMoney(ceiling, currency)}${settings.maxAmount ? '' : ', the default'}). Nothing was sent.`,
    `Check the amount (a slip of the finger?). If it is right, pass --allow-large; to change the ceiling: \`opcli config set max-amount <amount>\`.`,
  );
}

/** The claim or order an issuance is for, as soon as it is known (before amount, e-mail and name). */
type KnownIds = Pick<CreditRequest, 'claimId' | 'orderNumber' | 'bonus'>;

/** What the fields' asker is told: the currency and ceiling, and whom to tell the claim or order once known. */
export interface FieldLimits {
  currency: string;
  maxCents: number;
  /** Refuses (exit 3, as prepare would) a claim or order the ledger already holds: call it before asking more. */
  known(ids: KnownIds): Promise<void>;
}

interface PrepareEnv {
  settings: ProviderSettings;
  profile: IssueProfile;
  ledger: CreditLedger;
  now(): number;
  /** The fields, missing ones asked (or a usage error naming their flags): called once the profile can issue and the ledger is readable. */
  fields(limits: FieldLimits): Promise<TypedFields>;
  /** A note on the plan (a path skipped and why), given before anything is refused or asked. */
  notice(text: string): void;
  allowLarge: boolean;
  force: boolean;
  /** Count the earlier records instead of refusing: nothing will be sent. */
  dryRun: boolean;
}

/** Prepares one issuance, earlier records refused (unless forced, or counted for a dry run); sends and records nothing. */
export async function prepare(env: PrepareEnv): Promise<PreparedIssue> {
  const { settings, profile, ledger } = env;
  // Nothing to ask when no path could issue, or when the ledger cannot be read: say so first.
  const paths = profilePaths(settings, profile.baseUrl);
  await ledger.heldAgainst();
  const currency = settings.currency ?? DEFAULT_CURRENCY;
  const scope = { shopUrl: settings.shopUrl, storeId: profile.storeId };
  const known = async (ids: KnownIds) => {
    if (!env.force && !env.dryRun) await refuseKnownId(ledger, ids, scope, currency);
  };
  const fields = await env.fields({ currency, maxCents: maxCents(settings), known });
  // The request the typed fields describe, under a new issuance id: the amount in cents, the names trimmed.
  const req: CreditRequest = {
    issuance: randomUUID(),
    claimId: fields.bonus ? undefined : fields.claim?.trim(),
    orderNumber: fields.order.trim(),
    bonus: fields.bonus,
    amountCents: parseAmount(fields.amount),
    email: fields.email,
    name: fields.name.trim(),
    customerId: fields.customerId,
    currency,
  };
  checkCeiling(req.amountCents, settings, profile.name, env.allowLarge);
  const plan = requestPlan(paths, req);
  try {
    requestBodies(req, settings);
  } catch (error) {
    throw new ValidationError(`The request cannot be sent: ${error instanceof Error ? error.message : String(error)}`, []);
  }
  const key = issuanceKey(req, scope);
  const what = creditWhat(req);
  for (const note of plan.notes) env.notice(note);
  const unchecked = { req, plan, key, what, profile, settings, earlier: 0 };
  const held = await earlierRecords(ledger, unchecked, env.now());
  if (!env.dryRun) refuseEarlier(held, unchecked, ledger.path, env.force);
  return { ...unchecked, earlier: held.same.length + held.torn.length + held.similar.length };
}

/** The lines a person confirms: amount with currency, customer, references, first path. */
export function summaryLines(prepared: PreparedIssue, timing: ChainTiming): [string, string][] {
  const { req, plan } = prepared;
  const firstPath =
    plan.first === 'trigger'
      ? `the trigger workflow, then the credit API if it does not post within ${formatSeconds(timing.triggerWaitMs)}`
      : describePath(plan.first);
  return [
    ['Amount', formatMoney(req.amountCents, req.currency)],
    ['Customer', req.name],
    ['E-mail', req.email],
    ['Customer id', req.customerId ?? '(none: a new gift card is created)'],
    ['Reference', req.bonus ? `order ${orderLabel(req.orderNumber)} (bonus)` : `claim ${req.claimId}, order ${orderLabel(req.orderNumber)}`],
    ['Subject', cardContent(req).subject],
    ['First path', firstPath],
    ['Profile', prepared.profile.name],
  ];
}

// The plan: which of the spec's paths a profile and a request allow, and the bodies each sends.

/** The name of the service, which the card's e-mail names as its creator. */
const SERVICE_NAME = 'Order Protection';

export interface CreditRequest {
  issuance: string;
  claimId?: string;
  orderNumber: string;
  bonus: boolean;
  amountCents: number;
  email: string;
  name: string;
  customerId?: string;
  /** The currency of the amount (the profile's `currency`, default USD). */
  currency: string;
}

export interface ChainTiming {
  /** How long to poll for the trigger's credit (the spec's "about 4.5 s"). */
  triggerWaitMs: number;
  /** How long to watch for a late trigger credit after falling back. */
  lateCheckMs: number;
  pollIntervalMs: number;
}

type FirstPath = 'trigger' | 'credit-api' | 'native';

/** Which paths this profile and request can use, and why others cannot. */
interface ChainPlan {
  trigger: boolean;
  creditApi: boolean;
  native: boolean;
  first: FirstPath;
  notes: string[];
}

/** The paths a profile offers, whatever the request: known before any question is asked. */
interface ProfilePaths {
  creditApi: boolean;
  native: boolean;
  /** The trigger workflow, when configured: what it lacks whatever the request (empty when nothing). */
  trigger?: { missing: string[] };
}

/**
 * The paths this profile can use, in the spec's order; a UsageError when none is, or when the native
 * path would send the service's token to another host than `serviceBaseUrl`'s. No request changes that.
 */
function profilePaths(settings: ProviderSettings, serviceBaseUrl: string | undefined): ProfilePaths {
  const nameProblem = settings.name ? providerNameProblem(settings.name) : undefined;
  if (nameProblem) throw new UsageError(`Refusing to issue: the ${nameProblem}`, 'Set a valid name with `opcli giftcard setup --provider-name <name>`.');
  const creditApi = !!(settings.token && settings.apiUrl && settings.name && settings.shopUrl);
  let trigger: ProfilePaths['trigger'];
  if (settings.triggerId) {
    const missing: string[] = [];
    if (!TriggerId.safeParse(settings.triggerId).success) missing.push('a well-formed trigger-id (a UUID)');
    if (!settings.triggerUrl) missing.push('trigger-url');
    if (!creditApi) missing.push('the credit API settings (provider-name, provider-api-url, provider-token, shop-url), which confirm the credit');
    trigger = { missing };
  }
  const native = !creditApi && !!settings.nativeUrl;
  if (!creditApi && !native) {
    throw new UsageError(
      'No way to issue store credit is configured for this profile.',
      'Configure the provider with `opcli giftcard setup` (a trigger id and/or a credit API token), or the storefront with `opcli config set native-url <url>`.',
    );
  }
  if (native) {
    const problem = nativeUrlProblem(settings.nativeUrl, serviceBaseUrl);
    if (problem) throw new UsageError(`Refusing the native gift card: ${problem}`, NATIVE_URL_HINT);
  }
  return { creditApi, native, trigger };
}

/** The chain of one request on the profile's paths: the trigger runs only with a customer id to confirm it. */
function requestPlan(paths: ProfilePaths, req: Pick<CreditRequest, 'customerId'>): ChainPlan {
  const notes: string[] = [];
  let trigger = false;
  if (paths.trigger) {
    const missing = [...paths.trigger.missing];
    if (!req.customerId) missing.push('--customer-id, to find the loyalty card that confirms the credit');
    trigger = missing.length === 0;
    if (!trigger) notes.push(`The trigger workflow is configured but skipped: it needs ${missing.join(' and ')}.`);
  }
  const { creditApi, native } = paths;
  return { trigger, creditApi, native, first: trigger ? 'trigger' : creditApi ? 'credit-api' : 'native', notes };
}

/** Decides the paths available to one request, in the spec's order (profilePaths, then requestPlan). */
export function planChain(settings: ProviderSettings, req: Pick<CreditRequest, 'customerId'>, serviceBaseUrl: string | undefined): ChainPlan {
  return requestPlan(profilePaths(settings, serviceBaseUrl), req);
}

export function describePath(path: CreditPath | FirstPath): string {
  switch (path) {
    case 'trigger':
      return 'the trigger workflow';
    case 'credit-api':
      return "the credit API (top up the customer's loyalty card, or create a card)";
    case 'credit-api-top-up':
      return "the credit API, added to the customer's loyalty card";
    case 'credit-api-issue':
      return 'the credit API, as a new gift card';
    case 'native':
      return "the storefront's native gift card";
  }
}

/** Subject, note, title and body of the card's e-mail. */
function cardContent(req: CreditRequest) {
  const amount = formatMoney(req.amountCents, req.currency);
  // "#1003" whether the order number was typed 1003 or #1003 (as the orders list shows it).
  const order = orderLabel(req.orderNumber);
  const subject = req.bonus ? `Bonus Store Credit for Order ${order}` : `Gift Card for Claim #${req.claimId}`;
  const note = req.bonus
    ? `Bonus store credit; order ${order}; opcli issuance ${req.issuance}`
    : `Claim #${req.claimId}; order ${order}; opcli issuance ${req.issuance}`;
  // CHOICE (docs/spec-choices.md#gift-card-title): the card's title names the service as its creator.
  const title = `Gift card created by ${SERVICE_NAME}`;
  const body = req.bonus
    ? `Hello ${req.name}, ${SERVICE_NAME} has added a bonus store credit of ${amount} for your order ${order}.`
    : `Hello ${req.name}, your claim #${req.claimId} for order ${order} was resolved with store credit: ${SERVICE_NAME} has issued you a gift card of ${amount}.`;
  return { subject, note, title, body };
}

/** The request bodies of every path, validated with the shared schemas before anything is sent. */
function requestBodies(req: CreditRequest, settings: ProviderSettings) {
  const content = cardContent(req);
  const amount = centsToNumber(req.amountCents);
  return {
    trigger: TriggerExecuteRequest.parse({ email: req.email, amount }),
    issue: GiftCardIssueRequest.parse({
      shop_url: settings.shopUrl ?? '',
      gift_card: { balance: amount, note: content.note },
      email_details: { recipient: req.name, recipient_email: req.email, title: content.title, subject: content.subject, body: content.body },
    }),
    topUp: GiftCardTopUpRequest.parse({ shop_url: settings.shopUrl ?? '', amount, type: 'refund', order_id: req.orderNumber }),
    native: NativeGiftCardRequest.parse({ amount, email: req.email, name: req.name, note: content.note, subject: content.subject }),
  };
}

/** One planned request for --dry-run, with when it is sent. */
export interface DryRunStep {
  when: string;
  request: PlannedRequest;
}

/** The requests a real run would send, in order, for --dry-run, the token masked. */
export function planDryRun(prepared: PreparedIssue, client: ProviderClient, timing: ChainTiming): DryRunStep[] {
  const { plan, req } = prepared;
  const bodies = requestBodies(req, prepared.settings);
  // The provider's URLs exist only where the credit API is configured (the trigger needs it too).
  const lookup = plan.creditApi && req.customerId ? client.plan('GET', client.lookupUrl(req.customerId)) : undefined;
  const steps: DryRunStep[] = [];
  if (plan.trigger && lookup) {
    steps.push({ when: "read the loyalty card's balance before", request: lookup });
    steps.push({ when: 'run the trigger workflow', request: client.plan('POST', client.triggerUrl(), bodies.trigger, 'trigger') });
    steps.push({
      when: `poll every ${formatSeconds(timing.pollIntervalMs)} for up to ${formatSeconds(timing.triggerWaitMs)} until the balance grew by ${formatMoney(req.amountCents, req.currency)}`,
      request: lookup,
    });
  }
  if (plan.creditApi) {
    const prefix = plan.trigger ? 'if the trigger did not post in time: ' : '';
    const issue = client.plan('POST', client.issueUrl(), bodies.issue);
    if (lookup) {
      steps.push({ when: `${prefix}look for the customer's loyalty card`, request: lookup });
      steps.push({
        when: `${prefix}if the customer has a loyalty card, add to it`,
        request: client.plan('PUT', client.topUpUrl('{gift_card_id}', true), bodies.topUp),
      });
      steps.push({ when: `${prefix}otherwise create a gift card`, request: issue });
    } else {
      steps.push({ when: `${prefix}create a gift card`, request: issue });
    }
    if (plan.trigger && lookup) {
      steps.push({
        when: `after a fallback: watch the loyalty card for up to ${formatSeconds(timing.lateCheckMs)} for a late trigger credit`,
        request: lookup,
      });
    }
  }
  if (plan.native) steps.push({ when: "create the storefront's native gift card", request: client.plan('POST', client.nativeUrl(), bodies.native, 'bearer') });
  return steps;
}

// The earlier-credit check: what the ledger holds against a new credit, refused with exit 3.

/** The credit the ledger is searched for. */
type HeldCredit = Pick<PreparedIssue, 'req' | 'key' | 'what'>;

/** The command that lists a credit's claim (or a bonus's order), quoted to run as pasted: `--order #1007` would be a comment in a shell. */
function historyCommand(req: KnownIds): string {
  return `opcli giftcard history ${req.bonus ? `--order ${shellQuote(req.orderNumber)}` : `--claim ${shellQuote(req.claimId ?? '')}`}`;
}

/** A credit in words: "claim C-1" (`withOrder`: "claim C-1, order #1001"), or "bonus credit for order #1001". */
function creditWhat(req: KnownIds, withOrder = false): string {
  return req.bonus
    ? `bonus credit for order ${orderLabel(req.orderNumber)}`
    : `claim ${req.claimId}${withOrder ? `, order ${orderLabel(req.orderNumber)}` : ''}`;
}

/** An earlier issuance for the same claim or order, or a similar credit, holds this one (exit 3, nothing sent). */
class DuplicateIssuanceError extends OpcliError {
  constructor(message: string, hint: string) {
    super(message, { exitCode: ExitCode.partial, hint });
  }
}

/** The earlier records that hold a new credit back, by why. */
interface EarlierRecords {
  same: Issuance[];
  torn: UncertainLine[];
  similar: Issuance[];
}

/** CHOICE (docs/spec-choices.md#similar-credits): how far back a credit of the same amount to the same customer holds a new one. */
const SIMILAR_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * What the ledger holds against a new credit: earlier issuances of the same claim or order by identity
 * (a `failed` outcome proves nothing was paid, no outcome may have), torn or set-aside lines naming it,
 * and similar credits (same customer, amount, currency, shop and store within SIMILAR_WINDOW_MS).
 */
async function earlierRecords(ledger: CreditLedger, prepared: Omit<HeldCredit, 'what'>, now: number): Promise<EarlierRecords> {
  const { req, key } = prepared;
  const hold = { amountCents: req.amountCents, currency: req.currency, since: now - SIMILAR_WINDOW_MS };
  const { records, uncertain } = await ledger.heldAgainst(key, req.email || undefined, hold);
  const issuances = groupIssuances(records).filter((i) => i.outcome?.status !== 'failed');
  const parts = keyParts(key);
  const email = emailIdentity(req.email);
  const similar = (a: AttemptRecord) => {
    const k = keyParts(a.key);
    const at = Date.parse(a.at);
    return (
      k.what !== parts.what &&
      sameScope(k, parts) &&
      a.amountCents === req.amountCents &&
      // A record from before currencies were recorded was in the profile's currency.
      (a.currency ?? req.currency) === req.currency &&
      emailIdentity(a.email) === email &&
      Number.isFinite(at) &&
      now - at <= SIMILAR_WINDOW_MS
    );
  };
  return {
    same: issuances.filter((i) => sameKey(i.attempt.key, key)),
    torn: uncertain.filter((d) => d.key !== undefined && sameKey(d.key, key)),
    similar: issuances.filter((i) => similar(i.attempt)),
  };
}

/** An earlier issuance as a person reads it: when, who, profile, amount, e-mail, card. */
function recordText(i: Issuance): string {
  const a: AttemptRecord = i.attempt;
  const o = i.outcome;
  const money = a.currency ? formatMoney(a.amountCents, a.currency) : groupAmount(a.amount);
  const status = o ? o.status : 'no outcome recorded';
  return `${a.at} by ${a.user} with profile "${a.profile}": ${money} to ${a.email} for ${creditWhat(a, true)}, ${status}${o?.path ? ` via ${o.path}` : ''}${o?.cardId ? ` (card ${o.cardId})` : ''}, issuance ${a.issuance}`;
}

/** Refuses (exit 3) what earlierRecords found, unless forced. */
function refuseEarlier(held: EarlierRecords, prepared: HeldCredit, ledgerPath: string, force: boolean): void {
  const { same, torn, similar } = held;
  if (force) return;
  const { req, what } = prepared;
  const check = `Check the customer's card at the provider and \`${historyCommand(req)}\`; pass --force only when you are sure nothing was paid.`;
  const last = same[same.length - 1];
  if (last) {
    const o = last.outcome;
    const earlierId = last.attempt.bonus ? last.attempt.orderNumber : last.attempt.claimId;
    const variant = earlierId !== (req.bonus ? req.orderNumber : req.claimId) ? ` (recorded as "${earlierId}": the same id written differently)` : '';
    const attempt = `An earlier attempt to issue store credit for ${what}${variant}`;
    if (!o) {
      throw new DuplicateIssuanceError(
        `${attempt} has no recorded outcome (${recordText(last)}).`,
        `It is still running, or it stopped before finishing and may have paid. ${check}`,
      );
    }
    if (o.status === 'uncertain')
      throw new DuplicateIssuanceError(`${attempt} ended with an unknown outcome (${recordText(last)}).`, `It may have paid. ${check}`);
    throw new DuplicateIssuanceError(
      `Store credit for ${what} was already issued${variant} (${recordText(last)}). Nothing was sent.`,
      `See \`${historyCommand(req)}\`. To issue again anyway, pass --force.`,
    );
  }
  const cut = torn[0];
  if (cut) {
    throw new DuplicateIssuanceError(
      `Line ${cut.line} of the gift card ledger ${ledgerPath} ${cut.reason}; it names ${what}: that attempt may have paid, so it counts as uncertain. Nothing was sent.`,
      check,
    );
  }
  const like = similar[similar.length - 1];
  if (like) {
    throw new DuplicateIssuanceError(
      `Held: a credit of the same amount to the same customer was issued within 30 days under another id.\n  Earlier: ${recordText(like)}\n  Now:     ${formatMoney(req.amountCents, req.currency)} to ${req.email} for ${creditWhat(req, true)}\nNothing was sent.`,
      `If these are two different claims, run the same command again with --force. \`opcli giftcard history\` shows the earlier credit.`,
    );
  }
}

/**
 * Refuses (as refuseEarlier) as soon as the claim, or a bonus's order, is known, so nobody answers the
 * other questions in vain; a similar credit needs the amount and e-mail, so prepare checks it later.
 */
async function refuseKnownId(ledger: CreditLedger, ids: KnownIds, scope: { shopUrl?: string; storeId?: string }, currency: string): Promise<void> {
  const trimmed = { claimId: ids.bonus ? undefined : ids.claimId?.trim(), orderNumber: ids.orderNumber.trim(), bonus: ids.bonus };
  const key = issuanceKey(trimmed, scope);
  // Amount, e-mail and name are not asked yet: the refusal of the same id reads none of them.
  const req: CreditRequest = { ...trimmed, issuance: '', amountCents: 0, email: '', name: '', currency };
  const held = { ...(await earlierRecords(ledger, { req, key }, 0)), similar: [] };
  refuseEarlier(held, { req, key, what: creditWhat(trimmed) }, ledger.path, false);
}

// Issuing: the attempt recorded, the chain run, the outcome recorded.

interface IssueEnv extends Omit<ChainEnv, 'settings'> {
  ledger: CreditLedger;
  /** Removes secrets from text that goes to the ledger. */
  redact(text: string): string;
  aborted(): boolean;
  user: string;
  host: string;
  force: boolean;
}

/**
 * Records the attempt (refusing a duplicate under the ledger's lock), runs the chain and records the outcome:
 * `failed` for a refusal before any money moved, `uncertain` after a request that may have moved money.
 */
export async function issue(prepared: PreparedIssue, env: IssueEnv): Promise<ChainResult> {
  const { req, plan, key, ledger } = { ...prepared, ledger: env.ledger };
  const stamp = () => new Date(env.now()).toISOString();
  const common = { v: 1 as const, issuance: req.issuance, key, user: env.user };
  const outcome = (fields: Omit<OutcomeRecord, keyof typeof common | 'at' | 'type'>) =>
    ledger.appendLocked({ ...common, at: stamp(), type: 'outcome', ...fields });
  await ledger.withLock(async () => {
    // A ledger line that cannot be read stops it here too (exit 2).
    refuseEarlier(await earlierRecords(ledger, prepared, env.now()), prepared, ledger.path, env.force);
    await ledger.append({
      ...common,
      at: stamp(),
      type: 'attempt',
      claimId: req.claimId,
      orderNumber: req.orderNumber,
      bonus: req.bonus,
      amountCents: req.amountCents,
      amount: formatCents(req.amountCents),
      currency: req.currency,
      email: req.email,
      name: req.name,
      customerId: req.customerId,
      profile: prepared.profile.name,
      shopUrl: prepared.settings.shopUrl,
      storeId: prepared.profile.storeId,
      firstPath: plan.first,
      forced: env.force,
      host: env.host,
    });
  });

  const progress = { moneyMayHaveMoved: false, triggerPosted: false, notes: [] as string[] };
  const chainEnv: ChainEnv = { ...env, settings: prepared.settings };
  let result: ChainResult;
  try {
    result = await runChain(req, plan, chainEnv, progress);
  } catch (error) {
    // A refusal (a provider answer, or a connection that provably never reached the server) moved
    // no money; but once the trigger was posted its credit may still arrive, whatever happens after.
    const refused =
      error instanceof ProviderRefusedError ||
      // A 4xx, or a 307/308 (not processed); a 5xx or another redirect may have moved money.
      (error instanceof ApiError && !isOutcomeUncertain(error)) ||
      neverLeft(error) ||
      // Refused before sending (a credential bound to another origin) or answered 401/403.
      error instanceof AuthError ||
      error instanceof UsageError;
    const status = progress.triggerPosted || (progress.moneyMayHaveMoved && !refused) ? 'uncertain' : 'failed';
    const message = error instanceof Error ? error.message : String(error);
    await outcome({
      status,
      triggerPosted: progress.triggerPosted,
      possibleDoubleCredit: false,
      error: env.redact(message),
      notes: progress.notes,
    });
    throw explainFailure(error, status, prepared, progress.notes, env.aborted());
  }
  await outcome({
    status: 'issued',
    path: result.path,
    cardId: result.card.gift_card_id,
    balanceCents: result.balanceCents,
    triggerPosted: result.triggerPosted,
    watch: result.watch,
    possibleDoubleCredit: result.possibleDoubleCredit,
    notes: result.notes,
  });
  return result;
}

/** An issuance that did not finish (its message says what was recorded), with the notes gathered on the way; exit 130 when Ctrl-C ended it. */
export class IssuanceFailedError extends OpcliError {
  constructor(
    message: string,
    readonly notes: string[],
    options: { hint?: string; cause?: unknown; exitCode?: ExitCode },
  ) {
    super(message, options);
  }
}

function explainFailure(error: unknown, status: 'failed' | 'uncertain', prepared: PreparedIssue, notes: string[], aborted: boolean): unknown {
  const { what } = prepared;
  if (aborted) {
    return new IssuanceFailedError(
      status === 'uncertain'
        ? `Interrupted after a request that moves money was sent: store credit for ${what} may have been issued; recorded as uncertain in the ledger.`
        : `Interrupted before any money was sent for ${what}; recorded as failed in the ledger.`,
      notes,
      { exitCode: ExitCode.interrupted, cause: error },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  const hint = error instanceof OpcliError ? error.hint : undefined;
  if (status === 'uncertain') {
    return new IssuanceFailedError(`Store credit for ${what} may or may not have been issued: ${message}`, notes, {
      hint: `${hint ? `${hint}\n` : ''}Recorded as uncertain in the ledger. Check the customer's card at the provider before anything else; \`${historyCommand(prepared.req)}\` shows the record, and --force issues again only when you are sure nothing was paid.`,
      cause: error,
    });
  }
  const exitCode = error instanceof OpcliError ? error.exitCode : ExitCode.failed;
  return new IssuanceFailedError(`${message}\nNothing was issued for ${what}; recorded as failed in the ledger.`, notes, {
    hint,
    cause: error,
    exitCode,
  });
}

// The chain: trigger, credit API, native gift card, in the spec's order.

/** What the chain did, for the ledger and the output. */
export interface ChainResult {
  path: CreditPath;
  card: GiftCard;
  balanceCents: number;
  triggerPosted: boolean;
  fellBack: boolean;
  possibleDoubleCredit: boolean;
  watch?: OutcomeRecord['watch'];
  notes: string[];
  /** Plain-words warnings (possible double credit), also printed on stderr. */
  warnings: string[];
}

/** Progress the caller reads when the chain throws, to record `failed` or `uncertain`. */
export interface ChainProgress {
  /** A request that moves money may have taken effect. */
  moneyMayHaveMoved: boolean;
  triggerPosted: boolean;
  notes: string[];
}

export interface ChainEnv {
  client: ProviderClient;
  settings: ProviderSettings;
  timing: ChainTiming;
  now(): number;
  sleep(ms: number): Promise<void>;
  /** A progress line on stderr. */
  say(text: string): void;
}

/**
 * Reads the loyalty card every poll interval until `done` accepts it (that card) or the deadline (null).
 * Each lookup is sent once and may take only the time left, so the poll ends by the deadline.
 */
async function pollUntil(
  env: ChainEnv,
  customerId: string,
  deadline: number,
  notes: string[],
  done: (card: GiftCard | null) => boolean,
): Promise<GiftCard | null> {
  for (;;) {
    const left = deadline - env.now();
    if (left <= 0) return null;
    let card: GiftCard | null = null;
    try {
      card = await env.client.lookup(customerId, { retry: 'never', timeoutMs: left });
    } catch (error) {
      // Not an OpcliError: an abort (Ctrl-C) or a bug, which must not be swallowed.
      if (!(error instanceof OpcliError)) throw error;
      notes.push(`A loyalty card lookup failed while polling: ${error.message}`);
    }
    if (card && done(card)) return card;
    const rest = deadline - env.now();
    if (rest <= 0) return null;
    await env.sleep(Math.min(env.timing.pollIntervalMs, rest));
  }
}

function grewBy(before: GiftCard | null, after: GiftCard | null, cents: number): boolean {
  if (!after) return false;
  if (before && before.gift_card_id === after.gift_card_id) return numberToCents(after.amount) - numberToCents(before.amount) >= cents;
  // A card that did not exist before (the workflow created one) holds at least the amount.
  return numberToCents(after.amount) >= cents;
}

/** Whether the watched loyalty card shows a credit beyond what this issuance put there. */
export function lateCreditSeen(watch: NonNullable<OutcomeRecord['watch']>, card: GiftCard | null, cents: number, laterCents = 0): boolean {
  if (!card) return false;
  const balance = numberToCents(card.amount);
  if (watch.cardId && card.gift_card_id === watch.cardId && watch.expectedCents !== null) return balance - watch.expectedCents - laterCents >= cents;
  if (card.gift_card_id === watch.ourCardId) return false;
  return !watch.cardId && balance - laterCents >= cents;
}

/** The chain's result once `card` holds the credit (no double credit seen yet). */
function paid(path: CreditPath, card: GiftCard, triggerPosted: boolean, fellBack: boolean, notes: string[]): ChainResult {
  return { path, card, balanceCents: numberToCents(card.amount), triggerPosted, fellBack, possibleDoubleCredit: false, notes, warnings: [] };
}

/**
 * Posts the trigger workflow and polls the loyalty card for its credit: the card before, and the card once the credit showed (or null);
 * a refusal or a request that never left falls back.
 */
async function tryTrigger(
  req: CreditRequest,
  env: ChainEnv,
  progress: ChainProgress,
  body: ReturnType<typeof requestBodies>['trigger'],
  customerId: string,
): Promise<{ before: GiftCard | null; card: GiftCard | null }> {
  const { client, timing } = env;
  const notes = progress.notes;
  const before = await client.lookup(customerId);
  // The trigger pays the e-mail's customer; its credit is confirmed on this card: they must be one person.
  refuseOtherHolder(before, req);
  env.say(`Running the trigger workflow (${formatMoney(req.amountCents, req.currency)} to ${req.email})…`);
  let posted = false;
  try {
    await client.executeTrigger(body);
    posted = true;
  } catch (error) {
    // A provider's answer that refused it (never an uncertain one: explain, provider.ts, keeps those as they are).
    if (error instanceof ProviderRefusedError) {
      notes.push(`The trigger workflow was refused: ${error.message}`);
      env.say(`The trigger workflow was refused (${error.providerMessage}); falling back to the credit API.`);
    } else if (neverLeft(error)) {
      // Like a refusal: the connection failed before the request left, so the trigger cannot post.
      notes.push(`The trigger workflow could not be reached, so it did not run: ${error.message}`);
      env.say(`The trigger workflow could not be reached (${error.errorCode ?? 'no connection'}); nothing was sent to it; falling back to the credit API.`);
    } else if (isOutcomeUncertain(error)) {
      posted = true;
      notes.push(`The trigger request's outcome is unknown (${(error as Error).message}); watching the loyalty card anyway.`);
    } else throw error;
  }
  if (!posted) return { before, card: null };
  progress.triggerPosted = true;
  progress.moneyMayHaveMoved = true;
  const deadline = env.now() + timing.triggerWaitMs;
  const card = await pollUntil(env, customerId, deadline, notes, (c) => grewBy(before, c, req.amountCents));
  if (card) return { before, card };
  notes.push(`Waited ${formatSeconds(timing.triggerWaitMs)} for the trigger workflow to post the credit; it did not.`);
  env.say(`Waited ${formatSeconds(timing.triggerWaitMs)} for the trigger workflow to post the credit; it did not, so falling back to the credit API.`);
  return { before, card: null };
}

/** Tops up the loyalty card (or creates a card) through the credit API, unless a late trigger credit already arrived. */
async function creditThroughApi(
  req: CreditRequest,
  env: ChainEnv,
  progress: ChainProgress,
  bodies: ReturnType<typeof requestBodies>,
  before: GiftCard | null,
  fellBack: boolean,
): Promise<ChainResult> {
  const { client } = env;
  const notes = progress.notes;
  let existing: GiftCard | null = null;
  if (req.customerId) {
    existing = await client.lookup(req.customerId);
    // The trigger may have posted between the last poll and now: then nothing more is sent.
    if (progress.triggerPosted && existing && grewBy(before, existing, req.amountCents)) {
      notes.push('The trigger credit arrived just after the polling window, before any fallback was sent.');
      return paid('trigger', existing, true, false, notes);
    }
    refuseOtherHolder(existing, req);
    // A posted trigger pays the e-mail's card: never top up a card not known to be that one.
    if (progress.triggerPosted && existing) refuseUnknownHolderTopUp(existing, req);
  }
  let path: CreditPath;
  let card: GiftCard;
  progress.moneyMayHaveMoved = true;
  if (existing) {
    env.say(`Adding ${formatMoney(req.amountCents, req.currency)} to loyalty card ${existing.gift_card_id} through the credit API…`);
    path = 'credit-api-top-up';
    card = await client.topUp(existing.gift_card_id, bodies.topUp);
  } else {
    env.say(`Creating a gift card of ${formatMoney(req.amountCents, req.currency)} through the credit API…`);
    path = 'credit-api-issue';
    card = await client.issue(bodies.issue);
  }
  const result = paid(path, card, progress.triggerPosted, fellBack, notes);
  if (progress.triggerPosted && req.customerId) await watchForLateCredit(req, env, result, existing);
  return result;
}

/** Runs the chain. Throws (after updating `progress`) when no path issued the credit. */
export async function runChain(req: CreditRequest, plan: ChainPlan, env: ChainEnv, progress: ChainProgress): Promise<ChainResult> {
  const bodies = requestBodies(req, env.settings);
  let fellBack = false;
  let before: GiftCard | null = null;
  if (plan.trigger && req.customerId) {
    const trigger = await tryTrigger(req, env, progress, bodies.trigger, req.customerId);
    if (trigger.card) return paid('trigger', trigger.card, true, false, progress.notes);
    before = trigger.before;
    fellBack = true;
  }
  if (plan.creditApi) return creditThroughApi(req, env, progress, bodies, before, fellBack);
  progress.moneyMayHaveMoved = true;
  env.say(`Creating a native gift card of ${formatMoney(req.amountCents, req.currency)} on the storefront…`);
  return paid('native', await env.client.native(bodies.native), false, fellBack, progress.notes);
}

/** The warning printed and recorded when a late trigger credit is seen. */
export function doubleCreditWarning(req: Pick<CreditRequest, 'amountCents' | 'customerId' | 'currency'>, cardId: string): string {
  return (
    `The customer may have been paid twice. The trigger workflow was slow, so opcli paid through the credit API, and then the trigger also added ` +
    `${formatMoney(req.amountCents, req.currency)} to loyalty card ${cardId} (customer ${req.customerId}). Check that card at the provider and take one of the two credits back.`
  );
}

/**
 * After a fallback, watches the loyalty card for the trigger's late credit: the card should hold what it
 * held before plus the amount (a new card: the amount), never the answer's balance, which already holds
 * a trigger that posted while the top-up was in flight (then reported at once).
 */
async function watchForLateCredit(req: CreditRequest, env: ChainEnv, result: ChainResult, existing: GiftCard | null): Promise<void> {
  const customerId = req.customerId as string;
  const ours = result.card.gift_card_id;
  const watch: NonNullable<OutcomeRecord['watch']> = existing
    ? { customerId, cardId: existing.gift_card_id, expectedCents: numberToCents(existing.amount) + req.amountCents, ourCardId: ours }
    : { customerId, cardId: null, expectedCents: null, ourCardId: ours };
  result.watch = watch;
  const answered: NonNullable<OutcomeRecord['watch']> = existing ? watch : { ...watch, cardId: ours, expectedCents: req.amountCents };
  if (lateCreditSeen(answered, result.card, req.amountCents)) {
    // The trigger credited this very card, so it is the one to keep an eye on.
    result.watch = answered;
    flagDouble(req, result, result.card);
    return;
  }
  const deadline = env.now() + env.timing.lateCheckMs;
  env.say(`Watching the loyalty card for up to ${formatSeconds(env.timing.lateCheckMs)} in case the trigger credit still arrives…`);
  let first = !existing;
  const seen = await pollUntil(env, customerId, deadline, result.notes, (card) => {
    if (first && card) {
      first = false;
      // The customer had no loyalty card: the first one seen tells which card to watch. The new
      // card itself should hold the amount; another card that holds at least the amount is the
      // trigger's; any other card is watched from its current balance.
      if (card.gift_card_id === ours) {
        watch.cardId = ours;
        watch.expectedCents = req.amountCents;
      } else if (!lateCreditSeen(watch, card, req.amountCents)) {
        watch.cardId = card.gift_card_id;
        watch.expectedCents = numberToCents(card.amount);
        return false;
      }
    }
    return lateCreditSeen(watch, card, req.amountCents);
  });
  if (seen) {
    flagDouble(req, result, seen);
    return;
  }
  result.notes.push(
    `Watched the loyalty card for ${formatSeconds(env.timing.lateCheckMs)} after the fallback and saw no late trigger credit; the trigger may still post later: run \`opcli giftcard history --verify\` to check.`,
  );
}

function flagDouble(req: CreditRequest, result: ChainResult, card: GiftCard): void {
  result.possibleDoubleCredit = true;
  if (card.gift_card_id === result.card.gift_card_id) result.balanceCents = numberToCents(card.amount);
  result.warnings.push(doubleCreditWarning(req, card.gift_card_id));
}

// The card-holder check: whose loyalty card it is, read from the provider's answer.

/** CHOICE (docs/spec-choices.md#loyalty-card-holder): the holder's e-mail is the first of these fields of a lookup that holds a string. */
const HOLDER_FIELDS = ['customer_email', 'email', 'recipient_email'] as const;

function cardHolder(card: GiftCard): string | undefined {
  const fields = card as Record<string, unknown>;
  for (const name of HOLDER_FIELDS) {
    const value = fields[name];
    if (typeof value === 'string' && value.trim()) return value.trim();
  }
  return undefined;
}

/** Whether the card is known to be the e-mail's (true), known to be someone else's (false), or does not say (undefined). */
function holdsEmail(card: GiftCard, email: string): boolean | undefined {
  const holder = cardHolder(card);
  return holder === undefined ? undefined : emailIdentity(holder) === emailIdentity(email);
}

/** The e-mail and the customer id name two people: held before anything is sent (exit 3). */
export class CardHolderMismatchError extends OpcliError {}

function refuseOtherHolder(card: GiftCard | null, req: Pick<CreditRequest, 'email' | 'customerId'>): void {
  if (!card || holdsEmail(card, req.email) !== false) return;
  const holder = safeLine(cardHolder(card) as string);
  const email = safeLine(req.email);
  throw new CardHolderMismatchError(
    `Held: the e-mail ${email} does not belong to customer ${req.customerId}: their loyalty card ${safeLine(card.gift_card_id)} is ${holder}'s.`,
    {
      exitCode: ExitCode.partial,
      hint:
        `Check which one is right. For ${holder}, pass --email ${shellQuote(holder)}; for ${email}, pass that customer's own --customer-id, ` +
        'or leave --customer-id out to create a new card for the e-mail.',
    },
  );
}

/** A fallback top-up refused: the trigger was posted for an e-mail, and the card does not say it is that e-mail's. */
export class UnknownHolderError extends OpcliError {}

/** After a posted trigger, a top-up only of a card known to be the e-mail's: only there could its late credit be seen. */
function refuseUnknownHolderTopUp(card: GiftCard, req: Pick<CreditRequest, 'email' | 'customerId'>): void {
  if (holdsEmail(card, req.email)) return;
  throw new UnknownHolderError(
    `The trigger workflow was posted for ${safeLine(req.email)} and its credit did not show on loyalty card ${safeLine(card.gift_card_id)} of customer ${req.customerId}, ` +
      'and the provider does not say whose that card is: a top-up could pay that customer while the trigger pays the e-mail, so nothing more was sent.',
    { hint: `Look at the provider for a card of ${safeLine(req.email)} credited by the trigger before paying again.` },
  );
}

/**
 * For `history --verify`: a fallback paid after a posted trigger, on a card not known to be the e-mail's,
 * may be paid twice (the trigger's credit may sit on another card of the e-mail). Undefined when it is the e-mail's.
 */
export function twoPathsWarning(
  attempt: { email: string; customerId?: string },
  outcome: { path?: string; cardId?: string },
  card: GiftCard | null,
): string | undefined {
  if (card && holdsEmail(card, attempt.email)) return undefined;
  const email = safeLine(attempt.email);
  const whose = !card
    ? 'who has no loyalty card'
    : cardHolder(card)
      ? `whose card ${safeLine(card.gift_card_id)} is ${safeLine(cardHolder(card) as string)}'s`
      : `whose card ${safeLine(card.gift_card_id)} does not say whose it is`;
  return (
    `Possibly paid by two paths: the trigger workflow was posted for ${email}, and then ${outcome.path ?? 'a fallback'} paid too${outcome.cardId ? ` (card ${safeLine(outcome.cardId)})` : ''}. ` +
    `The trigger's credit never showed on the loyalty card of customer ${attempt.customerId ?? '(none)'}, ${whose}, so it may be on another card of ${email}. ` +
    `Look at the provider for a card of ${email} and take one of the two credits back.`
  );
}
