/**
 * Two limits JSON.parse does not keep: nesting depth (every walk after it recurses and would overflow
 * the stack) and, for what a user typed, whether each number survives the trip through a double.
 */
import { inexactDecimal } from './flags.js';

/** The deepest nesting opcli reads, as Ruby's JSON parser's default `max_nesting`. */
export const MAX_JSON_DEPTH = 100;

/** Whether a parsed JSON value nests deeper than MAX_JSON_DEPTH (a walk with its own stack, never recursion). */
export function nestsTooDeep(value: unknown): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop() ?? 0;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child === null || typeof child !== 'object') continue;
      values.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * The first number literal of a JSON text that a JavaScript number cannot hold exactly
 * (19.999999999999999999 becomes 20), with what it would be sent as; undefined when every number
 * survives. Strings are skipped (with indexOf), so digits inside them are never read as numbers.
 */
export function inexactNumber(text: string): { literal: string; sent: number } | undefined {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = stringEnd(text, i);
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = i;
      const literal = NUMBER.exec(text)?.[0];
      if (literal === undefined) continue;
      const sent = inexactDecimal(literal);
      if (sent !== undefined) return { literal, sent };
      i += literal.length - 1;
    }
  }
  return undefined;
}

/** The index of the quote that closes the string opened at `open` (the text's length when none does). */
function stringEnd(text: string, open: number): number {
  for (let q = text.indexOf('"', open + 1); q !== -1; q = text.indexOf('"', q + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(q - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return q;
  }
  return text.length;
}
