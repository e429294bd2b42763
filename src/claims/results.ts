/**
 * What a batch's stages hand the report: each row's outcome and the running counts, and the
 * report's interface. The report itself (per-row output, progress, summary) is the verb's
 * (src/commands/claims/batch-report.ts and the modules it composes): nothing here prints.
 */
import type { RequestLimiter } from '../http/adaptive.js';
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

/** Where a batch reports to: the verb gives one, the batch pipeline only calls it. */
export interface BatchReport {
  readonly counts: Counts;
  total?: number;
  totalApproximate: boolean;
  /** The batch's limiter, when sending: its state joins the progress line and the summary. */
  limiter?: RequestLimiter;
  /** Whether each row's outcome is written (--jsonl or --out). */
  readonly perRow: boolean;
  start(): Promise<void>;
  /** Undefined when there is room for another row; else a promise that resolves when there is. */
  room(): Promise<void> | undefined;
  /** Counts and reports a row; a promise only when its output must wait (a slow stdout, the results file). */
  add(row: SourceRow, result: RowResult): Promise<void> | undefined;
  finish(): Promise<void>;
  /** A line for the person, without tearing the progress line. */
  notice(text: string): void;
  unitName(): string;
  elapsed(): number;
}

/** How the verb shows a batch: the report, the closing summary and plain notices. */
export interface BatchView {
  /** `verb`: send, validate (--validate-only), or plan (--dry-run: what a real run would do, nothing sent). */
  report(source: RowSource, options: { jsonl: boolean; out?: string; progress: boolean; verb: 'send' | 'validate' | 'plan' }): BatchReport;
  /** The summary at the end (or at a second Ctrl-C). `inFlight`: rows whose request had no answer when stopped. */
  summarize(
    report: BatchReport,
    journalPath: string,
    earlierUncertain: number[],
    earlierUncertainCount: number,
    opts: { json: boolean; jsonl?: boolean },
    inFlight: number[],
  ): void;
  notice(text: string): void;
}
