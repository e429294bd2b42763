import { nestsTooDeep } from '../core/json-text.js';

/**
 * An answer's body as the HTTP client reads it: JSON when the content type says so and it parses,
 * else the text. JSON nested deeper than opcli reads stays text: every walk of a parsed answer
 * (printing, redaction, error reading) recurses, and a hostile server must not overflow the stack.
 */
export function readBody(text: string, headers: Record<string, string>): unknown {
  if (!text || !/json/i.test(headers['content-type'] ?? '')) return text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  return nestsTooDeep(value) ? text : value;
}
