/** Where a claim whose answer was lost can be checked (the API cannot look one up): the words of every message about one. */

/** Where to look for one claim that may exist: completes "… the claim may exist: ". */
export const CHECK_ONE_CLAIM =
  "look for it in the merchant dashboard (the order-protection app's claims, by the customer's e-mail and the item): the API cannot look a claim up. `opcli claims history` shows when opcli sent it";

/** Where to look for the uncertain rows of a batch, and what --retry-uncertain then does. */
export const CHECK_UNCERTAIN_ROWS =
  "Look for them in the merchant dashboard (the order-protection app's claims, by the customer's e-mail and the item): the API cannot look a claim up, and `opcli claims history` shows when each was sent. Then --retry-uncertain sends every uncertain row again: one that exists is filed a second time, so pass it only once none of them is there.";
