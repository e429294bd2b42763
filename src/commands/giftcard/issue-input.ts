/**
 * The fields of `giftcard issue`: from flags, and on a terminal from questions for the missing ones
 * (plain words, checked as they are typed). An e-mail whose domain looks misspelt is asked about on
 * a terminal and warned about on stderr in scripts.
 */
import type { Deps } from '../../deps.js';
import { UsageError, ValidationError } from '../../errors.js';
import { textProblem } from '../../text/flag-text.js';
import { safeLine } from '../../text/safe.js';

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
  dryRun: boolean;
  force: boolean;
  showCode: boolean;
  json: boolean;
  triggerWaitMs: number;
  lateCheckMs: number;
  pollIntervalMs: number;
}

/** How often the loyalty card is read while waiting for the trigger. */
export const POLL_INTERVAL_MS = 250;
/** The shortest --trigger-wait and --late-check accepted. */
export const MIN_WAIT_MS = 1000;

export type IssueFlags = Partial<Omit<IssueOptions, 'triggerWaitMs' | 'lateCheckMs' | 'pollIntervalMs'>> & { triggerWait: string; lateCheck: string };

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
function answerProblem(value: string, what: string): true | string {
  const problem = textProblem(value);
  return problem ? `${what} ${problem}` : true;
}

/** Checks the flag combination and turns the flags into options (missing fields are asked later). */
export async function parseFlags(flags: IssueFlags): Promise<IssueOptions> {
  const { parseDuration } = await import('../../flags.js');
  const minHint = 'A shorter wait gives up before the trigger workflow can post, and a fallback then risks paying twice.';
  if (flags.bonus && flags.claim !== undefined) throw new UsageError('Give either --claim (store credit for a claim) or --bonus, not both.');
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
    dryRun: !!flags.dryRun,
    force: !!flags.force,
    showCode: !!flags.showCode,
    json: !!flags.json,
    // Shorter windows would fall back (or stop watching) before a trigger could post: a double credit.
    triggerWaitMs: parseDuration(flags.triggerWait, '--trigger-wait', { minMs: MIN_WAIT_MS, maxMs: 600_000, minHint }),
    lateCheckMs: parseDuration(flags.lateCheck, '--late-check', { minMs: MIN_WAIT_MS, maxMs: 600_000, minHint }),
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

const REQUIRED = ['order', 'amount', 'email', 'name'] as const;

function emailProblem(value: string, isEmail: (v: string) => boolean): true | string {
  return isEmail(value) ? true : 'expected an e-mail address such as alice@example.com';
}

/** Fills the missing fields by asking, or fails naming the flags when nobody can answer. */
export async function completeFields(
  fields: IssueFields,
  deps: Deps,
  currency: string,
): Promise<Required<Omit<IssueFields, 'claim' | 'customerId'>> & IssueFields> {
  const [{ z }, { parseAmount }] = await Promise.all([import('zod'), import('../../giftcard/money.js')]);
  const isEmail = (v: string) => z.email().safeParse(v.trim()).success;
  const f = { ...fields };
  const missing = [...(!f.bonus && !f.claim?.trim() ? ['claim'] : []), ...REQUIRED.filter((k) => !f[k]?.trim())];
  if (missing.length && !deps.canPrompt()) {
    throw new UsageError(
      `Missing ${missing.map((m) => `--${m}`).join(', ')}.`,
      f.bonus || !missing.includes('claim')
        ? 'See `opcli giftcard issue --help` for an example.'
        : 'Pass --claim for a claim resolved with store credit, or --bonus for a bonus credit on an order. See `opcli giftcard issue --help`.',
    );
  }
  if (missing.length) {
    const prompter = await deps.prompter();
    const required = (what: string) => (v: string) => (v.trim() ? answerProblem(v, what) : `${what} is needed`);
    if (missing.includes('claim'))
      f.claim = await prompter.input({ message: 'Claim id (the claim resolved with store credit):', validate: required('the claim id') });
    if (missing.includes('order'))
      f.order = await prompter.input({ message: 'Order number (shown on the card as the reference):', validate: required('the order number') });
    if (missing.includes('amount')) {
      f.amount = await prompter.input({
        message: `Amount in ${currency}, e.g. 25.00:`,
        validate: (v) => {
          try {
            parseAmount(v);
            return true;
          } catch (error) {
            return error instanceof Error ? error.message.replace(/^Invalid --amount "[^"]*": /, '') : 'invalid amount';
          }
        },
      });
    }
    if (missing.includes('email'))
      f.email = await prompter.input({ message: "Customer's e-mail (the card is sent there):", validate: (v) => emailProblem(v, isEmail) });
    if (missing.includes('name')) f.name = await prompter.input({ message: "Customer's name (as the e-mail greets them):", validate: required('the name') });
    if (f.customerId === undefined) {
      const id = await prompter.input({
        message: "Customer's storefront id, to add to their loyalty card (Enter to skip: a new card is created):",
        validate: (v) => (v.trim() ? answerProblem(v, 'the customer id') : true),
      });
      f.customerId = id.trim() || undefined;
    }
  }
  const email = (f.email as string).trim();
  if (!isEmail(email)) {
    throw new ValidationError(`Invalid --email "${safeLine(email)}": expected a valid e-mail address (the provider needs one to create a card).`, [
      { path: 'email', message: 'expected a valid e-mail address' },
    ]);
  }
  f.email = await checkEmailDomain(email, deps, (v) => emailProblem(v, isEmail));
  return f as Required<Omit<IssueFields, 'claim' | 'customerId'>> & IssueFields;
}

/** Asks about (terminal) or warns about (script) an e-mail domain that looks misspelt. */
async function checkEmailDomain(email: string, deps: Deps, validate: (v: string) => true | string): Promise<string> {
  const { suggestEmail } = await import('../../giftcard/email.js');
  let current = email;
  for (;;) {
    const suggestion = suggestEmail(current);
    if (!suggestion) return current;
    if (!deps.canPrompt()) {
      deps.err(`Warning: the e-mail ${safeLine(current)} looks misspelt (did you mean ${suggestion}?); the card goes to ${safeLine(current)} as given.\n`);
      return current;
    }
    const prompter = await deps.prompter();
    const choice = await prompter.select({
      message: `The e-mail ${safeLine(current)} looks misspelt. Did you mean ${suggestion}?`,
      choices: [
        { name: `Use ${suggestion}`, value: 'suggested' },
        { name: `Keep ${safeLine(current)}`, value: 'keep' },
        { name: 'Type it again', value: 'retype' },
      ],
      default: 'suggested',
    });
    if (choice === 'suggested') return suggestion;
    if (choice === 'keep') return current;
    current = (await prompter.input({ message: "Customer's e-mail:", validate })).trim();
  }
}
