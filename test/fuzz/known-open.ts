/**
 * KNOWN_OPEN: generated cases that fail today in code another issue owns. Each entry is one finding
 * of CONTRIBUTING.md's "Known open findings", scoped out so the suite stays green until that code is
 * fixed. The lead empties this list after merging the other branches; commands.test.ts runs the
 * scoped-out command-line cases too and names those that now pass, so no entry lingers.
 */
export interface KnownOpen {
  /** `claims file`; `*` for every command. */
  command: string;
  /** The flag, argument, file or variable; `*` for every one. */
  target: string;
  /** The class of wrong value; `*` for every class. */
  cls: string;
  /** The finding, in one line. */
  reason: string;
}

const TEXT = ['empty', 'blank', 'control', 'invalid-utf8'];
const each = (command: string, targets: string[], classes: string[], reason: string): KnownOpen[] =>
  targets.flatMap((target) => classes.map((cls) => ({ command, target, cls, reason })));

export const KNOWN_OPEN: KnownOpen[] = [
  // issue 10 (claims)
  ...each(
    'claims file',
    ['--customer-phone', '--item-details', '--item-sku', '--item-source-item-id', '--item-source-product-id', '--item-source-variant-id', '--item-sub-issue-id',
      '--shipping-address-origin', '--shipping-address2', '--shipping-country-abr', '--shipping-state', '--shipping-state-abr', '--store-id', '--warranty-product-description'],
    TEXT,
    'claims file sends optional text flags as given: empty, blank, control characters, U+FFFD reach the claim (F1)',
  ),
  ...each(
    'claims file',
    ['--item-name', '--shipping-address1', '--shipping-city', '--shipping-country', '--shipping-first-name', '--shipping-last-name', '--shipping-zip'],
    ['control', 'invalid-utf8'],
    'claims file sends required text flags with control characters or U+FFFD in them (F1)',
  ),
  ...each(
    'claims file',
    ['--claim-filed-from', '--item-image', '--item-product-image', '--shipping-lat', '--shipping-lng', '--signature', '--warranty-receipt-image'],
    ['empty', 'blank'],
    'claims file drops an empty or blank optional flag silently (--signature "" is allowed by the spec, but a blank one is not) (F1)',
  ),
  ...each('claims file', ['--data'], ['wrong-type'], 'claims file coerces JSON of the wrong type in --data ("yes" for a boolean) and files the claim (F1)'),
  ...each('claims file', ['--data', 'jsonl row', 'csv row'], ['invalid-utf8'], 'claims file reads a --data file or a batch that is not UTF-8 as U+FFFD and files it (F1)'),
  ...each('claims file', ['--data'], ['control'], 'claims file sends a --data claim whose strings hold control characters or U+FFFD (F1)'),
  // issue 11 (gift card), as merged into main at 1f17abe
  ...each('giftcard issue', ['--customer-id'], TEXT, 'giftcard issue takes an empty, blank or garbled --customer-id (F2)'),
  ...each('giftcard issue', ['--claim', '--order', '--name'], ['control', 'invalid-utf8'], 'giftcard issue takes a claim, order number or name with control characters or U+FFFD and issues the card (F2)'),
  ...each('giftcard setup', ['--shop-url'], ['blank', 'control', 'invalid-utf8'], 'giftcard setup saves a blank or garbled shop URL (F3)'),
  ...each('giftcard setup', ['--api-url', '--trigger-url', '--native-url'], ['not-a-url'], 'giftcard setup saves a file: or otherwise non-http(s) URL (F3)'),
  ...each('giftcard setup', ['--currency'], ['not-listed'], 'giftcard setup saves a currency that is not in the spec\'s list (F3)'),
  ...each('giftcard history', ['--claim', '--order'], TEXT, 'giftcard history takes an empty or garbled filter and answers "no issuances" (F4)'),
  // issue 12 (config, auth, profiles), as merged into main at 1f17abe
  ...each('config set', ['value'], ['blank', 'control', 'invalid-utf8'], 'config set saves a blank or garbled value (F5)'),
  ...each('profiles remove', ['name'], [...TEXT, 'bad-name'], 'profiles remove answers an impossible profile name with exit 1 "No profile named", not a usage error (F6)'),
  ...each('auth login', ['--store-id'], ['blank', 'control', 'invalid-utf8'], 'auth login --client-credentials sends a blank or garbled --store-id to the token endpoint (F7)'),
  ...each('orders list', ['settings.json'], ['empty', 'invalid-utf8'], 'an empty settings file, or one that is not UTF-8, reads as "No base URL is configured" (F11)'),
  ...each('orders list', ['credentials.json'], ['empty', 'invalid-utf8'], 'an empty credentials file, or one that is not UTF-8, reads as "Not logged in", exit 4 (F11)'),
  ...each('orders list', ['OPCLI_HTTP_TIMEOUT', 'OPCLI_HTTP_RETRIES'], ['blank'], 'a blank OPCLI_HTTP_TIMEOUT or OPCLI_HTTP_RETRIES is ignored silently (F13)'),
  ...each('orders list', ['OPCLI_CLIENT_ID', 'OPCLI_CLIENT_SECRET'], ['invalid-utf8'], 'OPCLI_CLIENT_ID or OPCLI_CLIENT_SECRET holding U+FFFD is taken without a word (F14)'),
  ...each('orders list', ['OPCLI_TOKEN'], ['invalid-utf8'], 'OPCLI_TOKEN holding U+FFFD is retried as a lost connection until interrupted (F16)'),
  // no helper named in the briefs: for the lead to assign
  ...each('orders list', ['--cursor'], ['control', 'invalid-utf8'], 'orders list sends a garbled --cursor; the server refuses it, but only after the request (F8)'),
  ...each('api', ['path'], [...TEXT, 'other-host'], 'api sends an empty, garbled or protocol-relative path (//host/...) instead of refusing it (F9)'),
];

/** Whether a case is scoped out by KNOWN_OPEN (never with FUZZ_IGNORE_KNOWN_OPEN=1, to see every finding). */
export function isKnownOpen(command: string, target: string, cls: string): boolean {
  if (process.env.FUZZ_IGNORE_KNOWN_OPEN) return false;
  return KNOWN_OPEN.some(
    (k) => (k.command === '*' || k.command === command) && (k.target === '*' || k.target === target) && (k.cls === '*' || k.cls === cls),
  );
}
