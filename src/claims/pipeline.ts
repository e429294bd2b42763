/**
 * The send pipeline of a batch (fast path, guarded by bench/claims-batch.mjs). One claim row goes
 * through each stage once, in this order, and never back to a module it left:
 *
 *   read     reader.ts        rows.next(): a SourceRow (line, value)              SendPipeline.feed
 *   check    plan.ts          Planner.plan: valid, for the token's store
 *   key      plan.ts          identity, and what earlier runs did with it; a row not to send goes
 *                             straight to `report`                                SendPipeline.admit
 *   record   record.ts        the intent in the record of claims, durable (one write and one
 *                             fdatasync per group) before the request leaves      SendPipeline.makeDurable
 *   send     send.ts          the limiter's permit, POST /v1/claims/offline        SendPipeline.send
 *   settle   record.ts        the outcome (filed, rejected, uncertain, not_sent)   SendPipeline.settle
 *   report   results.ts       counted in the batch's tally, then shown by the verb's BatchReport
 *
 * The window (send-window.ts) holds the rows between `key` and `send`, recorded in groups ahead of the
 * free slots (one fdatasync for most of a window) while the workers, one per `--concurrency` slot,
 * send the rows already durable. The outage watch (outage.ts) stands between `record` and `send`.
 */
import { setMaxListeners } from 'node:events';
import { OpcliError } from '../core/errors.js';
import { OutageWatch, probeService } from './outage.js';
import type { NotToSend, Planner, ToSend } from './plan.js';
import type { NewIntent } from './record.js';
import type { RowSource, SourceRow } from './reader.js';
import type { PipelineOptions, SendPorts, SendResult } from './pipeline-ports.js';
import type { RowResult } from './results.js';
import { type SendOutcome, sendClaim } from './send.js';
import { type Ready, SendWindow } from './send-window.js';
import type { NetworkError } from '../core/errors.js';
import { whenAborted } from '../core/timers.js';

const NOT_SENT_REASON = 'the batch stopped before this row was sent';
const OUTAGE_REASON = 'the batch stopped before this row was sent: the service is down';
const RECORD_FAILED_REASON = 'not sent: the record of claims could not be made durable before it; it never left';
/** How often, at most, the pipeline asks the file system whether the record's lock is still this run's. */
const LOST_CHECK_MS = 200;
const SEND_BUG_REASON = 'opcli failed while sending it';

/** Runs a batch's rows through check, key, record, send, settle and report; prints the summary through the view. */
export class SendPipeline {
  private readonly window: SendWindow;
  private readonly outage: OutageWatch;
  /** Stops a row still waiting for the limiter: Ctrl-C, or the record's lock taken by another run. */
  private readonly stopSending: AbortSignal;
  /** Aborted once another run is seen to have taken the record's lock: no request may leave after. */
  private readonly lockTaken = new AbortController();
  private lockCheckedAt = Number.NEGATIVE_INFINITY;
  /** Rows a worker holds (waiting for the limiter or in flight), by line: uncertain if the user stops now. */
  private readonly inFlight = new Set<number>();
  private readonly admitNow = () => this.makeDurable();
  private fatal: unknown;
  private stopError: unknown;
  private readError: unknown;

  constructor(
    private readonly opts: PipelineOptions,
    private readonly ports: SendPorts,
    private readonly planner: Planner,
  ) {
    this.window = new SendWindow(opts.concurrency);
    // Answers showing the service down hold the rows not sent yet (outage.ts).
    this.outage = new OutageWatch({
      probe: () => probeService(ports.http, ports.signal),
      waitMs: opts.waitForServiceMs,
      now: ports.now,
      sleep: ports.sleep,
      signal: ports.signal,
      notice: (text) => ports.view.notice(text),
    });
    this.stopSending = AbortSignal.any([ports.signal, this.lockTaken.signal]);
    // Every slot's row may wait on it at once (a paced start): one listener per slot is no leak, and
    // Node's warning past 10 (MaxListenersExceededWarning at --rate 200/s) would only alarm.
    setMaxListeners(opts.concurrency + 10, this.stopSending);
  }

  /** Sends the source's rows; the summary is printed when this resolves. Throws nothing a row causes. */
  async run(source: RowSource): Promise<SendResult> {
    const { signal, stopNow } = this.ports;
    const stopListening = whenAborted(signal, () => this.stop());
    // Checked on a timer too, so a row waiting for the limiter (a long 429 pause) is stopped as well.
    const lockPoll = setInterval(() => this.lockLost(), LOST_CHECK_MS);
    lockPoll.unref();
    /** A second Ctrl-C: the summary now, the rows in flight listed as uncertain (their entries read as such next time). */
    let stopNowListening = () => {};
    const stoppedNow = new Promise<'now'>((resolve) => {
      stopNowListening = whenAborted(stopNow, () => {
        this.summarize(
          source,
          [...this.inFlight].sort((a, b) => a - b),
        );
        resolve('now');
      });
    });
    let unreachable: NetworkError | undefined;
    try {
      const work = this.work(source.rows);
      if ((await Promise.race([work, stoppedNow])) === 'now') {
        work.catch(() => {});
        return { stoppedNow: true };
      }
    } finally {
      clearInterval(lockPoll);
      stopListening();
      stopNowListening();
      // No request reached the service, nothing else ended the run: one line says it (batch.ts), not a line per row.
      if (this.fatal === undefined && this.readError === undefined && !signal.aborted) unreachable = this.outage.neverReached();
      if (!stopNow.aborted) await this.ports.report.finish({ unreachable: unreachable !== undefined }).catch((error) => this.fail(error));
    }
    this.lockLost();
    this.stopError ??= this.outage.stopError;
    if (unreachable && this.fatal === undefined) return { unreachable, stoppedNow: false };
    this.summarize(source, []);
    return { fatal: this.fatal, stopError: this.stopError, readError: this.readError, stoppedNow: false };
  }

  /** The feeder and one worker per slot, until every row is settled. */
  private async work(rows: AsyncGenerator<SourceRow>): Promise<'done'> {
    await Promise.all([this.feed(rows), ...Array.from({ length: this.opts.concurrency }, () => this.worker())]);
    return 'done';
  }

  /** Read, check, key: rows are planned while the window has room; rows not to send are reported on the way. */
  private async feed(rows: AsyncGenerator<SourceRow>): Promise<void> {
    try {
      for (;;) {
        if (this.window.full()) {
          await this.window.waitForRoom();
          if (this.stopped()) break;
          continue;
        }
        const row = await this.nextRow(rows);
        if (!row) break;
        const output = this.admit(row, await this.planner.plan(row));
        if (output) await output;
      }
    } catch (error) {
      // The record or a results file cannot be written: stop; nothing more is sent.
      this.fail(error);
    } finally {
      // Rows still held are recorded as the window has room; when the batch stopped (or the record
      // failed) they are settled not_sent without an intent, so the next run sends them.
      this.makeDurable();
      this.window.fed();
      this.window.endIfDone();
    }
  }

  /** The next row, or undefined at the end of the input, when stopping, or when the input broke. */
  private async nextRow(rows: AsyncGenerator<SourceRow>): Promise<SourceRow | undefined> {
    // Backpressure: while the results waiting for an earlier row are many, read no further.
    const room = this.ports.report.room();
    if (room) await room;
    if (this.stopped()) return undefined;
    try {
      const next = await rows.next();
      return next.done || this.stopped() ? undefined : next.value;
    } catch (error) {
      // A reader error comes after every row read before it; later calls get `done`.
      this.readError ??= error;
      return undefined;
    }
  }

  /** A planned row: held in the window to be sent, or (settled, invalid, held back) reported now. */
  private admit(row: SourceRow, plan: ToSend | NotToSend): Promise<void> | undefined {
    if (!plan.send) {
      if (plan.earlierUncertain) this.ports.tally.uncertainEarlier(row.line);
      return this.report(row, plan.result);
    }
    this.window.hold({ row, plan });
    this.makeDurableIfLow();
    return undefined;
  }

  private makeDurableIfLow(): void {
    this.window.admitSoon(this.admitNow);
  }

  /**
   * Records the held rows' intents in one group (one write, one fdatasync), as many as the window has
   * room for; each becomes ready once durable. When the batch stops, they are settled not_sent instead.
   */
  private makeDurable(): void {
    if (this.stopped()) {
      this.drain();
      return;
    }
    const group = this.window.admit();
    if (group.length === 0) return;
    // The feeder may plan more.
    this.window.wake();
    // Durable before the request leaves: a crash from here on reads as uncertain, never as unsent.
    const intents = group.map((item) => {
      item.recorded = true;
      return item.plan.intent as NewIntent;
    });
    this.ports.record.intentsDurable(intents).then(
      (taken) => {
        for (const item of group) {
          this.window.synced();
          const why = taken?.get(item.plan.intent?.issuance as string);
          if (why) void this.takenByAnother(item, why);
          else this.offer(item);
        }
      },
      (error) => {
        for (const item of group) this.notDurable(item, error);
      },
    );
  }

  /**
   * The record cannot be made durable: nothing more is sent. This row never left, and says so: its
   * outcome not_sent follows its intent, so the next run sends it (and reads it uncertain if that
   * outcome could not be written either).
   */
  private notDurable(item: Ready, error: unknown): void {
    this.window.synced();
    // The team's database says so in its own one line (src/record-pg/errors.ts); a file's failure is worded here.
    this.fail(
      error instanceof OpcliError
        ? error
        : new OpcliError(`Cannot write the record of claims ${this.ports.record.path}: ${(error as Error).message}`, {
            hint: 'Free disk space, then run the same command again; rows after this one were not sent.',
            cause: error,
          }),
    );
    this.drain();
    // Also wakes a feeder waiting for room: it must see the failure and stop, or the batch never ends.
    void this.notSent(item, RECORD_FAILED_REASON);
  }

  /** A row whose intent another member's run committed first (the record database): held, never sent, and no outcome of this run's. */
  private takenByAnother(item: Ready, why: string): Promise<void> | undefined {
    item.recorded = false;
    this.leftWindow();
    const output = this.report(item.row, { line: item.row.line, status: 'held', error: why });
    this.window.endIfDone();
    return output;
  }

  /** A row became durable: to a waiting worker, to the queue, or (stopping) settled not_sent. */
  private offer(item: Ready): void {
    if (this.stopped()) void this.notSent(item);
    else this.window.give(item);
    this.window.endIfDone();
  }

  /** The next durable row for a worker; undefined once nothing more will be. */
  private take(): Ready | undefined | Promise<Ready | undefined> {
    const item = this.window.next();
    this.makeDurableIfLow();
    return item ?? this.window.wait();
  }

  /** One `--concurrency` slot: sends durable rows one after the other. */
  private async worker(): Promise<void> {
    for (let item = await this.take(); item; item = await this.take()) await this.send(item);
  }

  /** Sends one durable row past the outage gate, then settles it. */
  private async send(item: Ready): Promise<void> {
    if (this.stopped()) return this.notSent(item);
    const entered = this.outage.enter();
    if (entered !== true && !(await entered)) return this.notSent(item);
    if (this.stopped()) {
      this.outage.leave(undefined, false);
      return this.notSent(item);
    }
    const line = item.row.line;
    let gone = false;
    let settled = false;
    try {
      const outcome = await sendClaim(item.plan, item.row, this.ports.api, {
        tokenStore: this.opts.tokenStore,
        limiter: this.ports.limiter,
        // Called on each attempt's permit (a 429 is asked again): the row left on the first.
        onLeave: () => {
          if (gone) return;
          gone = true;
          // In flight from here on: a row still waiting for its turn when the batch stops never left.
          this.inFlight.add(line);
          this.ports.tally.sent();
          this.leftWindow();
        },
        stop: this.stopSending,
      });
      this.inFlight.delete(line);
      this.outage.leave(outcome.error, outcome.result.status === 'filed' || outcome.error !== undefined);
      // Stopped while it waited for the limiter, or refused before the limiter let it go.
      if (!gone) this.leftWindow();
      settled = true;
      await this.settle(item, outcome);
    } catch (error) {
      // A bug, not a row's outcome (send never throws): stop; a row that left is uncertain.
      this.fail(error);
      this.inFlight.delete(line);
      if (!settled) {
        this.outage.leave(undefined, false);
        if (!gone) this.leftWindow();
        this.recordOutcome(item, 'uncertain', undefined, SEND_BUG_REASON);
      }
    }
  }

  /** Records a row's outcome (written at the end of the turn, not awaited), then reports it. */
  private async settle(item: Ready, outcome: SendOutcome): Promise<void> {
    const r = outcome.result;
    this.recordOutcome(item, r.status as 'filed', r.sourceOrderId, r.error);
    if (outcome.stop) {
      this.stopError ??= outcome.error;
      this.outage.release();
    }
    try {
      const output = this.report(item.row, r);
      if (output) await output;
    } catch (error) {
      this.fail(error);
    }
  }

  /** Counts a row's outcome in the batch's tally and hands it to the display. */
  private report(row: SourceRow, result: RowResult): Promise<void> | undefined {
    this.ports.tally.count(result);
    return this.ports.report.add(row, result);
  }

  /** The row's outcome in the record of claims (`recorded`: its intent was written), at the end of the turn. */
  private recordOutcome(item: Ready, status: 'filed' | 'rejected' | 'uncertain' | 'not_sent', sourceOrderId?: string, error?: string): void {
    const intent = item.plan.intent;
    const record = this.ports.record;
    if (!intent || !item.recorded) return;
    try {
      record.outcome({ issuance: intent.issuance, key: intent.key, status, sourceOrderId, error });
    } catch (e) {
      this.fail(e);
    }
  }

  /**
   * A row the batch stopped before sending (`recorded`: its intent was written): its outcome
   * recorded so the next run sends it, and reported.
   */
  private notSent(item: Ready, reason = this.stopReason(), recorded = true): Promise<void> {
    if (recorded) this.leftWindow();
    else this.window.wake();
    return this.settle(item, { result: { line: item.row.line, status: 'not_sent', error: reason }, stop: false });
  }

  /** A row left the window (its request left, or it was settled without leaving): held rows may be recorded. */
  private leftWindow(): void {
    this.window.left();
    this.makeDurableIfLow();
  }

  /** Every ready or held row waiting for a worker is settled not_sent at once, so a second Ctrl-C finds the record true. */
  private drain(): void {
    const { journaled, planned } = this.window.drain();
    for (const item of journaled) void this.notSent(item);
    for (const item of planned) void this.notSent(item, this.stopReason(), false);
    this.window.endIfDone();
  }

  /** The first Ctrl-C: no new row leaves; the rows in flight finish. */
  private stop(): void {
    this.outage.release();
    const n = this.inFlight.size;
    if (n > 0) this.ports.view.notice(`Stopping: waiting for ${n} request${n === 1 ? '' : 's'} in flight (Ctrl-C again to stop now)\n`);
    this.drain();
    this.window.wake();
  }

  private stopped(): boolean {
    return this.stopError !== undefined || this.fatal !== undefined || this.outage.stopError !== undefined || this.ports.signal.aborted || this.lockLost();
  }

  private stopReason(): string {
    return this.outage.stopError ? OUTAGE_REASON : NOT_SENT_REASON;
  }

  /**
   * Another run took the record's lock: it may send any row this run has not settled, so no more
   * leave. Asked of the file system at most every LOST_CHECK_MS; once lost, always lost.
   */
  private lockLost(): boolean {
    if (this.lockTaken.signal.aborted) return true;
    const now = performance.now();
    if (now - this.lockCheckedAt < LOST_CHECK_MS) return false;
    this.lockCheckedAt = now;
    const record = this.ports.record;
    if (!record.lost()) return false;
    this.lockTaken.abort();
    this.fail(
      new OpcliError(`The lock on the record of claims ${record.path} was taken by another run; this run stopped sending.`, {
        hint: 'Rows not yet sent were not sent. Let the other run finish, then run the same command again: filed rows are skipped.',
      }),
    );
    return true;
  }

  /** The first failure that ends the run is the one reported. */
  private fail(error: unknown): void {
    this.fatal ??= error;
  }

  private summarize(source: RowSource, inFlight: number[]): void {
    const summary = this.ports.tally.summary({ unit: source.unit, journal: this.ports.batch, inFlight });
    this.ports.view.summarize(summary);
  }
}
