/**
 * The JSONL and JSON readers of a batch: one claim per line (streamed, each line within the limit
 * of one claim) or a JSON array read whole (small batches), with text values coerced as CSV cells are.
 */
import type { Readable } from 'node:stream';
import { UsageError } from '../core/errors.js';
import { inexactNumber, MAX_JSON_DEPTH, nestsTooDeep } from '../core/json-text.js';
import type { FieldIssue } from '../schemas.js';
import { count } from '../text/count.js';
import { jsonProblem } from '../text/excerpt.js';
import { decodeText } from './input-text.js';
import { CLAIM_FIELDS, coerceText, FIELD_BY_KEY, getPath, setPath, spreadsheetDamage } from './fields.js';
import { applyDefaults, CSV_LIMITS, type OpenOptions, type SourceRow } from './row-source.js';

/**
 * In JSON input, numbers and booleans written as strings are coerced like CSV cells, and a text
 * value a spreadsheet damaged is refused as it is in a CSV.
 */
export function coerceObject(value: Record<string, unknown>): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const field of CLAIM_FIELDS) {
    if (field.type === 'string') {
      const v = getPath(value, field.path);
      if (field.format === 'datetime' && typeof v === 'string') {
        // A date alone, or a day-month form, as a CSV cell's.
        const { value: date, issue } = coerceText(field, v);
        if (issue) issues.push(issue);
        else if (date !== v.trim() && date !== undefined) setPath(value, field.path, date);
        continue;
      }
      const damage = typeof v === 'string' ? spreadsheetDamage(field, v.trim()) : undefined;
      if (damage) issues.push({ path: field.key, message: damage });
      continue;
    }
    if (field.type !== 'number' && field.type !== 'boolean') continue;
    const v = getPath(value, field.path);
    if (typeof v !== 'string') continue;
    const { value: coerced, issue } = coerceText(field, v);
    if (issue) issues.push(issue);
    else if (coerced !== undefined) setPath(value, field.path, coerced);
  }
  return issues;
}

function removePath(value: Record<string, unknown>, path: string[]): void {
  const parent = getPath(value, path.slice(0, -1));
  if (parent && typeof parent === 'object') delete (parent as Record<string, unknown>)[path[path.length - 1] as string];
}

function objectRow(seq: number, line: number, parsed: unknown, options: OpenOptions): SourceRow {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { seq, line, value: parsed, issues: [{ path: '', message: 'expected a JSON object (one claim)' }] };
  }
  const value = parsed as Record<string, unknown>;
  let userKey: string | undefined;
  if (options.keyColumn !== undefined) {
    const path = options.keyColumn.split('.');
    const raw = getPath(value, path);
    if (typeof raw === 'string' || typeof raw === 'number') userKey = String(raw).trim() || undefined;
    // A key the API does not know is the user's own: it is not sent.
    if (!FIELD_BY_KEY.has(options.keyColumn)) removePath(value, path);
  }
  const issues = coerceObject(value);
  applyDefaults(value, options);
  return { seq, line, value, issues, userKey };
}

/**
 * The lines of a JSONL stream with where each begins. A line over `CSV_LIMITS.recordChars` is
 * refused as soon as it gets there (a claim is a few hundred characters), without reading on.
 */
async function* jsonLines(input: Readable, label: string): AsyncGenerator<{ text: string; line: number; byte: number }> {
  const max = CSV_LIMITS.recordChars;
  const { chunks } = await decodeText(input, label);
  let buffer = '';
  let line = 1;
  let byte = 0;
  try {
    for await (const chunk of chunks) {
      // Whole characters: each chunk reads alone.
      buffer += chunk.toString('utf8');
      let from = 0;
      for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n', from)) {
        const text = buffer.slice(from, nl);
        if (text.length > max + 1) break;
        yield { text: text.endsWith('\r') ? text.slice(0, -1) : text, line, byte };
        byte += Buffer.byteLength(text) + 1;
        line++;
        from = nl + 1;
      }
      buffer = buffer.slice(from);
      const open = buffer.indexOf('\n');
      if ((open === -1 ? buffer.length : open) > max + 1) {
        throw new UsageError(
          `${label} line ${count(line)}: the line is longer than ${count(max)} characters, the limit for one claim (reached at line ${count(line)}, column ${count(max + 1)}, byte ${count(byte + Buffer.byteLength(buffer.slice(0, max)))}).`,
          'Each line holds one claim as a JSON object: check that this is the claims file and that its lines end with newlines. Lines before it were read; fix it and run the same command again: rows already filed are skipped.',
        );
      }
    }
    if (buffer !== '') yield { text: buffer.endsWith('\r') ? buffer.slice(0, -1) : buffer, line, byte };
  } finally {
    input.destroy();
  }
}

export async function* jsonlRows(input: Readable, options: OpenOptions): AsyncGenerator<SourceRow> {
  let seq = 0;
  for await (const { text, line, byte } of jsonLines(input, options.label)) {
    const trimmed = text.trim();
    if (trimmed === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (error) {
      const lead = text.length - text.trimStart().length;
      const where = { line: line - 1, column: lead, byte: byte + Buffer.byteLength(text.slice(0, lead)) };
      yield { seq: seq++, line, value: undefined, issues: [{ path: '', message: `not valid JSON: ${jsonProblem(error, trimmed, where)}` }] };
      continue;
    }
    const refused = numberIssue(trimmed) ?? depthIssue(parsed);
    yield refused ? { seq: seq++, line, value: undefined, issues: [refused] } : objectRow(seq++, line, parsed, options);
  }
}

/** A number JSON.parse rounded (19.999999999999999999 read as 20): refused, never sent rounded. */
function numberIssue(text: string): FieldIssue | undefined {
  const inexact = inexactNumber(text);
  if (inexact === undefined) return undefined;
  return {
    path: '',
    message: `the number ${inexact.literal} has more digits than a number holds exactly (at most 15 significant digits), and would be sent as ${inexact.sent}`,
  };
}

/** A claim nested deeper than any claim is: every walk after the parse would overflow the stack. */
function depthIssue(parsed: unknown): FieldIssue | undefined {
  if (!nestsTooDeep(parsed)) return undefined;
  return { path: '', message: `nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep, the most opcli reads` };
}

/** A .json file: an array of claims (or one claim). Read whole: JSON arrays are for small batches. */
export async function jsonRows(input: Readable, options: OpenOptions): Promise<AsyncGenerator<SourceRow>> {
  const parts: string[] = [];
  for await (const chunk of (await decodeText(input, options.label)).chunks) parts.push(chunk.toString('utf8'));
  const text = parts.join('').replace(/^\ufeff/, '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${options.label} is not valid JSON: ${jsonProblem(error, text)}`,
      'Use a JSON array of claims, or JSONL (one claim per line) for large batches.',
    );
  }
  const refused = numberIssue(text);
  if (refused) throw new UsageError(`${options.label}: ${refused.message}.`, 'Write the number as it should be sent; nothing was sent.');
  const items = Array.isArray(parsed) ? parsed : [parsed];
  async function* rows(): AsyncGenerator<SourceRow> {
    for (const [i, item] of items.entries()) {
      const deep = depthIssue(item);
      yield deep ? { seq: i, line: i + 1, value: undefined, issues: [deep] } : objectRow(i, i + 1, item, options);
    }
  }
  return rows();
}
