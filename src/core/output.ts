import type { Printer } from './ports.js';
import { UsageError } from './errors.js';
import { safeLine } from '../text/safe.js';

/** How a command prints its data: --json, --jsonl, or the default for the stream. */
export type OutputMode = 'json' | 'jsonl' | 'table' | 'plain';

/** Picks the output mode from the flags and whether stdout is a terminal. */
export function outputMode(deps: Printer, flags: { json?: boolean; jsonl?: boolean }): OutputMode {
  if (flags.json) return 'json';
  if (flags.jsonl) return 'jsonl';
  return deps.io.stdoutIsTTY ? 'table' : 'plain';
}

/** Prints one JSON document on stdout. */
export function printJson(deps: Printer, value: unknown): void {
  deps.out(`${JSON.stringify(value, null, 2)}\n`);
}

// Output that streams in chunks and never builds the whole text (a string of gigabytes cannot exist).
const CHUNK = 64 * 1024;

/** Text for stdout gathered into chunks of CHUNK characters. */
export class OutBuffer {
  private text = '';
  /** Something was written. */
  wrote = false;

  constructor(private readonly deps: Pick<Printer, 'out'>) {}

  write(text: string): void {
    this.text += text;
    this.wrote = true;
    if (this.text.length >= CHUNK) this.flush();
  }

  private flush(): void {
    if (this.text) this.deps.out(this.text);
    this.text = '';
  }

  /** Writes what is gathered, with `last` after it when anything was written. */
  end(last = ''): void {
    if (this.wrote) this.text += last;
    this.flush();
  }
}

/** `{ ...head, [key]: [items] }` as printJson prints it, each item written as it is given. */
export class JsonArrayWriter {
  private readonly out: OutBuffer;
  private count = 0;

  constructor(deps: Pick<Printer, 'out'>, head: Record<string, unknown>, key: string) {
    this.out = new OutBuffer(deps);
    let text = '{';
    for (const [k, v] of Object.entries(head)) if (v !== undefined) text += `\n  ${JSON.stringify(k)}: ${indent(JSON.stringify(v, null, 2), '  ')},`;
    this.out.write(`${text}\n  ${JSON.stringify(key)}: [`);
  }

  item(value: unknown): void {
    this.out.write(`${this.count++ === 0 ? '' : ','}\n    ${indent(JSON.stringify(value, null, 2), '    ')}`);
  }

  /** Ends the array, then `after`'s members (printJson's text for `{ ...head, [key]: items, ...after }`). */
  end(after: Record<string, unknown> = {}): void {
    let text = this.count === 0 ? ']' : '\n  ]';
    for (const [k, v] of Object.entries(after)) if (v !== undefined) text += `,\n  ${JSON.stringify(k)}: ${indent(JSON.stringify(v, null, 2), '  ')}`;
    this.out.write(`${text}\n}\n`);
    this.out.end();
  }
}

const indent = (text: string, by: string): string => text.replaceAll('\n', `\n${by}`);

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
  /** The name `--columns` knows it by (default: the header in lower case). */
  name?: string;
  /** False: left out of the terminal table unless `--columns` names it (pipes still get it). */
  default?: boolean;
  /** Right-aligned on a terminal (amounts, counts). */
  right?: boolean;
  /** Never cut on a terminal (money, ids): other columns shrink first, or are left out and named. */
  whole?: boolean;
  /** Wrapped onto more lines on a terminal instead of cut with … (advice a person must read whole). */
  wrap?: boolean;
}

export interface TableOptions {
  /** The columns to print, by name, in this order (`--columns a,b,c`); checked against the columns' names. */
  columns?: string[];
}

/** The width of the terminal a stream writes to: the stream's `columns`, else COLUMNS when it is 20 or more, else 80. */
export function terminalWidth(deps: Pick<Printer, 'io' | 'env'>, stream: 'stdout' | 'stderr' = 'stdout'): number {
  const columns = (deps.io[stream] as { columns?: number }).columns;
  if (typeof columns === 'number' && columns > 0) return columns;
  const env = Number(deps.env.COLUMNS);
  return Number.isInteger(env) && env >= 20 ? env : 80;
}

/** A value's text in a cell: empty when absent, JSON for an object. */
export function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Splits a `--columns` value into names; throws a usage error naming the valid ones on a typo. */
export function chooseColumns<C extends { header: string; name?: string }>(columns: C[], names: string[], flag = '--columns'): C[] {
  const byName = new Map(columns.map((c) => [columnName(c), c]));
  const chosen: C[] = [];
  for (const raw of names) {
    const name = raw.trim();
    const column = byName.get(name) ?? byName.get(name.toLowerCase()) ?? columns.find((c) => columnName(c).toLowerCase() === name.toLowerCase());
    if (!column) {
      throw new UsageError(`${flag}: unknown column "${safeLine(name)}".`, `Valid columns: ${columns.map(columnName).join(', ')}.`);
    }
    if (!chosen.includes(column)) chosen.push(column);
  }
  if (chosen.length === 0) throw new UsageError(`${flag} needs at least one column name.`, `Valid columns: ${columns.map(columnName).join(', ')}.`);
  return chosen;
}

function columnName(c: { header: string; name?: string }): string {
  return c.name ?? c.header.toLowerCase();
}

/** Parses `a,b,c` into names (for commander). */
export function parseColumnList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

const tableWidth = (widths: number[]) => widths.reduce((a, b) => a + b, 0) + 3 * widths.length + 1;

/** A column that may be cut keeps at least this many characters ("Alic…") before columns are left out. */
const MIN_CUT = 5;

/**
 * The columns of a table that fits `max`, and their widths: the widest column not `whole` (money, ids)
 * gives up a character at a time, down to 5; then the last columns not whole are left out, then the
 * last whole ones (`dropped`, by index); a single column left is cut.
 */
export function fitColumns(natural: number[], max: number, whole: boolean[] = []): { kept: number[]; widths: number[]; dropped: number[] } {
  let kept = natural.map((_, i) => i);
  // Nothing to keep whole: every column shrinks (to 3), none is left out.
  if (!whole.some(Boolean)) return { kept, widths: fitWidths(natural, max), dropped: [] };
  const dropped: number[] = [];
  for (;;) {
    const widths = shrink(
      kept.map((i) => natural[i] as number),
      max,
      MIN_CUT,
      (k) => !whole[kept[k] as number],
    );
    if (tableWidth(widths) <= max) return { kept, widths, dropped };
    if (kept.length === 1) return { kept, widths: fitWidths(widths, max), dropped };
    const at = [...kept].reverse().find((i) => !whole[i]) ?? (kept.at(-1) as number);
    kept = kept.filter((i) => i !== at);
    dropped.push(at);
    dropped.sort((x, y) => x - y);
  }
}

/** Widths that fit `max` columns, each column shrinking (to 3 at least), none left out. */
export function fitWidths(natural: number[], max: number): number[] {
  return shrink([...natural], max, 3);
}

/** Takes a character at a time off the widest column `cuttable` allows, down to `min`, until the table fits `max` or none can give more. */
function shrink(widths: number[], max: number, min: number, cuttable: (k: number) => boolean = () => true): number[] {
  while (tableWidth(widths) > max) {
    let widest = -1;
    for (let k = 0; k < widths.length; k++) {
      const w = widths[k] as number;
      if (cuttable(k) && w > min && (widest < 0 || w > (widths[widest] as number))) widest = k;
    }
    if (widest < 0) break;
    widths[widest] = (widths[widest] as number) - 1;
  }
  return widths;
}

/** Borders for TERM=dumb, in plain ASCII (elsewhere cli-table3's own box-drawing characters). */
const ASCII = {
  top: '-',
  'top-mid': '+',
  'top-left': '+',
  'top-right': '+',
  bottom: '-',
  'bottom-mid': '+',
  'bottom-left': '+',
  'bottom-right': '+',
  left: '|',
  'left-mid': '+',
  mid: '-',
  'mid-mid': '+',
  right: '|',
  'right-mid': '+',
  middle: '|',
};

/**
 * Renders rows of already safe cells as a bordered table that fits `max` columns, drawn by cli-table3
 * (loaded here, with string-width: a pipe never pays for them). Widths come from our string-width
 * (cli-table3's older one disagrees on some emoji), and each cell is cut before cli-table3 sees it.
 */
export async function renderTable(
  head: string[],
  rows: string[][],
  max: number,
  options: { ascii?: boolean; bold?: (s: string) => string; right?: boolean[]; whole?: boolean[]; wrap?: boolean[] } = {},
): Promise<{ text: string; dropped: number[] }> {
  const [{ default: Table }, { displayWidth, truncate, wrapText }] = await Promise.all([import('cli-table3'), import('../text/wrap.js')]);
  const natural = head.map((h, i) => Math.max(displayWidth(h), ...rows.map((r) => displayWidth(r[i] ?? ''))));
  const { kept, widths, dropped } = fitColumns(natural, max, options.whole);
  // A wrapped cell becomes several lines of its column (cli-table3 draws a cell's lines one under another).
  const fitCell = (text: string, at: number, width: number) => (options.wrap?.[at] ? wrapText(text, width, { hard: true }) : truncate(text, width));
  const cut = (cells: string[]) => kept.map((at, k) => fitCell(cells[at] ?? '', at, widths[k] as number));
  const bold = options.bold ?? ((s: string) => s);
  const table = new Table({
    head: kept.map((at, k) => truncate(head[at] ?? '', widths[k] as number)).map((h) => bold(h)),
    colWidths: widths.map((w) => w + 2),
    colAligns: kept.map((at) => (options.right?.[at] ? 'right' : 'left')),
    chars: options.ascii ? ASCII : {},
    truncate: '…',
    wordWrap: false,
    // No colours from cli-table3 itself: the caller's chalk decides (NO_COLOR, pipes).
    style: { head: [], border: [], 'padding-left': 1, 'padding-right': 1, compact: true },
  });
  for (const row of rows) table.push(cut(row));
  return { text: `${table.toString()}\n`, dropped };
}

/** Prints rows, every cell made safe: on a terminal a bordered table that fits its width, on a pipe tab-separated lines of every column. */
export async function printTable<T>(deps: Printer, columns: Column<T>[], rows: T[], mode: OutputMode, options: TableOptions = {}): Promise<void> {
  const chosen = options.columns ? chooseColumns(columns, options.columns) : undefined;
  if (mode === 'table') {
    const shown = chosen ?? columns.filter((c) => c.default !== false);
    const chalk = await colors(deps);
    const head = shown.map((c) => safeLine(c.header));
    const body = rows.map((row) => shown.map((c) => safeLine(cellText(c.value(row)))));
    const width = terminalWidth(deps);
    const table = await renderTable(head, body, width, {
      ascii: deps.env.TERM === 'dumb',
      bold: (s) => chalk.bold(s),
      right: shown.map((c) => !!c.right),
      whole: shown.map((c) => !!c.whole),
      wrap: shown.map((c) => !!c.wrap),
    });
    deps.out(table.text);
    if (table.dropped.length > 0) {
      const names = table.dropped.map((i) => columnName(shown[i] as Column<T>));
      deps.err(
        `Left out to fit ${width} columns: ${names.join(', ')} (their values are not cut). A wider terminal, fewer --columns, --csv or a pipe shows every column.\n`,
      );
    }
    return;
  }
  const shown = chosen ?? columns;
  let text = '';
  for (const row of rows) text += `${shown.map((c) => safeLine(cellText(c.value(row)))).join('\t')}\n`;
  deps.out(text);
}

/** Label/value lines for a notice: each indented, the labels padded to one width, the values made safe. */
export function alignedLines(pairs: [string, string][]): string {
  const width = Math.max(...pairs.map(([label]) => label.length));
  return pairs.map(([label, value]) => `  ${label.padEnd(width)}  ${safeLine(value)}`).join('\n');
}

/** Prints label/value pairs: aligned on a terminal, tab-separated on a pipe; values made safe. */
export async function printRecord(deps: Printer, pairs: [string, unknown][], mode: OutputMode): Promise<void> {
  if (mode === 'table') {
    const chalk = await colors(deps);
    const { truncate } = await import('../text/wrap.js');
    const width = Math.max(...pairs.map(([k]) => k.length));
    const room = Math.max(10, terminalWidth(deps) - width - 2);
    for (const [k, v] of pairs) deps.out(`${chalk.bold(k.padEnd(width))}  ${truncate(safeLine(cellText(v)), room)}\n`);
    return;
  }
  for (const [k, v] of pairs) deps.out(`${k}\t${safeLine(cellText(v))}\n`);
}

/** One CSV cell guarded against formula injection (OWASP): `=`, `+`, `-`, `@`, tab or CR first gets a leading `'`; `raw` (--csv-raw) turns it off. */
export function csvCell(value: unknown, raw = false): string {
  const text = cellText(value);
  // A number is data, not a formula: -5 stays -5.
  if (raw || typeof value === 'number') return text;
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

/** A chalk instance for stdout: colour only on a terminal without NO_COLOR. */
export async function colors(deps: Printer, stream: 'stdout' | 'stderr' = 'stdout') {
  const { Chalk } = await import('chalk');
  const on = stream === 'stdout' ? deps.io.colorStdout : deps.io.colorStderr;
  return new Chalk({ level: on ? 1 : 0 });
}
