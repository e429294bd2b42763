/**
 * The send pipeline of a batch: read → check and key (Planner) → record `sending` (Journal) → send
 * → record the outcome → report (the verb's BatchReport). Each row passes each stage once.
 *
 * One feeder reads, checks and keys rows ahead of the free slots and queues their `sending` entries;
 * the journal syncs whatever is queued in one write and one fdatasync, and only then does a row
 * become ready. Workers (one per `--concurrency` slot) take ready rows and send them, so the next
 * group is made durable while the current requests are in flight and no slot waits for a whole
 * fsync cycle. The feeder stays at most WINDOW rows ahead: rows journaled whose request has not
 * left (syncing, ready, or waiting for the limiter). A crash leaves those `sending` without having
 * sent them, and the next run reports them uncertain (never resent): that bound is the price of
 * overlapping the fsync with the network, and a lower `--concurrency` lowers it.
 */
import type { Deps } from '../deps.js';
import type { RequestLimiter } from '../http/adaptive.js';
import type { Journal } from './journal.js';
import type { Planner, ToSend } from './plan.js';
import type { SourceRow } from './reader.js';
import type { BatchReport, BatchView } from './results.js';
import { type SendOutcome, send } from './send.js';

/** A row journaled as `sending` (durable), waiting for a worker. */
interface Ready {
  row: SourceRow;
  plan: ToSend;
}

/** What the run came to, for the verdict (batch.ts). */
export interface SendResult {
  /** A failure that must end the run (the journal or a results file cannot be written, the lock lost). */
  fatal?: unknown;
  /** A failure every row would meet (401, connection refused): the batch stopped sending. */
  stopError?: unknown;
  /** The input broke at a line: rows before it were handled. */
  readError?: unknown;
  /** Ended by a second Ctrl-C: the summary is already printed. */
  stoppedNow: boolean;
}

export interface PipelineOptions {
  concurrency: number;
  json: boolean;
}

const NOT_SENT_REASON = 'the batch stopped before this row was sent';
const JOURNAL_FAILED_REASON = 'not sent: the journal could not be made durable before it; the next run reports it uncertain, but it never left';

/** Runs the send pipeline over `rows`; prints the summary through `view`. Throws nothing a row causes. */
export async function sendAll(
  opts: PipelineOptions,
  rows: AsyncGenerator<SourceRow>,
  planner: Planner,
  journal: Journal,
  reporter: BatchReport,
  deps: Deps,
  view: BatchView,
  tokenStore: string | undefined,
  limiter: RequestLimiter,
): Promise<SendResult> {
  let stopError: unknown;
  let fatal: unknown;
  let readError: unknown;
  const earlierUncertain: number[] = [];
  let earlierUncertainCount = 0;
  /** Rows a worker holds (waiting for the limiter or in flight), by line: uncertain if the user stops now. */
  const inFlight = new Set<number>();
  /** Rows journaled as `sending` whose request has not left: the feeder stays under `window`. */
  const window = opts.concurrency;
  let unsent = 0;
  /** `sending` entries queued whose fsync has not returned. */
  let syncing = 0;
  let feeding = true;
  const ready: Ready[] = [];
  const takers: ((item: Ready | undefined) => void)[] = [];
  let wakeFeeder: (() => void) | undefined;

  /** Another run took the journal: it may send any row this run has not journaled, so no more leave. */
  const lockLost = () => {
    if (!journal.lost()) return false;
    fatal ??= journal.lostError();
    return true;
  };
  const stopped = () => stopError !== undefined || fatal !== undefined || deps.signal.aborted || lockLost();
  /** Stops a row still waiting for the limiter: Ctrl-C, or the journal's lock taken by another run. */
  const stopSending = AbortSignal.any([deps.signal, journal.lostSignal]);

  /** The feeder, if it waits for room in the window, looks again (and stops when the batch does). */
  const wake = () => {
    const resume = wakeFeeder;
    wakeFeeder = undefined;
    resume?.();
  };
  /** A row left the window (its request left, or it was settled without leaving): the feeder may read on. */
  const freed = () => {
    unsent--;
    wake();
  };
  /** The workers stop asking once nothing more can become ready. */
  const endIfDone = () => {
    if (feeding || syncing > 0 || ready.length > 0) return;
    for (const take of takers.splice(0)) take(undefined);
  };

  /** Journals a row's outcome (written with the next group, not awaited), then reports it. */
  const settle = async (item: Ready, outcome: SendOutcome): Promise<void> => {
    const r = outcome.result;
    journal.note({ key: item.plan.key, line: item.row.line, status: r.status as 'filed', sourceOrderId: r.sourceOrderId, reason: r.error, errors: r.errors });
    if (outcome.stop) stopError ??= outcome.error;
    try {
      const output = reporter.add(item.row, r);
      if (output) await output;
    } catch (error) {
      fatal ??= error;
    }
  };

  /** A journaled row the batch stopped before sending: journaled so the next run sends it (unless the journal failed), and reported. */
  const notSent = (item: Ready, reason = NOT_SENT_REASON): Promise<void> => {
    freed();
    return settle(item, { result: { line: item.row.line, status: 'not_sent', error: reason }, stop: false });
  };

  /** Every ready row waiting for a worker is settled not_sent at once, so a second Ctrl-C finds the journal true. */
  const drainReady = () => {
    for (const item of ready.splice(0)) void notSent(item);
    endIfDone();
  };

  /** A row became durable: to a waiting worker, to the queue, or (stopping) settled not_sent. */
  const offer = (item: Ready) => {
    if (stopped()) void notSent(item);
    else {
      const take = takers.shift();
      if (take) take(item);
      else ready.push(item);
    }
    endIfDone();
  };

  const take = (): Ready | undefined | Promise<Ready | undefined> => {
    const item = ready.shift();
    if (item) return item;
    if (!feeding && syncing === 0) return undefined;
    return new Promise((resolve) => takers.push(resolve));
  };

  const onStop = () => {
    view.notice(`Stopping: waiting for ${inFlight.size} request${inFlight.size === 1 ? '' : 's'} in flight (Ctrl-C again to stop now)\n`);
    drainReady();
    wake();
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

  /** Reads, checks and keys rows while the window has room; rows not to send are reported on the way. */
  const feed = async (): Promise<void> => {
    try {
      for (;;) {
        if (unsent >= window) {
          await new Promise<void>((resolve) => {
            wakeFeeder = resolve;
          });
          if (stopped()) break;
          continue;
        }
        const row = await nextRow();
        if (!row) break;
        const plan = await planner.plan(row);
        if (!plan.send) {
          if (plan.earlierUncertain) {
            earlierUncertainCount++;
            if (earlierUncertain.length < 20) earlierUncertain.push(row.line);
          }
          const output = reporter.add(row, plan.result);
          if (output) await output;
          continue;
        }
        unsent++;
        syncing++;
        const item: Ready = { row, plan };
        // Durable before the request leaves: a crash from here on reads as uncertain, never as unsent.
        journal.record({ key: plan.key, line: row.line, status: 'sending', sim: plan.sim, tag: plan.tag }, plan.robust).then(
          () => {
            syncing--;
            offer(item);
          },
          (error) => {
            // The journal cannot be made durable: nothing more is sent. This row never left, and
            // says so (its written `sending` line reads as uncertain next time: the journal cannot tell).
            syncing--;
            fatal ??= error;
            drainReady();
            // Also wakes a feeder waiting for room: it must see the failure and stop, or the batch never ends.
            void notSent(item, JOURNAL_FAILED_REASON);
          },
        );
      }
    } catch (error) {
      // The journal or a results file cannot be written: stop; nothing more is sent.
      fatal ??= error;
    } finally {
      feeding = false;
      endIfDone();
    }
  };

  const worker = async (): Promise<void> => {
    for (let item = await take(); item; item = await take()) {
      if (stopped()) {
        await notSent(item);
        continue;
      }
      const line = item.row.line;
      let left = false;
      let settled = false;
      inFlight.add(line);
      try {
        const outcome = await send(
          item.plan,
          item.row,
          deps,
          tokenStore,
          limiter,
          // Called on each attempt's permit (a 429 is asked again): the row left on the first.
          () => {
            if (left) return;
            left = true;
            reporter.counts.sent++;
            freed();
          },
          stopSending,
        );
        inFlight.delete(line);
        // Stopped while it waited for the limiter, or refused before the limiter let it go.
        if (!left) freed();
        settled = true;
        await settle(item, outcome);
      } catch (error) {
        // A bug, not a row's outcome (send never throws): stop; a row that left is uncertain.
        fatal ??= error;
        inFlight.delete(line);
        if (!settled) {
          if (!left) freed();
          journal.note({ key: item.plan.key, line, status: 'uncertain', reason: 'opcli failed while sending it' });
        }
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
      await Promise.all([feed(), ...Array.from({ length: opts.concurrency }, worker)]);
      await journal.flushed().catch((error) => {
        fatal ??= error;
      });
      return 'done' as const;
    })();
    if ((await Promise.race([work, stoppedNow])) === 'now') {
      work.catch(() => {});
      return { stoppedNow: true };
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
  return { fatal, stopError, readError, stoppedNow: false };
}
