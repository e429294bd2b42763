/**
 * Server text is untrusted: an order's name or an error message may hold escape sequences that set
 * a terminal's title, clear its screen or rewrite a line. Everything that did not come from opcli
 * itself passes through here before it reaches a terminal (tables, TSV, `Error:` lines, prompts,
 * progress and --verbose traces). JSON output needs none of this: JSON escapes control characters.
 */

// C0 controls but tab and newline, DEL, and the C1 block (U+0080..U+009F, which some terminals obey).
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// The same with tab and newline: for one-line places (a table cell, a TSV field, a progress line).
const UNSAFE_LINE = /[\u0000-\u001f\u007f-\u009f]/g;

function visible(ch: string): string {
  const code = ch.charCodeAt(0);
  if (ch === '\n') return '\\n';
  if (ch === '\t') return '\\t';
  if (ch === '\r') return '\\r';
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Text that may span lines (an error message): control characters, ESC, BEL, DEL, `\r` and C1
 * become visible escapes (`\x1b`); newlines and tabs are kept.
 */
export function safeText(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value ?? '');
  return text.replace(UNSAFE, visible);
}

/** One line of text (a table cell, a TSV field): newlines become `⏎`, tabs a space, other controls escapes. */
export function safeLine(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value ?? '');
  return text
    .replace(/\r\n|\n/g, '⏎')
    .replace(/\t/g, ' ')
    .replace(UNSAFE_LINE, visible);
}

/** Whether a string holds anything `safeText` would change. */
export function isSafeText(text: string): boolean {
  UNSAFE.lastIndex = 0;
  return !UNSAFE.test(text);
}
