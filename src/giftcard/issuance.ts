/**
 * One store credit issuance, exactly once, in two calls. `prepare()` checks the profile can issue,
 * gets the fields (the verb's callback asks for missing ones), validates the request, plans the
 * chain and refuses a duplicate from the ledger: nothing is sent or recorded, and its result is what
 * a person confirms. `issue()` records the attempt (the duplicate check again, under the ledger's
 * lock, since another run may have written since), runs the chain and records the outcome. No
 * prompt and no print: the verb asks and renders; this module takes an environment and returns or throws.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, AuthError, ExitCode, isOutcomeUncertain, NetworkError, OpcliError, UsageError, ValidationError } from '../core/errors.js';
import {
  type ChainEnv,
  type ChainPlan,
  type ChainResult,
  type ChainTiming,
  type CreditRequest,
  type DryRunStep,
  cardContent,
  describePath,
  dryRunSteps,
  profilePaths,
  requestBodies,
  requestPlan,
  runChain,
} from './chain.js';
import { orderLabel } from '../core/identity.js';
import { type CreditLedger, issuanceKey } from './ledger.js';
import { creditWhat, DuplicateIssuanceError, historyCommand, earlierRecords, recordText, refuseEarlier, refuseKnownId } from './earlier.js';
import { DEFAULT_CURRENCY, DEFAULT_MAX_CENTS, formatCents, formatMoney, parseAmount } from './money.js';
import { formatSeconds, type ProviderClient, ProviderRefusedError, type ProviderSettings } from './provider.js';

/** What a person or a script asked for, after parsing: the chain's request before the profile names its currency. */
export type IssueInput = Omit<CreditRequest, 'currency'>;

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

/** The request the typed fields describe, under a new issuance id: the amount in cents, the names trimmed. */
function issueInput(fields: TypedFields): IssueInput {
  return {
    issuance: randomUUID(),
    claimId: fields.bonus ? undefined : fields.claim?.trim(),
    orderNumber: fields.order.trim(),
    bonus: fields.bonus,
    amountCents: parseAmount(fields.amount),
    email: fields.email,
    name: fields.name.trim(),
    customerId: fields.customerId,
  };
}

/** The profile facts an issuance needs. */
export interface IssueProfile {
  name: string;
  baseUrl?: string;
  storeId?: string;
}

/** An issuance ready to confirm and send: nothing has been sent or recorded. */
export interface PreparedIssue {
  req: CreditRequest;
  plan: ChainPlan;
  key: string;
  /** "claim C-1" or "bonus credit for order #1001". */
  what: string;
  currency: string;
  profile: IssueProfile;
  settings: ProviderSettings;
  /** How many earlier records of the ledger name this claim or order, or a similar credit (what a dry run reports). */
  earlier: number;
}

/** The profile's ceiling in cents: its `max-amount`, else DEFAULT_MAX_CENTS. */
export function maxCents(settings: ProviderSettings): number {
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
export function checkCeiling(amountCents: number, settings: ProviderSettings, profile: string, allowLarge: boolean): void {
  const currency = settings.currency ?? DEFAULT_CURRENCY;
  const ceiling = maxCents(settings);
  if (allowLarge || amountCents <= ceiling) return;
  throw new UsageError(
    `The amount ${formatMoney(amountCents, currency)} is above the ceiling of profile "${profile}" (setting max-amount: ${formatMoney(ceiling, currency)}${settings.maxAmount ? '' : ', the default'}). Nothing was sent.`,
    `Check the amount (a slip of the finger?). If it is right, pass --allow-large; to change the ceiling: \`opcli config set max-amount <amount>\`.`,
  );
}

/** The claim or order an issuance is for, as soon as it is known (before amount, e-mail and name). */
export type KnownIds = Pick<CreditRequest, 'claimId' | 'orderNumber' | 'bonus'>;

/** What the fields' asker is told: the currency and ceiling, and whom to tell the claim or order once known. */
export interface FieldLimits {
  currency: string;
  maxCents: number;
  /** Refuses (exit 3, as prepare would) a claim or order the ledger already holds: call it before asking more. */
  known(ids: KnownIds): Promise<void>;
}

/** What preparing an issuance needs from outside. */
export interface PrepareEnv {
  settings: ProviderSettings;
  profile: IssueProfile;
  ledger: CreditLedger;
  now(): number;
  /**
   * The fields, with the missing ones asked for (or a usage error naming their flags): called once
   * the profile is known able to issue and the ledger readable, so nobody answers questions in vain.
   */
  fields(limits: FieldLimits): Promise<TypedFields>;
  /** A note on the plan (a path skipped and why), given before anything is refused or asked. */
  notice(text: string): void;
  allowLarge: boolean;
  force: boolean;
  /** Count the earlier records instead of refusing: nothing will be sent. */
  dryRun: boolean;
}

/**
 * Prepares one issuance: the profile's paths, the ledger read whole, the fields, the ceiling, the
 * chain planned, the bodies built, then the ledger's earlier records refused (unless forced, or
 * counted for a dry run). Sends and records nothing.
 */
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
  const input = issueInput(await env.fields({ currency, maxCents: maxCents(settings), known }));
  checkCeiling(input.amountCents, settings, profile.name, env.allowLarge);
  const req: CreditRequest = { ...input, currency };
  const plan = requestPlan(paths, req);
  try {
    requestBodies(req, settings);
  } catch (error) {
    throw new ValidationError(`The request cannot be sent: ${error instanceof Error ? error.message : String(error)}`, []);
  }
  const key = issuanceKey(req, scope);
  const what = creditWhat(req);
  for (const note of plan.notes) env.notice(note);
  const unchecked = { req, plan, key, what, currency, profile, settings, earlier: 0 };
  const held = await earlierRecords(ledger, unchecked, env.now());
  if (!env.dryRun) refuseEarlier(held, unchecked, ledger.path, env.force);
  return { ...unchecked, earlier: held.same.length + held.torn.length + held.similar.length };
}

/** Where the chain starts, in words, with the trigger's wait. */
export function firstPathText(prepared: PreparedIssue, timing: ChainTiming): string {
  return prepared.plan.first === 'trigger'
    ? `the trigger workflow, then the credit API if it does not post within ${formatSeconds(timing.triggerWaitMs)}`
    : describePath(prepared.plan.first);
}

/** The lines a person confirms: amount with currency, customer, references, first path. */
export function summaryLines(prepared: PreparedIssue, timing: ChainTiming): [string, string][] {
  const { req } = prepared;
  return [
    ['Amount', formatMoney(req.amountCents, prepared.currency)],
    ['Customer', req.name],
    ['E-mail', req.email],
    ['Customer id', req.customerId ?? '(none: a new gift card is created)'],
    ['Reference', req.bonus ? `order ${orderLabel(req.orderNumber)} (bonus)` : `claim ${req.claimId}, order ${orderLabel(req.orderNumber)}`],
    ['Subject', cardContent(req).subject],
    ['First path', firstPathText(prepared, timing)],
    ['Profile', prepared.profile.name],
  ];
}

/** The planned requests, for --dry-run, and how many earlier issuances would hold a real run. */
export function planDryRun(prepared: PreparedIssue, client: ProviderClient, timing: ChainTiming): { steps: DryRunStep[]; earlier: number } {
  return { steps: dryRunSteps(prepared.plan, prepared.req, client, prepared.settings, timing), earlier: prepared.earlier };
}

export { DuplicateIssuanceError, recordText };

/** What the issuance needs from outside. */
export interface IssueEnv {
  client: ProviderClient;
  ledger: CreditLedger;
  timing: ChainTiming;
  now(): number;
  sleep(ms: number): Promise<void>;
  /** Progress in plain words. */
  say(text: string): void;
  /** Removes secrets from text that goes to the ledger. */
  redact(text: string): string;
  aborted(): boolean;
  user: string;
  host: string;
  force: boolean;
}

/** A finished issuance. */
export interface IssueOutcome extends ChainResult {
  notes: string[];
}

/**
 * Records the attempt (refusing a duplicate under the ledger's lock), runs the chain and records
 * the outcome. A refusal before any money moved is recorded `failed`; anything after a request that
 * may have moved money is `uncertain`. Throws InterruptedError on Ctrl-C, after recording.
 */
export async function issue(prepared: PreparedIssue, env: IssueEnv): Promise<IssueOutcome> {
  const { req, plan, key, ledger } = { ...prepared, ledger: env.ledger };
  const stamp = () => new Date(env.now()).toISOString();
  const common = { v: 1 as const, issuance: req.issuance, key, user: env.user };
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
      currency: prepared.currency,
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
  const chainEnv: ChainEnv = { client: env.client, settings: prepared.settings, timing: env.timing, now: env.now, sleep: env.sleep, say: env.say };
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
      (error instanceof NetworkError && !error.sent) ||
      // Refused before sending (a credential bound to another origin) or answered 401/403.
      error instanceof AuthError ||
      error instanceof UsageError;
    const status = progress.triggerPosted || (progress.moneyMayHaveMoved && !refused) ? 'uncertain' : 'failed';
    const message = error instanceof Error ? error.message : String(error);
    await ledger.appendLocked({
      ...common,
      at: stamp(),
      type: 'outcome',
      status,
      triggerPosted: progress.triggerPosted,
      possibleDoubleCredit: false,
      error: env.redact(message),
      notes: progress.notes,
    });
    throw explainFailure(error, status, prepared, progress.notes, env.aborted());
  }
  await ledger.appendLocked({
    ...common,
    at: stamp(),
    type: 'outcome',
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

/** An issuance that did not finish, with what was recorded and the notes gathered on the way. */
export class IssuanceFailedError extends OpcliError {
  readonly status: 'failed' | 'uncertain';
  readonly notes: string[];
  /** Ended by Ctrl-C (exit 130). */
  readonly interrupted: boolean;
  constructor(
    message: string,
    status: 'failed' | 'uncertain',
    notes: string[],
    options: { hint?: string; cause?: unknown; exitCode?: ExitCode; interrupted?: boolean },
  ) {
    super(message, options);
    this.status = status;
    this.notes = notes;
    this.interrupted = !!options.interrupted;
  }
}

function explainFailure(error: unknown, status: 'failed' | 'uncertain', prepared: PreparedIssue, notes: string[], aborted: boolean): unknown {
  const { what } = prepared;
  if (aborted) {
    return new IssuanceFailedError(
      status === 'uncertain'
        ? `Interrupted after a request that moves money was sent: store credit for ${what} may have been issued; recorded as uncertain in the ledger.`
        : `Interrupted before any money was sent for ${what}; recorded as failed in the ledger.`,
      status,
      notes,
      { exitCode: ExitCode.interrupted, interrupted: true, cause: error },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  const hint = error instanceof OpcliError ? error.hint : undefined;
  if (status === 'uncertain') {
    return new IssuanceFailedError(`Store credit for ${what} may or may not have been issued: ${message}`, status, notes, {
      hint: `${hint ? `${hint}\n` : ''}Recorded as uncertain in the ledger. Check the customer's card at the provider before anything else; \`${historyCommand(prepared.req)}\` shows the record, and --force issues again only when you are sure nothing was paid.`,
      cause: error,
    });
  }
  const exitCode = error instanceof OpcliError ? error.exitCode : ExitCode.failed;
  return new IssuanceFailedError(`${message}\nNothing was issued for ${what}; recorded as failed in the ledger.`, status, notes, {
    hint,
    cause: error,
    exitCode,
  });
}
