/**
 * `claims file --from FILE`, composed: paths (paths.ts) are checked first; then each row passes each
 * stage once: read (reader.ts) → check and key (plan.ts, identity.ts) → record `sending`
 * (journal.ts) → send (send.ts) → record the outcome → report (the verb's BatchView, results.ts), with
 * the summary at the end. A small worker pool sends over the one keep-alive HTTP pool; each row is
 * journaled before its request leaves, so a rerun files nothing twice and loses nothing.
 */
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Deps } from '../deps.js';
import { InterruptedError, OpcliError, PartialFailureError, UsageError } from '../errors.js';
import { createAdaptiveLimiter, type RequestLimiter } from '../http/adaptive.js';
import { Journal } from './journal.js';
import { resolveBatchPaths } from './paths.js';
import { Planner, storeMismatch, type ToSend } from './plan.js';
import { detectFormat, openSource, type SourceRow } from './reader.js';
import type { BatchReport, BatchView } from './results.js';
import { type SendOutcome, send } from './send.js';
import { validateClaim } from './validate.js';

export interface BatchOptions {
  /** A path, or "-" for standard input. */
  from: string;
  format?: string;
  /** Upper bound of requests in flight; the limiter finds the server's real limit under it. */
  concurrency: number;
  /** `--rate`: upper bound of requests started per second. */
  rate?: number;
  journal?: string;
  retryUncertain: boolean;
  validateOnly: boolean;
  jsonl: boolean;
  json: boolean;
  out?: string;
  /** `--key COLUMN`: the user's identifier column is the row's identity. */
  key?: string;
  /** `--allow-similar`: file rows that look like a claim filed earlier. */
  allowSimilar: boolean;
}

function openInput(from: string, path: string | undefined, deps: Deps): { stream: Readable; label: string; path?: string } {
  if (from === '-' || !path) return { stream: deps.io.stdin, label: 'standard input' };
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

/** Runs a batch: validate-only, or send with the journal; `view` shows it (nothing here prints). */
export async function runBatch(opts: BatchOptions, deps: Deps, view: BatchView): Promise<void> {
  const format = detectFormat(opts.from, opts.format);
  // A batch may be a million rows: memory must stay flat (and under 100 MiB) for any size.
  await (await import('../lean-memory.js')).leanMemory();
  if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1 || opts.concurrency > 64) {
    throw new UsageError(`--concurrency must be a whole number from 1 to 64, got ${opts.concurrency}.`);
  }
  if (opts.from === '-' && !opts.journal && !opts.validateOnly) {
    throw new UsageError('A batch from standard input needs --journal PATH: the journal is what makes a rerun safe.', 'Pass --journal claims.journal.jsonl.');
  }
  // Every path is checked before anything is read, sent or written.
  const paths = resolveBatchPaths(opts, deps.cwd);
  let storeId: string | undefined;
  try {
    storeId = (await deps.profile()).storeId;
  } catch {
    // No readable profile: rows must carry storeId.
  }
  const input = openInput(opts.from, paths.input, deps);
  const source = await openSource(input.stream, format, { defaultStoreId: storeId, label: input.label, keyColumn: opts.key });
  const progress = deps.io.stderrIsTTY && !opts.json;
  // An unusable journal is refused before the results file is created.
  const journal = opts.validateOnly ? undefined : await Journal.open(paths.journal as string);
  try {
    const reporter = view.report(source, { jsonl: opts.jsonl, out: paths.out, progress, verb: opts.validateOnly ? 'validate' : 'send' });
    if (progress && input.path && format !== 'json') {
      countLines(input.path)
        .then(({ lines, endsWithNewline }) => {
          reporter.total = Math.max(0, lines + (endsWithNewline ? 0 : 1) - (format === 'csv' ? 1 : 0));
          reporter.totalApproximate = true;
        })
        .catch(() => {});
    }
    await reporter.start();
    if (!journal) await validateAll(source.rows, reporter, deps, view, opts, storeId);
    else {
      const planner = new Planner(journal, {
        keyColumn: opts.key,
        allowSimilar: opts.allowSimilar,
        retryUncertain: opts.retryUncertain,
        tokenStore: storeId,
        perRow: reporter.perRow,
      });
      const limiter = createAdaptiveLimiter({ maxConcurrency: opts.concurrency, maxRate: opts.rate, now: deps.now, sleep: deps.sleep });
      reporter.limiter = limiter;
      await sendAll(opts, source.rows, planner, journal, reporter, deps, view, storeId, limiter);
    }
  } finally {
    await journal?.close();
    input.stream.destroy?.();
  }
}

async function validateAll(
  rows: AsyncGenerator<SourceRow>,
  reporter: BatchReport,
  deps: Deps,
  view: BatchView,
  opts: BatchOptions,
  tokenStore: string | undefined,
): Promise<void> {
  let interrupted = false;
  let fatal: unknown;
  try {
    for await (const row of rows) {
      if (deps.signal.aborted) {
        interrupted = true;
        break;
      }
      const checked = validateClaim(row.value, row.issues);
      // The checks a send makes before anything leaves, but the journal's.
      const local = [
        ...(opts.key !== undefined && !row.userKey ? [{ path: opts.key, message: `the --key column ${opts.key} is empty` }] : []),
        ...(checked.ok && tokenStore && checked.claim.storeId !== tokenStore
          ? [{ path: 'storeId', message: storeMismatch(checked.claim.storeId, tokenStore) }]
          : []),
      ];
      await reporter.add(
        row,
        checked.ok && !local.length
          ? { line: row.line, status: 'valid' }
          : { line: row.line, status: 'invalid', errors: [...(checked.ok ? [] : checked.issues), ...local] },
      );
    }
  } catch (error) {
    fatal = error;
  }
  await reporter.finish();
  const c = reporter.counts;
  view.notice(
    `Checked ${c.done.toLocaleString('en-US')} row${c.done === 1 ? '' : 's'}: ${c.valid.toLocaleString('en-US')} valid, ${c.invalid.toLocaleString('en-US')} invalid. Nothing was sent.\n`,
  );
  if (fatal) throw fatal;
  if (interrupted) throw new InterruptedError();
  if (c.invalid > 0)
    throw new PartialFailureError(`${c.invalid} row${c.invalid === 1 ? ' is' : 's are'} invalid.`, 'Fix the rows named above, then run again.');
}

/** A row that is journaled as sending and ready to go. */
interface Ready {
  row: SourceRow;
  plan: ToSend;
  /** Its outcome is journaled: nothing else may be recorded for it. */
  settled?: boolean;
}

/**
 * The pipeline of a batch, composed here: read → check and key (Planner) → send → record (Journal)
 * → report (the verb's BatchReport). Each row passes each stage once.
 */
async function sendAll(
  opts: BatchOptions,
  rows: AsyncGenerator<SourceRow>,
  planner: Planner,
  journal: Journal,
  reporter: BatchReport,
  deps: Deps,
  view: BatchView,
  tokenStore: string | undefined,
  limiter: RequestLimiter,
): Promise<void> {
  let stopError: unknown;
  let fatal: unknown;
  /** The input broke (an unreadable CSV line): the rows before it are still sent and reported. */
  let readError: unknown;
  const journalWrites: Promise<void>[] = [];
  const earlierUncertain: number[] = [];
  let earlierUncertainCount = 0;
  /** Rows whose request is on its way, by line: uncertain if the user stops now. */
  const inFlight = new Set<number>();

  /** Another run took the journal: it may send any row this run has not journaled, so no more leave. */
  const lockLost = () => {
    if (!journal.lost()) return false;
    fatal ??= journal.lostError();
    return true;
  };
  const stopped = () => stopError !== undefined || fatal !== undefined || deps.signal.aborted || lockLost();
  /** Stops a row still waiting for the limiter: Ctrl-C, or the journal's lock taken by another run. */
  const stopSending = AbortSignal.any([deps.signal, journal.lostSignal]);
  const onStop = () => {
    view.notice(`Stopping: waiting for ${inFlight.size} request${inFlight.size === 1 ? '' : 's'} in flight (Ctrl-C again to stop now)\n`);
  };
  if (deps.signal.aborted) onStop();
  else deps.signal.addEventListener('abort', onStop, { once: true });

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
   * Pulls rows until one must be sent: rows settled earlier, invalid and held rows are reported on
   * the way. The returned row is already durable as `sending`.
   */
  const prepare = async (): Promise<Ready | undefined> => {
    try {
      for (let row = await nextRow(); row; row = await nextRow()) {
        const plan = await planner.plan(row);
        if (!plan.send) {
          if (plan.earlierUncertain) {
            earlierUncertainCount++;
            if (earlierUncertain.length < 20) earlierUncertain.push(row.line);
          }
          await reporter.add(row, plan.result);
          continue;
        }
        // Durable before the request leaves: a crash from here on reads as uncertain, never as unsent.
        await journal.record({ key: plan.key, line: row.line, status: 'sending', sim: plan.sim, tag: plan.tag }, plan.robust);
        return { row, plan };
      }
    } catch (error) {
      // The journal or a results file cannot be written: stop; nothing more is sent.
      fatal ??= error;
    }
    return undefined;
  };

  /** Journals a row's outcome, then reports it; a failure to report never touches the journal again. */
  const settle = async (ready: Ready, outcome: SendOutcome): Promise<void> => {
    journalWrites.push(
      journal
        .record({
          key: ready.plan.key,
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
   * Each worker prepares (reads, checks, journals) its next row while its current request is in
   * flight, so the journal's fsync overlaps the network instead of adding to it. A prepared row that
   * is not sent because the batch stops is journaled and reported as not_sent; only a crash leaves
   * it "sending" (uncertain on the next run): at most one row per worker beyond those in flight
   * (a row waiting for the limiter, or the next row of one whose request left).
   */
  const worker = async (): Promise<void> => {
    let current = await prepare();
    try {
      while (current) {
        if (stopped()) {
          await notSent(current);
          return;
        }
        inFlight.add(current.row.line);
        let left: () => void = () => {};
        const leaving = new Promise<void>((resolve) => {
          left = resolve;
        });
        const sending = send(current.plan, current.row, deps, tokenStore, limiter, left, stopSending);
        // The next row is journaled once this one's request leaves, not while it waits for the
        // limiter: a crash leaves at most one journaled, unsent row per worker (uncertain next run).
        await Promise.race([leaving, sending]);
        const upcoming = prepare();
        reporter.counts.sent++;
        const outcome = await sending;
        inFlight.delete(current.row.line);
        await settle(current, outcome);
        current = await upcoming;
      }
    } catch (error) {
      fatal ??= error;
      // Only a row whose request left and whose outcome is not journaled can be uncertain.
      if (current && !current.settled) {
        await journal.record({ key: current.plan.key, line: current.row.line, status: 'uncertain', reason: 'opcli failed while sending it' }).catch(() => {});
      }
    }
  };

  /** A second Ctrl-C: the summary now, the rows in flight listed as uncertain (their entries read as such next time). */
  let onStopNow: (() => void) | undefined;
  const stoppedNow = new Promise<'now'>((resolve) => {
    onStopNow = () => {
      view.summarize(
        reporter,
        journal.path,
        earlierUncertain,
        earlierUncertainCount,
        opts,
        [...inFlight].sort((a, b) => a - b),
      );
      resolve('now');
    };
    if (deps.stopNow.aborted) onStopNow();
    else deps.stopNow.addEventListener('abort', onStopNow, { once: true });
  });

  try {
    const work = (async () => {
      await Promise.all(Array.from({ length: opts.concurrency }, worker));
      await Promise.all(journalWrites);
      return 'done' as const;
    })();
    if ((await Promise.race([work, stoppedNow])) === 'now') {
      work.catch(() => {});
      throw new InterruptedError('Stopped at once: the rows listed as in flight may or may not have been filed.');
    }
  } finally {
    deps.signal.removeEventListener('abort', onStop);
    if (onStopNow) deps.stopNow.removeEventListener('abort', onStopNow);
    if (!deps.stopNow.aborted) {
      await reporter.finish().catch((error) => {
        fatal ??= error;
      });
    }
  }
  lockLost();
  view.summarize(reporter, journal.path, earlierUncertain, earlierUncertainCount, opts, []);
  if (fatal) throw fatal;
  if (stopError) {
    if (stopError instanceof OpcliError) throw stopError;
    throw new OpcliError(`The batch stopped: ${(stopError as Error).message}`);
  }
  if (deps.signal.aborted) {
    view.notice('Interrupted: no new rows were sent; the rows in flight finished and are in the journal. Run the same command to go on.\n');
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
  const unsettled = c.rejected + c.rejectedEarlier + c.invalid + c.held + c.uncertain + c.uncertainEarlier + c.notSent;
  if (unsettled > 0) {
    const hints: string[] = [];
    if (c.invalid + c.rejected + c.rejectedEarlier > 0) {
      hints.push(
        'Fix the invalid and rejected rows named above (in place or anywhere in the file) and run the same command again: a row is known by its content, so rows filed, rejected or uncertain are not sent again, whatever their line.',
      );
    }
    if (c.notSent > 0) hints.push('Rows not sent are sent by the next run.');
    if (c.held > 0) {
      hints.push(
        opts.key
          ? 'Held rows reuse a --key value already filed with other content: check them; a new claim needs its own key.'
          : 'Held rows look like claims filed earlier: check them; --allow-similar files them.',
      );
    }
    if (c.uncertain + c.uncertainEarlier > 0)
      hints.push('Check the uncertain rows (the claims may exist), then run again with --retry-uncertain to send them again.');
    throw new PartialFailureError(`${unsettled.toLocaleString('en-US')} of ${c.done.toLocaleString('en-US')} rows were not filed.`, hints.join('\n'));
  }
}
