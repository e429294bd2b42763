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
