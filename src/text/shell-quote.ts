/**
 * A value made one word for a POSIX shell (sh, bash, zsh), so a hint such as
 * `opcli giftcard history --order '#1007'` runs as pasted: `#` would start a comment, a space would
 * split the word, `$` and backquotes would expand. Plain words stay as typed; anything else is put
 * in single quotes, inside which a POSIX shell treats every character literally but the quote
 * itself, written as '\'' (close, an escaped quote, reopen).
 */

/** A word of characters that never need quoting (no `=` first: zsh expands `=word` to a path). */
const PLAIN = /^[A-Za-z0-9_@%+:,./-][A-Za-z0-9_@%+=:,./-]*$/;

/** `value` as one shell word that arrives intact when pasted into sh, bash or zsh. */
export function shellQuote(value: string): string {
  if (PLAIN.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
