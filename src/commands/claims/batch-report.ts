/**
 * What a batch shows, composed: per-row results in input order (--jsonl on stdout, --out results
 * CSV: batch-output.ts, kept in order by batch-order.ts), the status line on a terminal's stderr (batch-status.ts), rows not filed
 * and their counts (batch-rows.ts). The summary is batch-summary.ts.
 */
import type { RowSource, SourceRow } from '../../claims/reader.js';
import type { BatchProgress, BatchReport, RowResult } from '../../claims/results.js';
import type { Deps } from '../../cli/deps.js';
import { ResultsFile, writeWithBackpressure } from './batch-output.js';
import { problemText } from './batch-rows.js';
import { InOrder } from './batch-order.js';
import { StatusTicker } from './batch-status.js';
import { pickFields } from '../../core/json-fields.js';
import { progressStyle } from '../../text/progress.js';
import { safeLine } from '../../text/safe.js';
import { count as formatCount } from '../../text/count.js';

/** The report's options: where rows go, the verb, and the display's modes. */
export interface ReportOptions {
  jsonl: boolean;
  /** `--json`: one summary object on stdout; no status line. */
  json: boolean;
  out?: string;
  verb: 'send' | 'validate' | 'plan';
  /** `--jsonl FIELDS`: the fields of each row's result line. */
  fields?: string[];
}

export class BatchReporter implements BatchReport {
  private readonly order = new InOrder<{ row: SourceRow; result: RowResult }>((item) => this.emit(item.row, item.result));
  private readonly out?: ResultsFile;
  private readonly ticker?: StatusTicker;
  /** Rows whose line repeats an earlier row's cause (same outcome, same error): folded into one line at the end. */
  private readonly folded = new Map<string, { status: string; error: string; lines: number[]; count: number; first?: RowResult }>();

  constructor(
    private readonly deps: Deps,
    private readonly source: RowSource,
    private readonly options: ReportOptions,
    progress: () => BatchProgress,
  ) {
    if (options.out) this.out = new ResultsFile(options.out, source.header, source.delimiter);
    // --progress: a redrawn line on a terminal (not under --json), plain sentences in a log, or none.
    const style = progressStyle(deps);
    if (style === 'plain' || (style === 'line' && !options.json)) {
      this.ticker = new StatusTicker(deps, () => ({ ...progress(), verb: options.verb, now: deps.now() }));
    }
  }

  /** Whether a status line is drawn. */
  get drawsProgress(): boolean {
    return this.ticker !== undefined;
  }

  async start(): Promise<void> {
    await this.out?.open();
    this.ticker?.start();
  }

  /** Results are printed per row (--jsonl or --out): each row's sourceOrderId and error are needed. */
  get perRow(): boolean {
    return this.options.jsonl || this.out !== undefined;
  }

  /** Undefined while there is room for more rows; else a promise that resolves when there is. */
  room(): Promise<void> | undefined {
    return this.order.room();
  }

  /** Reports a row; its output is released in input order (a promise only then). */
  add(row: SourceRow, result: RowResult): Promise<void> | undefined {
    this.ticker?.tick();
    if (result.status !== 'filed' && result.status !== 'valid' && !result.earlier && !this.options.jsonl) this.problem(result);
    return this.perRow ? this.order.done(row.seq, { row, result }) : undefined;
  }

  /**
   * A row not filed, on stderr: the first of each cause in full, the others counted (an outage fails
   * hundreds alike, a copy of a filed file holds every row). A held row folds only when its result
   * names a cause shared by rows alike; one that looks like an earlier claim is shown whole. Rows not
   * sent are all shown at the end: a service never reached is then one line instead (finish).
   */
  private problem(result: RowResult): void {
    const cause = result.status === 'held' ? result.cause : result.errors?.length ? undefined : (result.error ?? '');
    const key = cause === undefined ? undefined : `${result.status}\n${cause}`;
    const same = key === undefined ? undefined : this.folded.get(key);
    if (same) {
      same.count++;
      keepFirstLines(same.lines, result.line);
      return;
    }
    const later = key !== undefined && result.status === 'not_sent';
    if (key !== undefined) this.folded.set(key, { status: result.status, error: cause ?? '', lines: [], count: 0, first: later ? result : undefined });
    if (!later) this.notice(problemText(result, this.source.unit, this.options.verb === 'plan'));
  }

  private async emit(row: SourceRow, result: RowResult): Promise<void> {
    if (this.options.jsonl) await writeWithBackpressure(this.deps.io.stdout, `${JSON.stringify(pickFields(shown(result), this.options.fields))}\n`);
    await this.out?.row(row, result);
  }

  /** A line for the person on stderr, above the status line. */
  notice(text: string): void {
    if (this.ticker) this.ticker.notice(text);
    else this.deps.err(text);
  }

  /**
   * Prints the rows held back (not sent) and the folded causes, stops the status line (leaving its last
   * state on screen) and closes the results file. `unreachable`: rows not sent are left to the one line
   * that says the service was never reached.
   */
  async finish(options: { unreachable?: boolean } = {}): Promise<void> {
    for (const { status, error, lines, count, first } of this.folded.values()) {
      if (first && options.unreachable) continue;
      if (first) this.notice(problemText(first, this.source.unit, this.options.verb === 'plan'));
      if (count === 0) continue;
      const unit = this.source.unit;
      const more = count > lines.length ? ` and ${formatCount(count - lines.length)} more` : '';
      this.notice(
        `${formatCount(count)} more ${unit}${count === 1 ? '' : 's'} ${status.replace('_', ' ')} for the same cause (${safeLine(error)}): ${unit}${count === 1 ? '' : 's'} ${lines.join(', ')}${more}\n`,
      );
    }
    this.folded.clear();
    this.ticker?.stop();
    await this.order.flush();
    await this.out?.close();
  }
}

/** The lines a folded cause lists: the FOLDED_LINES smallest, in line order, however the rows finished. */
const FOLDED_LINES = 20;

function keepFirstLines(lines: number[], line: number): void {
  if (lines.length === FOLDED_LINES && line > (lines.at(-1) as number)) return;
  let at = lines.length;
  while (at > 0 && (lines[at - 1] as number) > line) at--;
  lines.splice(at, 0, line);
  if (lines.length > FOLDED_LINES) lines.pop();
}

/** A row's result as --jsonl prints it: the display's fold cause is not part of it. */
function shown(result: RowResult): Omit<RowResult, 'cause'> {
  if (result.cause === undefined) return result;
  const { cause: _, ...rest } = result;
  return rest;
}
