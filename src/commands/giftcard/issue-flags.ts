/** The flags of `giftcard issue`: each text value checked before anything is asked or sent, the waits parsed. */
import { UsageError } from '../../core/errors.js';
import { textProblem } from '../../text/safe.js';
import { parseDuration } from '../../core/flags.js';
import { jsonFields } from '../../core/json-fields.js';

/** The fields as typed (flags or answers), not yet parsed. */
export interface IssueFields {
  claim?: string;
  bonus: boolean;
  order?: string;
  amount?: string;
  email?: string;
  name?: string;
  customerId?: string;
}

/** Flag values of `giftcard issue`. */
export interface IssueOptions extends IssueFields {
  yes: boolean;
  /** The e-mail is right as typed, even where its domain looks misspelt. */
  emailConfirmed: boolean;
  dryRun: boolean;
  force: boolean;
  allowLarge: boolean;
  showCode: boolean;
  json: boolean;
  /** `--json FIELDS`: only these fields of the issued card's record. */
  jsonFields?: string[];
  triggerWaitMs: number;
  lateCheckMs: number;
  pollIntervalMs: number;
}

/** How often the loyalty card is read while waiting for the trigger. */
export const POLL_INTERVAL_MS = 250;
/** The shortest --trigger-wait and --late-check accepted. */
export const MIN_WAIT_MS = 1000;

export type IssueFlags = Partial<Omit<IssueOptions, 'triggerWaitMs' | 'lateCheckMs' | 'pollIntervalMs' | 'json' | 'jsonFields'>> & {
  triggerWait: string;
  lateCheck: string;
  /** `--json`, alone or with a field list. */
  json?: boolean | string;
};

/** The fields of the issued card's JSON record, which `--json FIELDS` selects from (docs/json.md). */
export const ISSUED_FIELDS = [
  'status',
  'issuance',
  'claimId',
  'orderNumber',
  'bonus',
  'amount',
  'currency',
  'customer',
  'profile',
  'path',
  'pathDescription',
  'fellBackFromTrigger',
  'triggerPosted',
  'cardId',
  'balance',
  'code',
  'expiresOn',
  'possibleDoubleCredit',
  'warnings',
  'notes',
] as const;

/** The text flags checked with textProblem, and what to pass instead. */
const TEXT_FLAGS = [
  ['claim', 'claim'],
  ['order', 'order'],
  ['email', 'email'],
  ['name', 'name'],
  ['customer-id', 'customerId'],
] as const;
const TEXT_HINTS: Record<(typeof TEXT_FLAGS)[number][0], string> = {
  claim: 'Pass the id of the claim resolved with store credit, e.g. --claim C-1001 (or --bonus for a bonus credit).',
  order: 'Pass the order number, e.g. --order 1001.',
  email: "Pass the customer's e-mail, e.g. --email alice@example.com.",
  name: 'Pass the customer\'s name, e.g. --name "Alice Example".',
  'customer-id': 'Pass the storefront customer id, e.g. --customer-id cust_1001, or leave --customer-id out (a new card is created).',
};

/** Why a (non-blank) answer typed at a prompt cannot be meant, as for the flag, or true. */
export function answerProblem(value: string, what: string): true | string {
  const problem = textProblem(value);
  return problem ? `${what} ${problem}` : true;
}

/** Checks the flag combination and turns the flags into options (missing fields are asked later). */
export async function parseFlags(flags: IssueFlags): Promise<IssueOptions> {
  const minHint = 'A shorter wait gives up before the trigger workflow can post, and a fallback then risks paying twice.';
  if (flags.bonus && flags.claim !== undefined) throw new UsageError('Give either --claim (store credit for a claim) or --bonus, not both.');
  const fields = jsonFields(flags.json, '--json', ISSUED_FIELDS);
  if (fields && flags.dryRun)
    throw new UsageError('--json FIELDS selects fields of the issued card; a dry run prints its plan whole.', 'Use --json alone with --dry-run.');
  // Money moves on these values and the ledger keys on them: a value no one typed on purpose stops here.
  for (const [flag, value] of TEXT_FLAGS.map(([f, key]) => [f, flags[key]] as const)) {
    const problem = value === undefined ? undefined : textProblem(value);
    if (problem) throw new UsageError(`--${flag} ${problem}.`, TEXT_HINTS[flag]);
  }
  const trim = (v: string | undefined) => v?.trim() || undefined;
  return {
    claim: trim(flags.claim),
    bonus: !!flags.bonus,
    order: trim(flags.order),
    amount: flags.amount,
    email: trim(flags.email),
    name: trim(flags.name),
    customerId: trim(flags.customerId),
    yes: !!flags.yes,
    emailConfirmed: !!flags.emailConfirmed,
    dryRun: !!flags.dryRun,
    force: !!flags.force,
    allowLarge: !!flags.allowLarge,
    showCode: !!flags.showCode,
    json: !!flags.json,
    jsonFields: fields,
    // Shorter windows would fall back (or stop watching) before a trigger could post: a double credit.
    triggerWaitMs: parseDuration(flags.triggerWait, '--trigger-wait', { minMs: MIN_WAIT_MS, maxMs: 600_000, minHint }),
    lateCheckMs: parseDuration(flags.lateCheck, '--late-check', { minMs: MIN_WAIT_MS, maxMs: 600_000, minHint }),
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}
