/** What the writers of `orders list` share (list-output.ts for JSON and pipes, list-table.ts for CSV and the table). */
import { once } from 'node:events';
import type { Deps } from '../../cli/deps.js';

export interface WriterOptions {
  /** `--columns`: the columns, in order, for the table, TSV and CSV. */
  columns?: string[];
  /** `--csv-raw`: no formula guard in CSV cells. */
  csvRaw?: boolean;
  /** `--json FIELDS` / `--jsonl FIELDS`: only these fields of each record. */
  fields?: string[];
}

/** Writes to stdout in one chunk, waiting for the stream to drain so memory stays flat. */
export async function write(deps: Deps, text: string): Promise<void> {
  if (!text) return;
  const stream = deps.io.stdout;
  if (!stream.write(text)) await once(stream, 'drain');
}
