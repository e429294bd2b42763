/**
 * Writers of `orders list`: each takes the orders of one page as it arrives, so --jsonl, --json,
 * --csv and pipes stream with flat memory; only the terminal table waits for the end to align.
 * The CSV and table writers (list-table.ts) load the table and width libraries; JSON, JSONL and a
 * pipe never pay for them.
 */
import type { Deps } from '../../cli/deps.js';
import { presentColumns, cellText } from './columns.js';
import type { OrderWriter } from '../../orders/pages.js';
import { pickFields } from '../../core/json-fields.js';
import { escapeInvisible, safeLine } from '../../text/safe.js';
import { type WriterOptions, write } from './list-write.js';
import { createCsvWriter, createTableWriter } from './list-table.js';

export type ListFormat = 'json' | 'jsonl' | 'csv' | 'table' | 'plain';

/** Creates the writer of a format. */
export async function createOrderWriter(deps: Deps, format: ListFormat, options: WriterOptions = {}): Promise<OrderWriter> {
  // JSON on a terminal: invisible and C1 characters as \uXXXX escapes (the same values); a pipe gets it exact.
  const json = deps.io.stdoutIsTTY ? escapeInvisible : (text: string) => text;
  switch (format) {
    case 'jsonl':
      return {
        async page(orders) {
          if (orders.length === 0) return;
          // One flat string per page: join is cheaper than growing a rope order by order.
          const lines = new Array<string>(orders.length);
          for (let i = 0; i < orders.length; i++) lines[i] = JSON.stringify(pickFields(orders[i], options.fields));
          await write(deps, json(`${lines.join('\n')}\n`));
        },
        async end() {},
      };
    case 'json': {
      let count = 0;
      return {
        async page(orders) {
          let chunk = '';
          for (const o of orders) chunk += `${count++ === 0 ? '[\n' : ',\n'}${JSON.stringify(pickFields(o, options.fields))}`;
          await write(deps, json(chunk));
        },
        async end() {
          await write(deps, count === 0 ? '[]\n' : '\n]\n');
        },
      };
    }
    case 'plain': {
      let columns: string[] | undefined;
      return {
        async page(orders) {
          columns ??= options.columns ?? (orders.length > 0 ? presentColumns(orders) : undefined);
          if (!columns) return;
          const cols = columns;
          let chunk = '';
          for (const o of orders) {
            chunk += `${cols.map((c) => safeLine(cellText((o as Record<string, unknown>)[c]))).join('\t')}\n`;
          }
          await write(deps, chunk);
        },
        async end() {},
      };
    }
    case 'csv':
      return createCsvWriter(deps, options);
    case 'table':
      return createTableWriter(deps, options);
  }
}
