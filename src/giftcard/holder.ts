/**
 * Whose loyalty card it is. The trigger workflow credits the card of the customer an e-mail belongs
 * to, while opcli confirms the credit (and tops up) through the card of the customer id it was
 * given: when the two are different people, a slow trigger pays one customer and the fallback
 * another. The provider's card says whose it is, so a disagreement is held before money moves,
 * and a card that does not say is never topped up after a trigger was posted.
 */
import { ExitCode, OpcliError } from '../core/errors.js';
import { emailIdentity } from '../core/identity.js';
import type { GiftCard } from '../schemas.js';
import { safeLine } from '../text/safe.js';
import { shellQuote } from '../text/safe.js';
import type { CreditRequest } from './chain-plan.js';

/**
 * CHOICE (docs/spec-choices.md#loyalty-card-holder): the spec lists a lookup's fields (gift_card_id,
 * amount, code, expires_on) and says a card carries the customer's e-mail; where the answer
 * carries it, it is read from the first of these fields that holds a string.
 */
const HOLDER_FIELDS = ['customer_email', 'email', 'recipient_email'] as const;

/** The e-mail of the card's holder as the provider answered it, or undefined when the answer does not say. */
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

/** Throws CardHolderMismatchError when the customer's loyalty card says it belongs to another e-mail than the request's. */
export function refuseOtherHolder(card: GiftCard | null, req: Pick<CreditRequest, 'email' | 'customerId'>): void {
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

/**
 * Refuses the credit API's top-up of `card` after a trigger was posted for `req.email` whose credit
 * did not show there, unless the card is known to be the e-mail's: only there does the trigger's
 * credit land, so only there can a late one be seen. (A card known to be another's is held by
 * refuseOtherHolder.)
 */
export function refuseUnknownHolderTopUp(card: GiftCard, req: Pick<CreditRequest, 'email' | 'customerId'>): void {
  if (holdsEmail(card, req.email)) return;
  throw new UnknownHolderError(
    `The trigger workflow was posted for ${safeLine(req.email)} and its credit did not show on loyalty card ${safeLine(card.gift_card_id)} of customer ${req.customerId}, ` +
      'and the provider does not say whose that card is: a top-up could pay that customer while the trigger pays the e-mail, so nothing more was sent.',
    { hint: `Look at the provider for a card of ${safeLine(req.email)} credited by the trigger before paying again.` },
  );
}

/**
 * For `history --verify`: an issuance the credit API (or the storefront) paid after the trigger was
 * posted, whose watched card is not known to be the e-mail's, was paid by two paths as far as anyone
 * can tell: the trigger's credit, never seen, may sit on another card of that e-mail. Answers the
 * warning, or undefined when the card is the e-mail's (then the late-credit watch rules it out).
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
