/** What the send pipeline (pipeline.ts) is given, and what it comes to: its options, its ports, its result. */
import type { ServiceApi } from '../api/service.js';
import type { RequestLimiter } from '../http/adaptive.js';
import type { NetworkError } from '../core/errors.js';
import type { HttpClient } from '../http/client.js';
import type { ClaimsRecord } from './record-open.js';
import type { BatchReport, BatchTally, BatchView } from './results.js';

/** What the run came to, for the verdict (batch.ts). */
export interface SendResult {
  /** A failure that must end the run (the record or a results file cannot be written, the lock lost). */
  fatal?: unknown;
  /** A failure every row would meet (401, connection refused): the batch stopped sending. */
  stopError?: unknown;
  /** The input broke at a line: rows before it were handled. */
  readError?: unknown;
  /** Ended by a second Ctrl-C: the summary is already printed. */
  stoppedNow: boolean;
  /** No request reached the service, and this failure proved it unreachable: nothing was sent, no summary printed. */
  unreachable?: NetworkError;
}

export interface PipelineOptions {
  concurrency: number;
  /** `--wait-for-service`: how long an outage may last before the batch stops; undefined stops at once. */
  waitForServiceMs?: number;
  /** The store the token belongs to, for the words of a store-mismatch refusal. */
  tokenStore?: string;
}

/** What the pipeline uses of the world: the network, the clock, the stop signals, the records, and where it reports. */
export interface SendPorts {
  /** The spec's endpoints (the claim request) and the HTTP core (the outage probe's GET). */
  api: () => Promise<ServiceApi>;
  http: () => Promise<HttpClient>;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Ctrl-C: no new row leaves; the rows in flight finish. */
  signal: AbortSignal;
  /** A second Ctrl-C: the summary at once. */
  stopNow: AbortSignal;
  /** The record of claims for the store, open under its lock: each row's intent and outcome. */
  record: ClaimsRecord;
  /** The batch's name (docs/spec-choices.md#the-same-batch), for the summary. */
  batch: string;
  limiter: RequestLimiter;
  /** The batch's counts, which the display reads. */
  tally: BatchTally;
  /** The verb's display: each row's outcome, notices, the summary. */
  report: BatchReport;
  view: Pick<BatchView, 'notice' | 'summarize'>;
}
