/**
 * Server and file text is untrusted: an order's name or an error message may hold escape sequences
 * that set a terminal's title, clear its screen or rewrite a line, or invisible characters that make
 * it read as something else (a right-to-left override turns `cod.exe` into `exe.doc`; a zero-width
 * space makes two names look alike). Everything that did not come from opcli itself passes through
 * here before it reaches a terminal or a spreadsheet (tables, TSV, CSV, `Error:` lines, prompts,
 * progress and --verbose traces). JSON output keeps the exact text (`escapeInvisible` on a terminal).
 *
 * What is escaped (docs/http.md#error-bodies):
 * - Cc: C0 controls (but tab and newline in `safeText`), DEL and the C1 block U+0080..U+009F;
 * - Cf, every format character: bidi controls (U+202A..U+202E, U+2066..U+2069, U+200E, U+200F,
 *   U+061C), zero-width and invisible ones (U+200B..U+200D, U+2060..U+2064, U+FEFF), the soft
 *   hyphen U+00AD, tags (U+E0001, U+E0020..U+E007F) and the rest of the category;
 * - U+2028 and U+2029 (line and paragraph separators).
 * One exception: a zero-width joiner between two emoji is kept, so `👩‍💻` stays one picture (it
 * hides nothing: the joined emoji are drawn).
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
 * DEL, C1, format characters and U+2028/U+2029 as `\uXXXX` escapes, C0 kept: for JSON text (what
 * JSON.stringify leaves raw; the document still parses to exactly the same values) and for opcli's
 * own styled lines (colour and progress sequences are C0). Every write to stderr, and to stdout on a
 * terminal, passes through it (src/cli/deps.ts): a path that forgot safeText still shows no bidi control.
 */
export function escapeInvisible(text: string): string {
  return text.replace(UNSAFE_JSON, jsonEscape);
}

/** Whether a string holds anything `safeText` would change. */
export function isSafeText(text: string): boolean {
  return safeText(text) === text;
}

/**
 * What cannot be part of a value a person typed on purpose: control characters (C0 but tab and
 * newline, DEL, C1), U+FFFD (what bytes that were not UTF-8 decode to) and lone surrogates.
 */
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

// A value made one word for a POSIX shell (sh, bash, zsh), so a hint such as
// `opcli giftcard history --order '#1007'` runs as pasted: `#` would start a comment, a space would
// split the word, `$` and backquotes would expand. Plain words stay as typed; anything else is put
// in single quotes, inside which a POSIX shell treats every character literally but the quote
// itself, written as '\'' (close, an escaped quote, reopen).

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
