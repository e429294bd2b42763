/** Input quoted in an error, cut to a readable length: a message says where the problem is, it does not echo a 100 MB input. */
import { count } from './count.js';

export const MAX_QUOTED = 200;

/** `text` cut to `max` characters (never inside a surrogate pair), ending in `…` when cut. */
export function excerpt(text: string, max = MAX_QUOTED): string {
  if (text.length <= max) return text;
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/** `"text"`, cut as `excerpt` does; a cut text says how long it was: `"aaaa…" (104,857,600 characters)`. */
export function quoteInput(value: unknown, max = MAX_QUOTED): string {
  const text = typeof value === 'string' ? value : String(value);
  if (text.length <= max) return `"${text}"`;
  return `"${excerpt(text, max)}" (${count(text.length)} characters)`;
}

/** Where a 0-based index of `text` is: 1-based line and column (in characters), and the 0-based byte offset in UTF-8. */
export function positionIn(text: string, index: number): { line: number; column: number; byte: number } {
  const before = text.slice(0, Math.max(0, Math.min(index, text.length)));
  const lineStart = before.lastIndexOf('\n') + 1;
  let line = 1;
  for (let i = before.indexOf('\n'); i !== -1; i = before.indexOf('\n', i + 1)) line++;
  return { line, column: before.length - lineStart + 1, byte: Buffer.byteLength(before) };
}

/** A JSON.parse error cut short, V8's "at position N" as `at line 1, column 5006 (byte 5005)`; `offset` places `text` in its file. */
export function jsonProblem(error: unknown, text: string, offset: { line?: number; column?: number; byte?: number } = {}): string {
  const message = excerpt(error instanceof Error ? error.message : String(error));
  const m = /at position (\d+)/.exec(message);
  if (!m) return message;
  const at = positionIn(text, Number(m[1]));
  const column = at.line === 1 ? at.column + (offset.column ?? 0) : at.column;
  return `${message.replace(/ at position \d+(?: \(line \d+ column \d+\))?/, '')}, at line ${count((offset.line ?? 0) + at.line)}, column ${count(column)} (byte ${count((offset.byte ?? 0) + at.byte)})`;
}
