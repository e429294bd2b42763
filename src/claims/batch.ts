/**
 * `claims file --from FILE`: rows are read, validated and sent as they come by a small worker pool
 * over the one keep-alive HTTP pool, each row journaled before its request leaves, so a rerun files
 * nothing twice and loses nothing.
 */
import { createReadStream, statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import type { Readable } from 'node:stream';
import type { Deps } from '../deps.js';
import { ApiError, AuthError, InterruptedError, NetworkError, OpcliError, PartialFailureError, UsageError } from '../errors.js';
import type { OfflineClaim } from '../schemas.js';
import { Journal } from './journal.js';
import { detectFormat, openSource, rowKey, type SourceRow } from './reader.js';
import { BatchReporter, type RowResult } from './report.js';
import { validateClaim } from './validate.js';

export interface BatchOptions {
  /** A path, or "-" for standard input. */
  from: string;
  format?: string;
  concurrency: number;
  journal?: string;
  retryUncertain: boolean;
  validateOnly: boolean;
  jsonl: boolean;
  json: boolean;
  out?: string;
}

/** How a failed request ends: the row's status, and whether the whole batch must stop. */
export function classifyFailure(error: unknown): { status: 'rejected' | 'uncertain' | 'not_sent'; stop: boolean } {
  if (error instanceof ApiError) {
    // Refused before anything happened: the token or scope is wrong for every row alike.
    if (error.status === 401 || error.status === 403) return { status: 'not_sent', stop: true };
    // 429 after the core's retries: refused, nothing created; the next run sends it.
    if (error.status === 429) return { status: 'not_sent', stop: false };
    if (error.status >= 500) return { status: 'uncertain', stop: false };
    return { status: 'rejected', stop: false };
  }
  // Raised before a request went out (not logged in, no base URL).
  if (error instanceof AuthError || error instanceof UsageError) return { status: 'not_sent', stop: true };
  // Connection refused after the core's retries: the server is down for every row.
  if (error instanceof NetworkError && !error.sent) return { status: 'not_sent', stop: true };
  // A timeout, a lost connection, an unreadable 2xx: the claim may exist.
  return { status: 'uncertain', stop: false };
}

function openInput(from: string, deps: Deps): { stream: Readable; label: string; path?: string } {
  if (from === '-') return { stream: deps.io.stdin, label: 'standard input' };
  const path = resolvePath(deps.cwd, from);
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new UsageError(`${from} is not a file.`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`Cannot read ${from}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}.`, 'Check the path passed to --from.');
  }
  return { stream: createReadStream(path), label: from, path };
}

/** Counts newlines to estimate the rows of a file for the progress line (fast, in the background). */
async function countLines(path: string): Promise<{ lines: number; endsWithNewline: boolean }> {
  let lines = 0;
  let last = 10;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let i = chunk.indexOf(10);
    while (i !== -1) {
      lines++;
      i = chunk.indexOf(10, i + 1);
    }
    if (chunk.length) last = chunk[chunk.length - 1] as number;
  }
  return { lines, endsWithNewline: last === 10 };
}

/** Runs a batch: validate-only, or send with the journal. */
export async function runBatch(opts: BatchOptions, deps: Deps): Promise<void> {
  const format = detectFormat(opts.from, opts.format);
  // A batch may be a million rows: memory must stay flat (and under 100 MiB) for any size.
  await (await import('../lean-memory.js')).leanMemory();
  if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1 || opts.concurrency > 64) {
    throw new UsageError(`--concurrency must be a whole number from 1 to 64, got ${opts.concurrency}.`);
  }
  if (opts.from === '-' && !opts.journal && !opts.validateOnly) {
    throw new UsageError('A batch from standard input needs --journal PATH: the journal is what makes a rerun safe.', 'Pass --journal claims.journal.jsonl.');
  }
  let defaultStoreId: string | undefined;
  try {
    defaultStoreId = (await deps.profile()).storeId;
  } catch {
    // No readable profile: rows must carry storeId.
  }
  const input = openInput(opts.from, deps);
  const source = await openSource(input.stream, format, { defaultStoreId, label: input.label });
  const progress = deps.io.stderrIsTTY && !opts.json;
  const reporter = new BatchReporter(deps, source, {
    jsonl: opts.jsonl,
    out: opts.out ? resolvePath(deps.cwd, opts.out) : undefined,
    progress,
    verb: opts.validateOnly ? 'validate' : 'send',
  });
  if (progress && input.path && format !== 'json') {
    const path = input.path;
    countLines(path)
      .then(({ lines, endsWithNewline }) => {
        reporter.total = Math.max(0, lines + (endsWithNewline ? 0 : 1) - (format === 'csv' ? 1 : 0));
        reporter.totalApproximate = true;
      })
      .catch(() => {});
  }
  await reporter.start();
  try {
    if (opts.validateOnly) await validateAll(source.rows, reporter, deps);
    else await sendAll(opts, source.rows, reporter, deps, input.path ?? opts.from);
  } finally {
    input.stream.destroy?.();
  }
}

async function validateAll(rows: AsyncGenerator<SourceRow>, reporter: BatchReporter, deps: Deps): Promise<void> {
  let interrupted = false;
  let fatal: unknown;
  try {
    for await (const row of rows) {
      if (deps.signal.aborted) {
        interrupted = true;
        break;
      }
      const checked = validateClaim(row.value, row.issues);
      await reporter.add(row, checked.ok ? { line: row.line, status: 'valid' } : { line: row.line, status: 'rejected', invalid: true, errors: checked.issues });
    }
  } catch (error) {
    fatal = error;
  }
  await reporter.finish();
  const c = reporter.counts;
  deps.err(`Checked ${c.done.toLocaleString('en-US')} row${c.done === 1 ? '' : 's'}: ${c.valid.toLocaleString('en-US')} valid, ${c.invalid.toLocaleString('en-US')} invalid. Nothing was sent.\n`);
  if (fatal) throw fatal;
  if (interrupted) throw new InterruptedError();
  if (c.invalid > 0) throw new PartialFailureError(`${c.invalid} row${c.invalid === 1 ? ' is' : 's are'} invalid.`, 'Fix the rows named above, then run again.');
}

async function sendAll(opts: BatchOptions, rows: AsyncGenerator<SourceRow>, reporter: BatchReporter, deps: Deps, inputPath: string): Promise<void> {
  const journalPath = resolvePath(deps.cwd, opts.journal ?? `${inputPath}.journal.jsonl`);
  const journal = await Journal.open(journalPath);
  let stopError: unknown;
  let fatal: unknown;
  /** The input broke (an unreadable CSV line): the rows before it are still sent and reported. */
  let readError: unknown;
  const journalWrites: Promise<void>[] = [];
  const earlierUncertain: number[] = [];
  let earlierUncertainCount = 0;

  const stopped = () => stopError !== undefined || fatal !== undefined || deps.signal.aborted;

  /** A row that is journaled as sending and ready to go. */
  interface Ready {
    row: SourceRow;
    key: string;
    claim: OfflineClaim;
    /** Its outcome is journaled: nothing else may be recorded for it. */
    settled?: boolean;
  }

  /** The next row, or undefined at the end of the input, when stopping, or when the input broke. */
  const nextRow = async (): Promise<SourceRow | undefined> => {
    // Backpressure: while the results waiting for an earlier row are many, read no further.
    const room = reporter.room();
    if (room) await room;
    if (stopped()) return undefined;
    try {
      const next = await rows.next();
      return next.done || stopped() ? undefined : next.value;
    } catch (error) {
      // A reader error comes after every row read before it; later calls get `done`.
      readError ??= error;
      return undefined;
    }
  };

  /**
   * Pulls rows until one must be sent: rows settled earlier and invalid rows are reported on the
   * way. The returned row is already durable as `sending`.
   */
  const prepare = async (): Promise<Ready | undefined> => {
    try {
      for (let row = await nextRow(); row; row = await nextRow()) {
        const key = rowKey(row);
        const prior = journal.priorOutcome(key);
        // not_sent rows are sent now; uncertain ones only with --retry-uncertain.
        const unknown = prior?.status === 'sending' || prior?.status === 'uncertain';
        if (prior && prior.status !== 'not_sent' && !(unknown && opts.retryUncertain)) {
          if (unknown) {
            earlierUncertainCount++;
            if (earlierUncertain.length < 20) earlierUncertain.push(row.line);
          }
          const detail = reporter.perRow ? await journal.priorDetail(prior) : {};
          const status = unknown ? 'uncertain' : (prior.status as 'filed' | 'rejected');
          const error = unknown ? (detail.reason ?? 'the run that sent it stopped before the answer arrived') : detail.reason;
          await reporter.add(row, { line: row.line, status, sourceOrderId: detail.sourceOrderId, error, earlier: true });
          continue;
        }
        const checked = validateClaim(row.value, row.issues);
        if (!checked.ok) {
          await reporter.add(row, { line: row.line, status: 'rejected', invalid: true, errors: checked.issues });
          continue;
        }
        // Durable before the request leaves: a crash from here on reads as uncertain, never as unsent.
        await journal.record({ key, line: row.line, status: 'sending' });
        return { row, key, claim: checked.claim };
      }
    } catch (error) {
      // The journal or a results file cannot be written: stop; nothing more is sent.
      fatal ??= error;
    }
    return undefined;
  };

  /** Journals a row's outcome, then reports it; a failure to report never touches the journal again. */
  const settle = async (ready: Ready, outcome: { result: RowResult; stop: boolean; error?: unknown }): Promise<void> => {
    journalWrites.push(
      journal
        .record({
          key: ready.key,
          line: ready.row.line,
          status: outcome.result.status as 'filed',
          sourceOrderId: outcome.result.sourceOrderId,
          reason: outcome.result.error,
          errors: outcome.result.errors,
        })
        .catch((error) => {
          fatal ??= error;
        }),
    );
    ready.settled = true;
    if (outcome.stop) stopError ??= outcome.error;
    try {
      await reporter.add(ready.row, outcome.result);
    } catch (error) {
      fatal ??= error;
    }
  };

  /** A prepared row the batch stopped before sending: journaled so the next run sends it, and reported. */
  const notSent = async (ready: Ready): Promise<void> => {
    const reason = 'the batch stopped before this row was sent';
    await settle(ready, { result: { line: ready.row.line, status: 'not_sent', error: reason }, stop: false });
  };

  /**
   * Each worker prepares (reads, validates, journals) its next row while its current request is in
   * flight, so the journal's fsync overlaps the network instead of adding to it. A prepared row that
   * is not sent because the batch stops is journaled and reported as not_sent; only a crash leaves
   * it "sending" (uncertain on the next run): at most one row per worker beyond those in flight.
   */
  const worker = async (): Promise<void> => {
    let current = await prepare();
    try {
      while (current) {
        if (stopped()) {
          await notSent(current);
          return;
        }
        const sending = send(current.claim, current.row, deps);
        const upcoming = prepare();
        reporter.counts.sent++;
        await settle(current, await sending);
        current = await upcoming;
      }
    } catch (error) {
      fatal ??= error;
      // Only a row whose request left and whose outcome is not journaled can be uncertain.
      if (current && !current.settled) {
        await journal.record({ key: current.key, line: current.row.line, status: 'uncertain', reason: 'opcli failed while sending it' }).catch(() => {});
      }
    }
  };

  try {
    await Promise.all(Array.from({ length: opts.concurrency }, worker));
    await Promise.all(journalWrites);
  } finally {
    await reporter.finish().catch((error) => {
      fatal ??= error;
    });
    await journal.close();
  }
  summarize(reporter, deps, journalPath, earlierUncertain, earlierUncertainCount, opts);
  if (fatal) throw fatal;
  if (stopError) {
    if (stopError instanceof OpcliError) throw stopError;
    throw new OpcliError(`The batch stopped: ${(stopError as Error).message}`);
  }
  if (deps.signal.aborted) {
    deps.err('Interrupted: no new rows were sent; the rows in flight finished and are in the journal. Run the same command to go on.\n');
    throw new InterruptedError();
  }
  const c = reporter.counts;
  if (readError) {
    // Nothing sent: the file is what is wrong (exit 2). Something sent: the batch is partial (exit 3).
    if (c.sent === 0) throw readError;
    const message = readError instanceof Error ? readError.message : String(readError);
    throw new PartialFailureError(
      `${message}. The ${c.done.toLocaleString('en-US')} rows before it were handled (${c.filed.toLocaleString('en-US')} filed now); nothing from that line on was read.`,
      'Fix the file from that line on and run the same command again: rows already filed are skipped.',
    );
  }
  const unsettled = c.rejected + c.rejectedEarlier + c.invalid + c.uncertain + c.uncertainEarlier + c.notSent;
  if (unsettled > 0) {
    throw new PartialFailureError(
      `${unsettled.toLocaleString('en-US')} of ${c.done.toLocaleString('en-US')} rows were not filed.`,
      c.uncertain + c.uncertainEarlier > 0
        ? 'Check the uncertain rows (the claims may exist), then run again with --retry-uncertain to send them again.'
        : 'Fix the rows named above and run the same command again; filed rows are skipped.',
    );
  }
}

async function send(claim: OfflineClaim, row: SourceRow, deps: Deps): Promise<{ result: RowResult; stop: boolean; error?: unknown }> {
  try {
    // No signal: Ctrl-C stops new rows, but a request in flight is let finish so its outcome is known.
    const api = await deps.api();
    const created = await api.createClaim(claim);
    return { result: { line: row.line, status: 'filed', sourceOrderId: created.payload.sourceOrderId }, stop: false };
  } catch (error) {
    const { status, stop } = classifyFailure(error);
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    const errors = error instanceof ApiError && error.fieldErrors.length ? error.fieldErrors : undefined;
    return { result: { line: row.line, status, error: message, errors }, stop, error };
  }
}

function summarize(
  reporter: BatchReporter,
  deps: Deps,
  journalPath: string,
  earlierUncertain: number[],
  earlierUncertainCount: number,
  opts: BatchOptions,
): void {
  const c = reporter.counts;
  const n = (v: number) => v.toLocaleString('en-US');
  const seconds = reporter.elapsed() / 1000;
  if (opts.json) {
    deps.out(
      `${JSON.stringify(
        {
          rows: c.done,
          filed: c.filed,
          rejected: c.rejected + c.invalid,
          uncertain: c.uncertain,
          notSent: c.notSent,
          earlier: { filed: c.filedEarlier, rejected: c.rejectedEarlier, uncertain: c.uncertainEarlier },
          sent: c.sent,
          seconds: Math.round(seconds * 1000) / 1000,
          journal: journalPath,
        },
        null,
        2,
      )}\n`,
    );
  }
  const rate = seconds > 0 ? c.sent / seconds : 0;
  const lines = [
    `Filed ${n(c.filed)} claim${c.filed === 1 ? '' : 's'}; ${n(c.rejected)} rejected by the API, ${n(c.invalid)} invalid (not sent), ${n(c.uncertain)} uncertain${c.notSent ? `, ${n(c.notSent)} not sent` : ''} (${c.done === 0 ? 'no rows' : `${n(c.done)} rows`} in ${seconds.toFixed(1)}s, ${rate.toFixed(0)} requests/s).`,
  ];
  if (c.filedEarlier + c.rejectedEarlier + c.uncertainEarlier > 0) {
    lines.push(
      `Settled by an earlier run, not sent again: ${n(c.filedEarlier)} filed, ${n(c.rejectedEarlier)} rejected, ${n(c.uncertainEarlier)} uncertain.`,
    );
  }
  if (earlierUncertainCount > 0) {
    lines.push(
      `Uncertain from an earlier run (sent, answer never read): ${reporter.unitName()} ${earlierUncertain.join(', ')}${earlierUncertainCount > earlierUncertain.length ? ` and ${n(earlierUncertainCount - earlierUncertain.length)} more` : ''}.`,
    );
  }
  if (c.uncertain + c.uncertainEarlier > 0) {
    lines.push('Uncertain means the request was sent but its answer was lost: the claim may exist. opcli does not resend these on its own; check them, then pass --retry-uncertain.');
  }
  lines.push(`Journal: ${journalPath}`);
  deps.err(`${lines.join('\n')}\n`);
}
