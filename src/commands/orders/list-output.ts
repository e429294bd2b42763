/**
 * Writers of `orders list`: each takes the orders of one page as it arrives, so --jsonl, --json,
 * --csv and pipes stream with flat memory; only the terminal table waits for the end to align.
 */
import { once } from 'node:events';
import type { Deps } from '../../deps.js';
import type { OrderWriter } from '../../orders/list.js';
import { type Column, chooseColumns, csvCell, printTable } from '../../output.js';
import { ORDER_FIELDS, type OrderRecord } from '../../schemas.js';
import { safeLine, safeText } from '../../text/safe.js';

export type ListFormat = 'json' | 'jsonl' | 'csv' | 'table' | 'plain';

/** Writes to stdout in one chunk, waiting for the stream to drain so memory stays flat. */
async function write(deps: Deps, text: string): Promise<void> {
  if (!text) return;
  const stream = deps.io.stdout;
  if (!stream.write(text)) await once(stream, 'drain');
}

/** Every column of the list: sourceOrderId, then the spec's Order fields in its order. */
export const ORDER_COLUMNS = ['sourceOrderId', ...ORDER_FIELDS] as string[];

/**
 * CHOICE (docs/spec-choices.md#default-columns): the columns a terminal table shows by default; with
 * their headers and typical values they fit 80 columns. `--columns` picks others, `--json` has the full record.
 */
export const DEFAULT_ORDER_COLUMNS = ['sourceOrderId', 'sourceOrderNumber', 'currency', 'total', 'customerName'];

/** The columns a record set carries: sourceOrderId, then the spec's Order fields in its order. */
export function presentColumns(orders: OrderRecord[]): string[] {
  return ORDER_COLUMNS.filter((k) => orders.some((o) => (o as Record<string, unknown>)[k] !== undefined));
}

/** Checks `--columns` names against the order columns (a usage error lists the valid ones). */
export function checkOrderColumns(names: string[]): string[] {
  return chooseColumns(
    ORDER_COLUMNS.map((c) => ({ header: c, name: c })),
    names,
  ).map((c) => c.name);
}

export interface WriterOptions {
  /** `--columns`: the columns, in order, for the table, TSV and CSV. */
  columns?: string[];
  /** `--csv-raw`: no formula guard in CSV cells. */
  csvRaw?: boolean;
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Creates the writer of a format. */
export async function createOrderWriter(deps: Deps, format: ListFormat, options: WriterOptions = {}): Promise<OrderWriter> {
  switch (format) {
    case 'jsonl':
      return {
        async page(orders) {
          if (orders.length === 0) return;
          // One flat string per page: join is cheaper than growing a rope order by order.
          const lines = new Array<string>(orders.length);
          for (let i = 0; i < orders.length; i++) lines[i] = JSON.stringify(orders[i]);
          await write(deps, `${lines.join('\n')}\n`);
        },
        async end() {},
      };
    case 'json': {
      let count = 0;
      return {
        async page(orders) {
          let chunk = '';
          for (const o of orders) chunk += `${count++ === 0 ? '[\n' : ',\n'}${JSON.stringify(o)}`;
          await write(deps, chunk);
        },
        async end() {
          await write(deps, count === 0 ? '[]\n' : '\n]\n');
        },
      };
    }
    case 'csv': {
      const { stringify } = await import('csv-stringify/sync');
      const columns = options.columns ?? ORDER_COLUMNS;
      const raw = !!options.csvRaw;
      // On a terminal, server text cannot carry escape sequences through CSV either; a file gets the exact text.
      const shown = deps.io.stdoutIsTTY ? safeText : (v: string) => v;
      let header = true;
      const flush = async (orders: OrderRecord[]) => {
        const text = stringify(orders as Record<string, unknown>[], {
          header,
          columns,
          cast: {
            boolean: (v) => String(v),
            object: (v) => shown(csvCell(JSON.stringify(v), raw)),
            string: (v) => shown(csvCell(v, raw)),
            number: (v) => String(v),
          },
        });
        header = false;
        await write(deps, text);
      };
      return {
        page: flush,
        async end() {
          if (header) await flush([]);
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
            chunk += `${cols.map((c) => safeLine(cell((o as Record<string, unknown>)[c]))).join('\t')}\n`;
          }
          await write(deps, chunk);
        },
        async end() {},
      };
    }
    case 'table': {
      const rows: OrderRecord[] = [];
      return {
        async page(orders) {
          for (const o of orders) rows.push(o);
        },
        async end() {
          if (rows.length === 0) return;
          const columns: Column<OrderRecord>[] = presentColumns(rows).map((c) => ({
            header: c,
            name: c,
            default: DEFAULT_ORDER_COLUMNS.includes(c),
            value: (row) => (row as Record<string, unknown>)[c],
          }));
          const chosen = options.columns?.filter((c) => columns.some((k) => k.name === c));
          await printTable(deps, columns, rows, 'table', chosen?.length ? { columns: chosen } : {});
        },
      };
    }
  }
}
