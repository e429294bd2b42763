import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import { decimalPrecisionProblem } from '../core/flags.js';
import { inexactNumber, MAX_JSON_DEPTH, nestsTooDeep } from '../core/json-text.js';
import type { IO } from '../core/ports.js';
import { excerpt, jsonProblem } from '../text/excerpt.js';
import type { z } from 'zod';
import { type FieldKind, fieldsFromFlags } from './flags.js';
import { validateBody } from './issues.js';

/** Reading a `--data` argument: a JSON file, `-` for standard input, or (for `opcli api`) inline JSON. */

/** What reading --data takes: standard input and the directory a relative path is read from. */
export interface DataPorts {
  io: Pick<IO, 'stdin' | 'stdinIsTTY'>;
  cwd: string;
}

interface DataText {
  text: string;
  /** What to call it in a message: the file's name, `standard input` or `--data`. */
  source: string;
}

/** Decodes a file's bytes as UTF-8, refusing bytes that are not: they would become U+FFFD in a name or an address, and be sent. */
function decodeUtf8(bytes: Uint8Array, source: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(
      `The --data file ${source} is not UTF-8 text.`,
      'Save it as UTF-8 (most editors offer it under "Save as" or "Encoding") and run the command again.',
    );
  }
}

/** Reads the text a --data value names: `-` is standard input, `@file` or `file` a file; `inline` takes any other value as the JSON itself. */
export async function readDataText(deps: DataPorts, value: string, options: { inline?: boolean } = {}): Promise<DataText> {
  if (value === '-') {
    if (deps.io.stdinIsTTY)
      throw new UsageError('--data - reads JSON from a pipe, but standard input is a terminal.', 'Pipe the JSON in, e.g. `cat order.json | opcli … --data -`.');
    return { text: await readStdinText(deps), source: 'standard input' };
  }
  if (options.inline && !value.startsWith('@')) return { text: value, source: '--data' };
  const file = value.startsWith('@') ? value.slice(1) : value;
  let bytes: Buffer;
  try {
    bytes = await readFile(resolve(deps.cwd, file));
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new UsageError(
      `Cannot read --data file ${file}${code === 'ENOENT' ? ': no such file' : `: ${(error as Error).message}`}.`,
      'Pass a JSON file path, or - to read standard input.',
    );
  }
  return { text: decodeUtf8(bytes, file), source: file };
}

/**
 * Parses the JSON text of a --data value (a leading byte order mark dropped). Refused before
 * anything is sent: text that is not JSON, nesting deeper than MAX_JSON_DEPTH (every walk of the
 * body after parsing recurses), and a number a JavaScript number would change (it is sent as parsed).
 */
export function parseJsonText(text: string, source: string, hint: string): unknown {
  const bom = text.startsWith('\uFEFF');
  const json = bom ? text.slice(1) : text;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new UsageError(`${source} is not valid JSON: ${jsonProblem(error, json, { byte: bom ? 3 : 0 })}`, hint);
  }
  if (nestsTooDeep(value))
    throw new UsageError(
      `${source} nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep, the most opcli reads; nothing was sent.`,
      'No request of this API nests that deep: check that the right file was given.',
    );
  const inexact = inexactNumber(json);
  if (inexact) {
    throw new UsageError(
      `${source} holds the number ${excerpt(inexact.literal)}, which ${decimalPrecisionProblem(inexact.literal)}; nothing was sent.`,
      "Write the number to the precision you mean (for money, the currency's minor units, such as 19.99); a value that must keep every digit goes as a string.",
    );
  }
  return value;
}

/** Parses the text of a --data document: a JSON object. `example` shows one in the hint. */
function parseDataDocument(text: string, source: string, example = '{"currency":"USD"}'): Record<string, unknown> {
  const value = parseJsonText(text, source, `Pass a JSON object such as ${example}.`);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError(
      `${source} must hold a JSON object, not ${Array.isArray(value) ? 'an array' : excerpt(JSON.stringify(value))}.`,
      `Pass a JSON object such as ${example}.`,
    );
  }
  return value as Record<string, unknown>;
}

/** The JSON object a --data value names. */
export async function readDataObject(deps: DataPorts, value: string, example?: string): Promise<Record<string, unknown>> {
  const { text, source } = await readDataText(deps, value);
  return parseDataDocument(text, source, example);
}

/** Reads all of standard input as text; refuses a terminal, where nothing would arrive. */
export async function readStdinText(deps: { io: Pick<IO, 'stdin' | 'stdinIsTTY'> }): Promise<string> {
  if (deps.io.stdinIsTTY)
    throw new UsageError('--stdin reads from a pipe, but standard input is a terminal.', 'Pipe the value in, e.g. `printf %s "$VALUE" | opcli …`.');
  const chunks: Buffer[] = [];
  for await (const chunk of deps.io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

// Request bodies from `--data` plus field flags, validated before anything is sent (--dry-run prints in src/commands/body-verb.ts).

/** Lays the flags over --data's object and validates the result with `schema`. */
export function buildBody<S extends z.ZodObject>(
  schema: S,
  kinds: FieldKind[],
  data: Record<string, unknown>,
  flags: Record<string, unknown>,
  what: string,
  fixed: Record<string, unknown> = {},
): z.infer<S> {
  const { fields, issues } = fieldsFromFlags(flags, kinds);
  return validateBody(schema, { ...data, ...fields, ...fixed }, what, issues);
}
