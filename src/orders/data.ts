/** Reading a `--data` argument: a JSON file, `-` for standard input, or (for `opcli api`) inline JSON. */
import type { Deps } from '../deps.js';
import { UsageError } from '../errors.js';
import { readStdinText } from '../stdin.js';
import { parseDataDocument } from './fields.js';

/** Reads the text a --data value names: `-` is standard input, `@file` or `file` a file. */
export async function readDataText(deps: Deps, value: string, options: { inline?: boolean } = {}): Promise<{ text: string; source: string }> {
  if (value === '-') {
    if (deps.io.stdinIsTTY) throw new UsageError('--data - reads JSON from a pipe, but standard input is a terminal.', 'Pipe the JSON in, e.g. `cat order.json | opcli … --data -`.');
    return { text: await readStdinText(deps), source: 'standard input' };
  }
  if (options.inline && !value.startsWith('@')) return { text: value, source: '--data' };
  const file = value.startsWith('@') ? value.slice(1) : value;
  const { readFile } = await import('node:fs/promises');
  const { resolve } = await import('node:path');
  let bytes: Buffer;
  try {
    bytes = await readFile(resolve(deps.cwd, file));
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new UsageError(`Cannot read --data file ${file}${code === 'ENOENT' ? ': no such file' : `: ${(error as Error).message}`}.`, 'Pass a JSON file path, or - to read standard input.');
  }
  try {
    // Bytes that are not UTF-8 would otherwise become U+FFFD in a name or an address, and be sent.
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), source: file };
  } catch {
    throw new UsageError(`The --data file ${file} is not UTF-8 text.`, 'Save it as UTF-8 (most editors offer it under "Save as" or "Encoding") and run the command again.');
  }
}

/** The JSON object a --data value names. */
export async function readDataObject(deps: Deps, value: string): Promise<Record<string, unknown>> {
  const { text, source } = await readDataText(deps, value);
  return parseDataDocument(text, source);
}
