import type { IO } from './ports.js';
import { UsageError } from './errors.js';

/** Reads all of standard input as text; refuses a terminal, where nothing would arrive. */
export async function readStdinText(deps: { io: Pick<IO, 'stdin' | 'stdinIsTTY'> }): Promise<string> {
  if (deps.io.stdinIsTTY)
    throw new UsageError('--stdin reads from a pipe, but standard input is a terminal.', 'Pipe the value in, e.g. `printf %s "$VALUE" | opcli …`.');
  const chunks: Buffer[] = [];
  for await (const chunk of deps.io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}
