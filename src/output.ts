import type { Deps } from './deps.js';

/** How a command prints its data: --json, --jsonl, or the default for the stream. */
export type OutputMode = 'json' | 'jsonl' | 'table' | 'plain';

/** Picks the output mode from the flags and whether stdout is a terminal. */
export function outputMode(deps: Deps, flags: { json?: boolean; jsonl?: boolean }): OutputMode {
  if (flags.json) return 'json';
  if (flags.jsonl) return 'jsonl';
  return deps.io.stdoutIsTTY ? 'table' : 'plain';
}

/** Prints one JSON document on stdout. */
export function printJson(deps: Deps, value: unknown): void {
  deps.out(`${JSON.stringify(value, null, 2)}\n`);
}

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * Prints rows: an aligned cli-table3 table on a terminal, tab-separated lines (tabs and newlines
 * in values replaced by spaces) on a pipe.
 */
export async function printTable<T>(deps: Deps, columns: Column<T>[], rows: T[], mode: OutputMode): Promise<void> {
  if (mode === 'table') {
    const [{ default: Table }, chalk] = await Promise.all([import('cli-table3'), colors(deps)]);
    const table = new Table({
      head: columns.map((c) => chalk.bold(c.header)),
      style: { head: [], border: [] },
      chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    });
    for (const row of rows) table.push(columns.map((c) => cell(c.value(row))));
    deps.out(`${table.toString()}\n`);
    return;
  }
  for (const row of rows) deps.out(`${columns.map((c) => cell(c.value(row)).replace(/[\t\r\n]+/g, ' ')).join('\t')}\n`);
}

/** Prints label/value pairs: aligned on a terminal, tab-separated on a pipe. */
export async function printRecord(deps: Deps, pairs: [string, unknown][], mode: OutputMode): Promise<void> {
  if (mode === 'table') {
    const chalk = await colors(deps);
    const width = Math.max(...pairs.map(([k]) => k.length));
    for (const [k, v] of pairs) deps.out(`${chalk.bold(k.padEnd(width))}  ${cell(v)}\n`);
    return;
  }
  for (const [k, v] of pairs) deps.out(`${k}\t${cell(v).replace(/[\t\r\n]+/g, ' ')}\n`);
}

/** A chalk instance for stdout: colour only on a terminal without NO_COLOR. */
export async function colors(deps: Deps, stream: 'stdout' | 'stderr' = 'stdout') {
  const { Chalk } = await import('chalk');
  const on = stream === 'stdout' ? deps.io.colorStdout : deps.io.colorStderr;
  return new Chalk({ level: on ? 1 : 0 });
}
