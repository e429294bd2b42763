/**
 * The missing fields of `giftcard issue`, asked on a terminal in plain words and checked as they are
 * typed. An e-mail whose domain looks misspelt is asked about on
 * a terminal and warned about on stderr in scripts.
 */
import type { Deps } from '../../core/deps.js';
import { UsageError, ValidationError } from '../../core/errors.js';
import type { TypedFields } from '../../giftcard/issuance.js';
import { safeLine } from '../../text/safe.js';
import { answerProblem, type IssueFields } from './issue-flags.js';
import { suggestEmail } from '../../giftcard/email.js';
import { formatMoney, parseAmount } from '../../giftcard/money.js';
import { EmailAddress } from '../../schemas.js';

const REQUIRED = ['order', 'amount', 'email', 'name'] as const;

function emailProblem(value: string, isEmail: (v: string) => boolean): true | string {
  return isEmail(value) ? true : 'expected an e-mail address such as alice@example.com';
}

/** Fills the missing fields by asking, or fails naming the flags when nobody can answer. */
export async function completeFields(
  fields: IssueFields,
  deps: Deps,
  currency: string,
  ceiling: { maxCents: number; allowLarge: boolean } = { maxCents: Number.POSITIVE_INFINITY, allowLarge: true },
): Promise<TypedFields> {
  const isEmail = (v: string) => EmailAddress.safeParse(v.trim()).success;
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
            if (parseAmount(v) <= ceiling.maxCents || ceiling.allowLarge) return true;
            // Asked again at once, rather than refused after every other question.
            return `above this profile's ceiling (setting max-amount: ${formatMoney(ceiling.maxCents, currency)}); if the amount is right, run again with --allow-large`;
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
  return f as TypedFields;
}

/** Asks about (terminal) or warns about (script) an e-mail domain that looks misspelt. */
async function checkEmailDomain(email: string, deps: Deps, validate: (v: string) => true | string): Promise<string> {
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
