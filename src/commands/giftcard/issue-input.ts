/**
 * The missing fields of `giftcard issue`, asked on a terminal in plain words and checked as they are
 * typed; the claim (or a bonus's order) is checked against the ledger as soon as it is known, before
 * the remaining questions. An e-mail whose domain looks misspelt is asked about when someone is
 * there to answer; under --yes or without a terminal it is refused unless --email-confirmed.
 */
import type { Deps } from '../../cli/deps.js';
import { UsageError, ValidationError } from '../../core/errors.js';
import type { FieldLimits, TypedFields } from '../../giftcard/issuance.js';
import { safeLine } from '../../text/safe.js';
import { shellQuote } from '../../text/safe.js';
import { answerProblem, type IssueFields, type IssueOptions } from './issue-flags.js';
import { suggestEmail } from '../../giftcard/email.js';
import { formatMoney, parseAmount } from '../../giftcard/money.js';
import { EmailAddress } from '../../schemas.js';

const REQUIRED = ['order', 'amount', 'email', 'name'] as const;

function emailProblem(value: string, isEmail: (v: string) => boolean): true | string {
  return isEmail(value) ? true : 'expected an e-mail address such as alice@example.com';
}

/** The flags that decide how a misspelt e-mail domain is met. */
type EmailFlags = Pick<IssueOptions, 'yes' | 'dryRun' | 'emailConfirmed'>;
/** The flags the questions read besides the fields. */
type AskFlags = EmailFlags & Pick<IssueOptions, 'allowLarge'>;

/**
 * Fills the missing fields by asking, or fails naming the flags when nobody can answer. The ledger
 * is asked (`limits.known`) as soon as the claim, or a bonus's order, is known.
 */
export async function completeFields(fields: IssueFields & AskFlags, deps: Deps, limits: FieldLimits): Promise<TypedFields> {
  const { currency, known } = limits;
  const ceiling = { maxCents: limits.maxCents, allowLarge: fields.allowLarge };
  const isEmail = (v: string) => EmailAddress.safeParse(v.trim()).success;
  const f = { ...fields };
  const knownIds = async () => {
    if (f.bonus ? f.order?.trim() : f.claim?.trim()) await known({ claimId: f.claim?.trim(), orderNumber: f.order?.trim() ?? '', bonus: f.bonus });
  };
  const missing = [...(!f.bonus && !f.claim?.trim() ? ['claim'] : []), ...REQUIRED.filter((k) => !f[k]?.trim())];
  if (missing.length && !deps.canPrompt()) {
    throw new UsageError(
      `Missing ${missing.map((m) => `--${m}`).join(', ')}.`,
      f.bonus || !missing.includes('claim')
        ? 'See `opcli giftcard issue --help` for an example.'
        : 'Pass --claim for a claim resolved with store credit, or --bonus for a bonus credit on an order. See `opcli giftcard issue --help`.',
    );
  }
  await knownIds();
  if (missing.length) {
    const prompter = await deps.prompter();
    const required = (what: string) => (v: string) => (v.trim() ? answerProblem(v, what) : `${what} is needed`);
    if (missing.includes('claim')) {
      f.claim = await prompter.input({ message: 'Claim id (the claim resolved with store credit):', validate: required('the claim id') });
      await knownIds();
    }
    if (missing.includes('order')) {
      f.order = await prompter.input({ message: 'Order number (shown on the card as the reference):', validate: required('the order number') });
      if (f.bonus) await knownIds();
    }
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
  // A person who just typed the e-mail is there to answer about it, --yes or not.
  const ask = deps.canPrompt() && (!fields.yes || missing.includes('email'));
  f.email = await checkEmailDomain(email, deps, fields, ask, (v) => emailProblem(v, isEmail));
  return f as TypedFields;
}

/**
 * An e-mail domain that looks misspelt: asked about when someone can answer (`ask`); otherwise
 * (--yes, a script) refused, exit 2, naming the suggestion and --email-confirmed, since the card
 * would go to an address nobody reads. A dry run only warns; --email-confirmed takes it as typed.
 */
async function checkEmailDomain(email: string, deps: Deps, flags: EmailFlags, ask: boolean, validate: (v: string) => true | string): Promise<string> {
  let current = email;
  for (;;) {
    const suggestion = suggestEmail(current);
    if (!suggestion || flags.emailConfirmed) return current;
    if (!ask && flags.dryRun) {
      deps.err(`Warning: the e-mail ${safeLine(current)} looks misspelt (did you mean ${suggestion}?); a real run is refused without --email-confirmed.\n`);
      return current;
    }
    if (!ask) {
      throw new UsageError(
        `The e-mail ${safeLine(current)} looks misspelt: did you mean ${suggestion}? Nothing was sent.`,
        `If ${suggestion} is meant, pass --email ${shellQuote(suggestion)}; if ${safeLine(current)} is right as typed, pass --email-confirmed as well.`,
      );
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
