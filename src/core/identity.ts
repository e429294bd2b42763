/**
 * What makes two ids one as people type, copy or paste them (`C-2001`, `c-2001`, `C‐2001`, `#1003`):
 * everything that refuses to move money or file a claim twice compares these, never the raw text.
 * CHOICE (docs/spec-choices.md#identity-of-ids): Unicode NFKC (full-width letters and digits, ligatures, compatibility forms),
 * every dash, hyphen and minus as `-`, case folded, white space trimmed and runs of it as one space,
 * invisible format characters (zero-width space, BOM, soft hyphen) dropped, and for an order number
 * a leading `#`.
 */

/** Every dash, hyphen and minus sign (Unicode's Dash property: U+2010–U+2015, U+2212, U+FE58, U+FE63, U+FF0D, …). */
const DASHES = /\p{Dash}/gu;
/** Characters that print as nothing: zero-width space and joiners, the BOM, the soft hyphen, bidi marks. */
const INVISIBLE = /\p{Cf}/gu;
/** Any run of white space. */
const SPACES = /\s+/gu;
/** Printable ASCII and its white space, where the rules come down to lower case and spaces (most ids: one per claim row). */
const PLAIN_ASCII = /^[\t-\r\x20-\x7e]*$/;

/** The identity of an id as people vary it; idempotent. */
export function idIdentity(text: string): string {
  if (PLAIN_ASCII.test(text)) return text.toLowerCase().replace(SPACES, ' ').trim();
  // One pass is not always a fixed point (ẞ lowers to ß, which the next pass folds to ss): run until nothing changes.
  let t = text;
  for (let pass = 0; pass < 4; pass++) {
    const next = foldOnce(t);
    if (next === t) break;
    t = next;
  }
  return t;
}

/** One pass of the rules: NFKC, invisible characters dropped, dashes as `-`, case folded, spaces collapsed. */
function foldOnce(text: string): string {
  let t = text.normalize('NFKC').replace(INVISIBLE, '').replace(DASHES, '-');
  // Full case folding, as near as JavaScript gets without tables: ß → ss, ﬀ → ff, Σ/ς → σ.
  t = t.toUpperCase().toLowerCase().normalize('NFKC');
  return t.replace(INVISIBLE, '').replace(DASHES, '-').replace(SPACES, ' ').trim();
}

/** The identity of a claim id (`C-2001`, `c-2001`, `C‐2001` are one claim). */
export const claimIdentity = idIdentity;

/** The identity of an order number: as a claim id, and a leading `#` (as the orders list shows it) dropped. */
export function orderIdentity(orderNumber: string): string {
  return idIdentity(orderNumber).replace(/^#+ ?/, '');
}

/** The identity of a customer's e-mail: as an id (case folded, NFKC, trimmed). */
export const emailIdentity = idIdentity;

/** An order number as people read it: `#1003`, whether it was typed `1003` or `#1003`. */
export function orderLabel(orderNumber: string): string {
  return `#${orderNumber.trim().replace(/^[#＃]+\s*/, '')}`;
}
