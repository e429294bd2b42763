/**
 * What a batch's stages hand the report: each row's outcome, the batch's running account
 * (BatchTally: counts, time, size, limiter) that the display reads, and the report's interface. The
 * report itself (per-row output, progress, summary) is the verb's (src/commands/claims/batch-report.ts
 * and the modules it composes): nothing here prints.
 */
import type { LimiterSnapshot, RequestLimiter } from '../http/adaptive.js';
import type { FieldIssue } from '../schemas.js';
import type { RowSource, SourceRow } from './reader.js';

/**
 * Final state of a row in this run. `invalid`: refused by the checks, never sent; `held`: looks like
 * (or has the --key of) a claim filed earlier, not sent; `not_sent`: nothing was created, the next
 * run sends it; `rejected`: refused by the API.
 */
export type RowStatus = 'filed' | 'rejected' | 'invalid' | 'held' | 'uncertain' | 'not_sent' | 'valid';

export interface RowResult {
  line: number;
  status: RowStatus;
  sourceOrderId?: string;
  error?: string;
  errors?: FieldIssue[];
  /** The outcome was recorded by an earlier run; nothing was sent now. */
  earlier?: boolean;
  /**
   * What rows alike share, without this row's details (a held row: "already filed from a.csv"):
   * the display shows the first in full and folds the others into one line.
   */
  cause?: string;
}

export interface Counts {
  filed: number;
  filedEarlier: number;
  rejected: number;
  rejectedEarlier: number;
  invalid: number;
  held: number;
  uncertain: number;
  uncertainEarlier: number;
  notSent: number;
  valid: number;
  /** Requests sent in this run. */
  sent: number;
  done: number;
}

/** A batch's counts at the start: nothing seen yet. */
export function emptyCounts(): Counts {
  return {
    filed: 0,
    filedEarlier: 0,
    rejected: 0,
    rejectedEarlier: 0,
    invalid: 0,
    held: 0,
    uncertain: 0,
    uncertainEarlier: 0,
    notSent: 0,
    valid: 0,
    sent: 0,
    done: 0,
  };
}

/** The count each outcome adds to: now, or (outcomes an earlier run recorded) earlier. */
const COUNTED: Record<RowStatus, [now: keyof Counts, earlier?: keyof Counts]> = {
  filed: ['filed', 'filedEarlier'],
  rejected: ['rejected', 'rejectedEarlier'],
  uncertain: ['uncertain', 'uncertainEarlier'],
  invalid: ['invalid'],
  held: ['held'],
  not_sent: ['notSent'],
  valid: ['valid'],
};

/** What the display shows while a batch runs: it asks the batch (BatchTally.progress) each time it draws. */
export interface BatchProgress {
  counts: Readonly<Counts>;
  /** The rows the input holds, estimated from its lines, once counted. */
  total?: number;
  totalApproximate: boolean;
  /** The limiter's state when sending: requests in flight, the rate the server allows as learnt, a pause. */
  limits?: LimiterSnapshot;
  elapsedMs: number;
}

/** What a batch came to, for the summary at its end (or at a second Ctrl-C). */
export interface BatchSummary {
  counts: Readonly<Counts>;
  elapsedMs: number;
  /** The limiter's state at the end, when sending: requests, refusals, the learnt rate. */
  limits?: LimiterSnapshot;
  /** What the input's positions are (lines of a CSV or JSONL file, items of a JSON array). */
  unit: 'line' | 'item';
  journal: string;
  /** Rows an earlier run sent without reading the answer: the first ones, and how many in all. */
  earlierUncertain: { lines: number[]; count: number };
  /** Rows whose request had no answer when the batch was stopped at once. */
  inFlight: number[];
}

/**
 * The batch's running account, kept by the batch and read by the display: the counts by outcome,
 * the time since it started, the input's estimated size and the limiter's state.
 */
export class BatchTally {
  readonly counts: Counts = emptyCounts();
  private readonly started: number;
  private total?: number;
  /** Rows an earlier run sent without reading the answer: the first 20 lines, and how many. */
  private readonly earlierUncertain = { lines: [] as number[], count: 0 };

  constructor(
    private readonly now: () => number,
    private readonly limiter?: RequestLimiter,
  ) {
    this.started = now();
  }

  /** Counts one row's outcome. */
  count(result: RowResult): void {
    this.counts.done++;
    const [now, earlier] = COUNTED[result.status];
    this.counts[result.earlier && earlier ? earlier : now]++;
  }

  /** A row an earlier run sent without reading the answer (the summary lists it). */
  uncertainEarlier(line: number): void {
    this.earlierUncertain.count++;
    if (this.earlierUncertain.lines.length < 20) this.earlierUncertain.lines.push(line);
  }

  /** A row's request left (its first attempt): rows and requests differ, a row refused with 429 is asked again. */
  sent(): void {
    this.counts.sent++;
  }

  /** The input holds about this many rows (its lines counted). */
  estimate(total: number): void {
    this.total = total;
  }

  /** What the display shows now. */
  progress(): BatchProgress {
    const total = this.total;
    return { counts: this.counts, total, totalApproximate: total !== undefined, limits: this.limiter?.snapshot(), elapsedMs: this.now() - this.started };
  }

  /** The summary's value: the counts and the time now, with what the batch adds. */
  summary(rest: Pick<BatchSummary, 'unit' | 'journal' | 'inFlight'>): BatchSummary {
    const { counts, earlierUncertain } = this;
    return { counts, elapsedMs: this.now() - this.started, limits: this.limiter?.snapshot(), earlierUncertain, ...rest };
  }
}

/** Where a batch reports each row to (the verb's display): it prints, the batch only calls it. */
export interface BatchReport {
  /** Whether the display draws a status line (it decides from its mode): the batch then counts the input's lines for a total. */
  readonly drawsProgress: boolean;
  /** Whether each row's outcome is written (--jsonl or --out). */
  readonly perRow: boolean;
  start(): Promise<void>;
  /** Undefined when there is room for another row; else a promise that resolves when there is. */
  room(): Promise<void> | undefined;
  /** Reports a row (counted already); a promise only when its output must wait (a slow stdout, the results file). */
  add(row: SourceRow, result: RowResult): Promise<void> | undefined;
  /** The end of the rows; `unreachable`: the service was never reached, and one line will say so instead of a line per row not sent. */
  finish(options?: { unreachable?: boolean }): Promise<void>;
  /** A line for the person, without tearing the progress line. */
  notice(text: string): void;
}

/** How the verb shows a batch: the report, the closing summary and plain notices. */
export interface BatchView {
  /**
   * `verb`: send, validate (--validate-only), or plan (--dry-run: what a real run would do, nothing
   * sent). `progress`: what the status line shows, asked of the batch each time it is drawn.
   */
  report(source: RowSource, options: { out?: string; verb: 'send' | 'validate' | 'plan' }, progress: () => BatchProgress): BatchReport;
  /** The summary at the end (or at a second Ctrl-C). */
  summarize(summary: BatchSummary): void;
  notice(text: string): void;
}
