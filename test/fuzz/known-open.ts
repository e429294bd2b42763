/**
 * KNOWN_OPEN: generated cases that fail today in code another issue owns. Each entry is one finding
 * of docs/_incoming/issue-17-findings.md, scoped out so the suite stays green until that code is
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

const each = (command: string, targets: string[], classes: string[], reason: string): KnownOpen[] =>
  targets.flatMap((target) => classes.map((cls) => ({ command, target, cls, reason })));

export const KNOWN_OPEN: KnownOpen[] = [
  // issue 10 (claims): a batch that is not UTF-8 (the batch pipeline reads rows; F1)
  ...each('claims file', ['jsonl row', 'csv row'], ['invalid-utf8'], 'claims file reads a batch that is not UTF-8 as U+FFFD and files it (F1)'),
  // issue 12 (config files, OPCLI_*) and 16 (http), as merged into main at 1f17abe
  ...each('orders list', ['settings.json'], ['empty', 'invalid-utf8'], 'an empty settings file, or one that is not UTF-8, reads as "No base URL is configured" (F11)'),
  ...each('orders list', ['credentials.json'], ['empty', 'invalid-utf8'], 'an empty credentials file, or one that is not UTF-8, reads as "Not logged in", exit 4 (F11)'),
  ...each('orders list', ['OPCLI_HTTP_TIMEOUT', 'OPCLI_HTTP_RETRIES'], ['blank'], 'a blank OPCLI_HTTP_TIMEOUT or OPCLI_HTTP_RETRIES is ignored silently (F13)'),
  ...each('orders list', ['OPCLI_CLIENT_ID', 'OPCLI_CLIENT_SECRET'], ['invalid-utf8'], 'OPCLI_CLIENT_ID or OPCLI_CLIENT_SECRET holding U+FFFD is taken without a word (F14)'),
  ...each('orders list', ['OPCLI_TOKEN'], ['invalid-utf8'], 'OPCLI_TOKEN holding U+FFFD is retried as a lost connection until interrupted (F16)'),
];

/** Whether a case is scoped out by KNOWN_OPEN (never with FUZZ_IGNORE_KNOWN_OPEN=1, to see every finding). */
export function isKnownOpen(command: string, target: string, cls: string): boolean {
  if (process.env.FUZZ_IGNORE_KNOWN_OPEN) return false;
  return KNOWN_OPEN.some(
    (k) => (k.command === '*' || k.command === command) && (k.target === '*' || k.target === target) && (k.cls === '*' || k.cls === cls),
  );
}
