/** The `orders list` writers that need the table and CSV libraries: --csv and the terminal table, and the --columns check. */
import type { Deps } from '../../cli/deps.js';
import { amountText, DEFAULT_ORDER_COLUMNS, MONEY_COLUMNS, ORDER_COLUMNS, presentColumns, WHOLE_COLUMNS } from './columns.js';
import type { OrderWriter } from '../../orders/pages.js';
import { type Column, chooseColumns, csvCell, parseColumnList, printTable } from '../../core/output.js';
import type { OrderRecord } from '../../schemas.js';
import { safeText } from '../../text/safe.js';
import { type WriterOptions, write } from './list-write.js';

/** Reads `--columns` (comma-separated) and checks the names against the order columns (a usage error lists the valid ones). */
export function checkOrderColumns(value: string): string[] {
  return chooseColumns(
    ORDER_COLUMNS.map((c) => ({ header: c, name: c })),
    parseColumnList(value),
  ).map((c) => c.name);
}

/** CSV: a header, then one row per order, written page by page. */
export async function createCsvWriter(deps: Deps, options: WriterOptions): Promise<OrderWriter> {
  const columns = options.columns ?? ORDER_COLUMNS;
  const raw = !!options.csvRaw;
  // CSV is opened in spreadsheets, which draw bidi overrides and hide zero-width characters as a
  // terminal does: cells are made safe wherever they go. --csv-raw writes the exact text, except
  // to a terminal.
  const shown = raw && !deps.io.stdoutIsTTY ? (v: string) => v : safeText;
  // csv-stringify is loaded for CSV alone: the verb's module is on every one-off's start-up path
  // (a --json one-off loaded its 11 KB for nothing; bench/startup.mjs).
  const { stringify } = await import('csv-stringify/sync');
  let header = true;
  const flush = async (orders: OrderRecord[]) => {
    const text = stringify(orders as Record<string, unknown>[], {
      header,
      columns,
      cast: {
        boolean: (v) => String(v),
        object: (v) => csvCell(shown(JSON.stringify(v)), raw),
        string: (v) => csvCell(shown(v), raw),
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

/** The terminal table: gathers the orders, then prints one table that fits the width. */
export function createTableWriter(deps: Deps, options: WriterOptions): OrderWriter {
  const rows: OrderRecord[] = [];
  return {
    async page(orders) {
      for (const o of orders) rows.push(o);
    },
    async end() {
      if (rows.length === 0) return;
      // A column asked for by --columns is shown even when no order on the page has it (empty cells),
      // rather than vanishing without a word.
      const present = presentColumns(rows);
      const names = ORDER_COLUMNS.filter((c) => present.includes(c) || options.columns?.includes(c));
      const columns: Column<OrderRecord>[] = names.map((c) => {
        const money = MONEY_COLUMNS.includes(c);
        return {
          header: c,
          name: c,
          default: DEFAULT_ORDER_COLUMNS.includes(c),
          right: money,
          whole: WHOLE_COLUMNS.includes(c),
          value: money ? (row) => amountText((row as Record<string, unknown>)[c]) : (row) => (row as Record<string, unknown>)[c],
        };
      });
      const chosen = options.columns?.filter((c) => columns.some((k) => k.name === c));
      await printTable(deps, columns, rows, 'table', chosen?.length ? { columns: chosen } : {});
    },
  };
}
