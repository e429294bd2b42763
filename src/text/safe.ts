/**
 * Server and file text is untrusted: escape sequences can drive a terminal, and invisible characters
 * make text read as something else (a right-to-left override turns `cod.exe` into `exe.doc`). All of
 * it passes here before a terminal or a spreadsheet; escaped (docs/http.md#error-bodies): Cc, Cf,
 * U+2028 and U+2029, but a zero-width joiner between two emoji (`👩‍💻` stays one picture).
 */

// Cc but tab and newline, Cf, line and paragraph separators.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]/gu;
// The same with tab and newline: for one-line places (a table cell, a TSV field, a progress line).
const UNSAFE_LINE = /[\u0000-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]/gu;
// What JSON.stringify leaves raw that a terminal must not get: DEL, C1, Cf and the separators.
const UNSAFE_JSON = /[\u007f-\u009f\p{Cf}\u2028\u2029]/gu;

const ZWJ = '\u200d';
const EMOJI_BEFORE = /\p{Extended_Pictographic}[\u{fe0f}\u{1f3fb}-\u{1f3ff}]?$/u;
const EMOJI_AFTER = /^\p{Extended_Pictographic}/u;

/** Whether the joiner at `offset` sits between two emoji (an emoji ZWJ sequence). */
function joinsEmoji(text: string, offset: number): boolean {
  return EMOJI_BEFORE.test(text.slice(Math.max(0, offset - 4), offset)) && EMOJI_AFTER.test(text.slice(offset + 1, offset + 3));
}

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, '0');
}

/** The visible form of one unsafe character: `\n`, `\t`, `\r`, `\x1b`, `\u202e`, `\u{e0041}`. */
function visible(ch: string, offset: number, text: string): string {
  if (ch === ZWJ && joinsEmoji(text, offset)) return ch;
  if (ch === '\n') return '\\n';
  if (ch === '\t') return '\\t';
  if (ch === '\r') return '\\r';
  const code = ch.codePointAt(0) as number;
  if (code <= 0xff) return `\\x${hex(code, 2)}`;
  return code <= 0xffff ? `\\u${hex(code, 4)}` : `\\u{${hex(code, 5)}}`;
}

/** A JSON escape for one unsafe character: the JSON document stays valid and means the same text. */
function jsonEscape(ch: string, offset: number, text: string): string {
  if (ch === ZWJ && joinsEmoji(text, offset)) return ch;
  let out = '';
  for (let i = 0; i < ch.length; i++) out += `\\u${hex(ch.charCodeAt(i), 4)}`;
  return out;
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : String(value ?? '');
}

/**
 * Text that may span lines (an error message): control characters, ESC, BEL, DEL, `\r`, C1 and
 * invisible format characters become visible escapes (`\x1b`, `\u202e`); newlines and tabs are kept.
 */
export function safeText(value: unknown): string {
  return asText(value).replace(UNSAFE, visible);
}

/** One line of text (a table cell, a TSV field): newlines become `⏎`, tabs a space, other unsafe characters escapes. */
export function safeLine(value: unknown): string {
  return asText(value)
    .replace(/\r\n|\n/g, '⏎')
    .replace(/\t/g, ' ')
    .replace(UNSAFE_LINE, visible);
}

/**
 * DEL, C1, format characters and U+2028/U+2029 as `\uXXXX` escapes, C0 kept (JSON still parses to the
 * same values; opcli's colour and progress sequences are C0): every write to stderr and to a terminal.
 */
export function escapeInvisible(text: string): string {
  return text.replace(UNSAFE_JSON, jsonEscape);
}

/** Whether a string holds anything `safeText` would change. */
export function isSafeText(text: string): boolean {
  return safeText(text) === text;
}

/** What cannot be part of a value typed on purpose: control characters, U+FFFD (bytes that were not UTF-8), lone surrogates. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a text value given on the command line cannot be what was meant, or undefined when it can be. */
export function textProblem(value: string): string | undefined {
  if (value === '') return 'is empty (leave the flag out to send no value)';
  if (value.trim() === '') return 'is blank';
  if (CONTROL.test(value)) return 'holds a control character';
  if (value.includes('\uFFFD')) return 'holds U+FFFD, the mark of bytes that were not UTF-8 (check the encoding it was typed or pasted in)';
  if (LONE_SURROGATE.test(value)) return 'is not valid Unicode';
  return undefined;
}

// A value made one POSIX shell word, so a hint such as `opcli giftcard history --order '#1007'` runs as
// pasted: plain words as typed, anything else in single quotes (a quote itself as '\'').

/** A word of characters that never need quoting (no `=` first: zsh expands `=word` to a path). */
const PLAIN = /^[A-Za-z0-9_@%+:,./-][A-Za-z0-9_@%+=:,./-]*$/;

/** `value` as one shell word that arrives intact when pasted into sh, bash or zsh. */
export function shellQuote(value: string): string {
  if (PLAIN.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Escapes text for HTML element content and attribute values (the login's callback page, the sandbox's consent page). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
