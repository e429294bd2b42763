/**
 * The send pipeline of a batch: read → check and key (Planner) → record `sending` (Journal) → send
 * → record the outcome → report (the verb's BatchReport). Each row passes each stage once.
 *
 * One feeder reads, checks and keys rows ahead of the free slots, and their `sending` entries are
 * queued; the journal syncs whatever is queued in one write and one fdatasync, and only then does a
 * row become ready. Workers (one per `--concurrency` slot) take ready rows and send them, so the
 * next group is made durable while the current requests are in flight and no slot waits for a
 * whole fsync cycle. At most WINDOW rows are journaled whose request has not left (syncing, ready,
 * or waiting for the limiter). A crash leaves those `sending` without having
 * sent them, and the next run reports them uncertain (never resent): that bound is the price of
 * overlapping the fsync with the network, and a lower `--concurrency` lowers it.
 *
 * Rows planned while enough are ready or syncing are held back (at most WINDOW of them) and
 * journaled together once the ready ones run low (lowWaterMark), as many as the window has room
 * for: one fdatasync then covers most of a window instead of the few rows one turn of the event
 * loop planned. A held row changes nothing a crash can leave: it is not journaled, so it was not
 * sent, and the next run sends it.
 */
import { setMaxListeners } from 'node:events';
import type { Deps } from '../deps.js';
import type { RequestLimiter } from '../http/adaptive.js';
import { type Journal, NotJournaled } from './journal.js';
import { OutageWatch, probeResult } from './outage.js';
import { PATHS } from '../api/service.js';
import type { Planner, ToSend } from './plan.js';
import type { ClaimRecord } from './record.js';
import type { SourceRow } from './reader.js';
import type { BatchReport, BatchView } from './results.js';
import { type SendOutcome, send } from './send.js';

/** A row journaled as `sending` (durable), waiting for a worker. */
interface Ready {
  row: SourceRow;
  plan: ToSend;
  /** Its intent was written to the record of claims: its outcome goes there too. */
  recorded?: boolean;
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
  /** `--wait-for-service`: how long an outage may last before the batch stops; undefined stops at once. */
  waitForServiceMs?: number;
  /** Rows printed as JSON lines: the summary is their last line. */
  jsonl?: boolean;
}

const NOT_SENT_REASON = 'the batch stopped before this row was sent';
const OUTAGE_REASON = 'the batch stopped before this row was sent: the service is down';
const JOURNAL_FAILED_REASON = 'not sent: the journal could not be made durable before it; the next run reports it uncertain, but it never left';
const JOURNAL_UNWRITTEN_REASON = 'not sent: the journal could not be written before it; the next run sends it';

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
  record?: ClaimRecord,
): Promise<SendResult> {
  let stopError: unknown;
  let fatal: unknown;
  let readError: unknown;
  const earlierUncertain: number[] = [];
  let earlierUncertainCount = 0;
  /** Rows a worker holds (waiting for the limiter or in flight), by line: uncertain if the user stops now. */
  const inFlight = new Set<number>();
  /** Rows journaled as `sending` whose request has not left: recordHeld keeps them at most `window`. */
  const window = opts.concurrency;
  let unsent = 0;
  /** `sending` entries queued whose fsync has not returned. */
  let syncing = 0;
  let feeding = true;
  const ready: Ready[] = [];
  /** Rows planned to send, not yet journaled (at most `window`): recorded together once the ready rows run low. */
  const held: Ready[] = [];
  const lowWater = lowWaterMark(window);
  const takers: ((item: Ready | undefined) => void)[] = [];
  let wakeFeeder: (() => void) | undefined;

  /** Another run took the journal: it may send any row this run has not journaled, so no more leave. */
  const lockLost = () => {
    if (!journal.lost()) return false;
    fatal ??= journal.lostError();
    return true;
  };
  // Answers showing the service down hold the rows not sent yet (src/claims/outage.ts).
  const outage = new OutageWatch({
    probe: async () => {
      try {
        await (await deps.http()).request({ method: 'GET', url: PATHS.orders, query: { size: 1 }, retry: 'never', signal: deps.signal });
        return { up: true };
      } catch (error) {
        return probeResult(error);
      }
    },
    waitMs: opts.waitForServiceMs,
    now: deps.now,
    sleep: deps.sleep,
    signal: deps.signal,
    notice: (text) => view.notice(text),
  });
  const stopReason = () => (outage.stopError ? OUTAGE_REASON : NOT_SENT_REASON);
  const stopped = () => stopError !== undefined || fatal !== undefined || outage.stopError !== undefined || deps.signal.aborted || lockLost();
  /** Stops a row still waiting for the limiter: Ctrl-C, or the journal's lock taken by another run. */
  const stopSending = AbortSignal.any([deps.signal, journal.lostSignal]);
  // Every slot's row may wait on it at once (a paced start): one listener per slot is no leak, and
  // Node's warning past 10 (MaxListenersExceededWarning at --rate 200/s) would only alarm.
  setMaxListeners(opts.concurrency + 10, stopSending);

  /** The feeder, if it waits for room, looks again (and stops when the batch does). */
  const wake = () => {
    const resume = wakeFeeder;
    wakeFeeder = undefined;
    resume?.();
  };
  /** A row left the window (its request left, or it was settled without leaving): held rows may be journaled. */
  const freed = () => {
    unsent--;
    recordIfLow();
  };
  /** The workers stop asking once nothing more can become ready. */
  const endIfDone = () => {
    if (feeding || held.length > 0 || syncing > 0 || ready.length > 0) return;
    for (const take of takers.splice(0)) take(undefined);
  };

  /** The row's outcome in the record of claims (written with the next group of intents, or at the end). */
  const recordOutcome = (item: Ready, status: 'filed' | 'rejected' | 'uncertain' | 'not_sent', sourceOrderId?: string, error?: string) => {
    const intent = item.plan.intent;
    if (!record || !intent || !item.recorded) return;
    try {
      record.outcome({ issuance: intent.issuance, key: intent.key, status, sourceOrderId, error });
    } catch (e) {
      fatal ??= e;
    }
  };

  /** Journals a row's outcome (written with the next group, not awaited), then reports it. */
  const settle = async (item: Ready, outcome: SendOutcome): Promise<void> => {
    const r = outcome.result;
    journal.note({ key: item.plan.key, line: item.row.line, status: r.status as 'filed', sourceOrderId: r.sourceOrderId, reason: r.error, errors: r.errors });
    recordOutcome(item, r.status as 'filed', r.sourceOrderId, r.error);
    if (outcome.stop) {
      stopError ??= outcome.error;
      outage.release();
    }
    try {
      const output = reporter.add(item.row, r);
      if (output) await output;
    } catch (error) {
      fatal ??= error;
    }
  };

  /**
   * A row the batch stopped before sending (`journaled`: its `sending` entry was recorded): its
   * outcome journaled so the next run sends it (unless the journal failed), and reported.
   */
  const notSent = (item: Ready, reason = stopReason(), journaled = true): Promise<void> => {
    if (journaled) freed();
    else wake();
    return settle(item, { result: { line: item.row.line, status: 'not_sent', error: reason }, stop: false });
  };

  /** Every ready or held row waiting for a worker is settled not_sent at once, so a second Ctrl-C finds the journal true. */
  const drainReady = () => {
    const journaled = ready.splice(0);
    const planned = held.splice(0);
    for (const item of journaled) void notSent(item);
    for (const item of planned) void notSent(item, stopReason(), false);
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

  /**
   * Journals the held rows as `sending` in one group, as many as the window has room for; each
   * becomes ready once durable. When the batch stops, they are settled not_sent instead.
   */
  const recordHeld = () => {
    if (stopped()) return drainReady();
    const group = held.splice(0, window - unsent);
    if (group.length === 0) return;
    // The feeder may plan more.
    wake();
    // The record of claims takes the group's intents in one write and one fdatasync, beside the journal's.
    const intents = group.flatMap((item) => (item.plan.intent ? [item.plan.intent] : []));
    const recorded = record && intents.length ? record.intentsDurable(intents) : Promise.resolve();
    if (record) for (const item of group) item.recorded = item.plan.intent !== undefined;
    for (const item of group) {
      const { row, plan } = item;
      unsent++;
      syncing++;
      // Durable before the request leaves: a crash from here on reads as uncertain, never as unsent.
      Promise.all([journal.record({ key: plan.key, line: row.line, status: 'sending', sim: plan.sim, tag: plan.tag }, plan.robust), recorded]).then(
        () => {
          syncing--;
          offer(item);
        },
        (error) => {
          // The journal cannot be made durable: nothing more is sent. This row never left, and
          // says so: a written `sending` line reads as uncertain next time (the journal cannot
          // tell), a line never written leaves the row to the next run.
          syncing--;
          const unwritten = error instanceof NotJournaled;
          fatal ??= unwritten ? error.failure : error;
          drainReady();
          // Also wakes a feeder waiting for room: it must see the failure and stop, or the batch never ends.
          void notSent(item, unwritten ? JOURNAL_UNWRITTEN_REASON : JOURNAL_FAILED_REASON);
        },
      );
    }
  };
  /** The held rows are journaled once the rows ready or on their way to it are fewer than the low-water mark. */
  const recordIfLow = () => {
    if (held.length > 0 && ready.length + syncing < lowWater) recordHeld();
  };

  const take = (): Ready | undefined | Promise<Ready | undefined> => {
    const item = ready.shift();
    recordIfLow();
    if (item) return item;
    if (!feeding && held.length === 0 && syncing === 0) return undefined;
    return new Promise((resolve) => takers.push(resolve));
  };

  const onStop = () => {
    outage.release();
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
        if (held.length >= window) {
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
        held.push({ row, plan });
        recordIfLow();
      }
    } catch (error) {
      // The journal or a results file cannot be written: stop; nothing more is sent.
      fatal ??= error;
    } finally {
      // Rows still held are journaled as the window has room; when the batch stopped (or the journal
      // failed) they are settled not_sent without a `sending` entry, so the next run sends them.
      recordHeld();
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
      const entered = outage.enter();
      if (entered !== true && !(await entered)) {
        await notSent(item);
        continue;
      }
      if (stopped()) {
        outage.leave(undefined, false);
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
        outage.leave(outcome.error, outcome.result.status === 'filed' || outcome.error !== undefined);
        // Stopped while it waited for the limiter, or refused before the limiter let it go.
        if (!left) freed();
        settled = true;
        await settle(item, outcome);
      } catch (error) {
        // A bug, not a row's outcome (send never throws): stop; a row that left is uncertain.
        fatal ??= error;
        inFlight.delete(line);
        if (!settled) {
          outage.leave(undefined, false);
          if (!left) freed();
          journal.note({ key: item.plan.key, line, status: 'uncertain', reason: 'opcli failed while sending it' });
          recordOutcome(item, 'uncertain', undefined, 'opcli failed while sending it');
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
  stopError ??= outage.stopError;
  view.summarize(reporter, journal.path, earlierUncertain, earlierUncertainCount, opts, []);
  return { fatal, stopError, readError, stoppedNow: false };
}

/**
 * How few rows may be ready (or syncing) before the held ones are journaled: a quarter of the
 * window, at least one. Lower, a slot more often waits for an fdatasync; higher, each fdatasync
 * covers fewer rows.
 */
export function lowWaterMark(window: number): number {
  return Math.max(1, Math.ceil(window / 4));
}
