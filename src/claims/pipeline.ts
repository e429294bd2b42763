/**
 * The send pipeline of a batch (fast path, guarded by bench/claims-batch.mjs). One claim row goes
 * through each stage once, in this order, and never back to a module it left:
 *
 *   read     reader.ts        rows.next(): a SourceRow (line, value)              SendPipeline.feed
 *   check    plan.ts          Planner.plan: valid, for the token's store
 *   key      plan.ts          identity, and what earlier runs did with it; a row not to send goes
 *                             straight to `report`                                SendPipeline.admit
 *   record   journal.ts       `sending`, durable (one fdatasync per group), and the intent in the
 *            record.ts        record of claims, before the request leaves          SendPipeline.makeDurable
 *   send     send.ts          the limiter's permit, POST /v1/claims/offline        SendPipeline.send
 *   settle   journal.ts       the outcome noted (filed, rejected, uncertain, not_sent), and in
 *            record.ts        the record of claims                                 SendPipeline.settle
 *   report   results.ts       counted in the batch's tally, then shown by the verb's BatchReport
 *
 * The window (send-window.ts) holds the rows between `key` and `send`, journaled in groups ahead of the
 * free slots (one fdatasync for most of a window) while the workers, one per `--concurrency` slot,
 * send the rows already durable. The outage watch (outage.ts) stands between `record` and `send`.
 */
import { setMaxListeners } from 'node:events';
import { NotJournaled } from './journal.js';
import { OutageWatch, probeService } from './outage.js';
import type { NotToSend, Planner, ToSend } from './plan.js';
import type { RowSource, SourceRow } from './reader.js';
import type { PipelineOptions, SendPorts, SendResult } from './pipeline-ports.js';
import type { RowResult } from './results.js';
import { type SendOutcome, sendClaim } from './send.js';
import { type Ready, SendWindow } from './send-window.js';
import type { Durable } from './record-open.js';
import type { NetworkError } from '../core/errors.js';
import { whenAborted } from '../core/timers.js';

const NOT_SENT_REASON = 'the batch stopped before this row was sent';
const OUTAGE_REASON = 'the batch stopped before this row was sent: the service is down';
const JOURNAL_FAILED_REASON = 'not sent: the journal could not be made durable before it; the next run reports it uncertain, but it never left';
const JOURNAL_UNWRITTEN_REASON = 'not sent: the journal could not be written before it; the next run sends it';
const SEND_BUG_REASON = 'opcli failed while sending it';
const RECORD_FAILED_REASON = 'not sent: its intent could not be made durable in the record of claims; the next run sends it';

/** Runs a batch's rows through check, key, record, send, settle and report; prints the summary through the view. */
export class SendPipeline {
  private readonly window: SendWindow;
  private readonly outage: OutageWatch;
  /** Stops a row still waiting for the limiter: Ctrl-C, or the journal's lock taken by another run. */
  private readonly stopSending: AbortSignal;
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
    this.stopSending = AbortSignal.any([ports.signal, ports.journal.lostSignal]);
    // Every slot's row may wait on it at once (a paced start): one listener per slot is no leak, and
    // Node's warning past 10 (MaxListenersExceededWarning at --rate 200/s) would only alarm.
    setMaxListeners(opts.concurrency + 10, this.stopSending);
  }

  /** Sends the source's rows; the summary is printed when this resolves. Throws nothing a row causes. */
  async run(source: RowSource): Promise<SendResult> {
    const { signal, stopNow } = this.ports;
    const stopListening = whenAborted(signal, () => this.stop());
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

  /** The feeder and one worker per slot, until every row is settled and the journal written. */
  private async work(rows: AsyncGenerator<SourceRow>): Promise<'done'> {
    await Promise.all([this.feed(rows), ...Array.from({ length: this.opts.concurrency }, () => this.worker())]);
    await this.ports.journal.flushed().catch((error) => this.fail(error));
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
      // The journal or a results file cannot be written: stop; nothing more is sent.
      this.fail(error);
    } finally {
      // Rows still held are journaled as the window has room; when the batch stopped (or the journal
      // failed) they are settled not_sent without a `sending` entry, so the next run sends them.
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
   * Journals the held rows as `sending` in one group, as many as the window has room for; each
   * becomes ready once durable. When the batch stops, they are settled not_sent instead.
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
    const { journal, record } = this.ports;
    // The record of claims takes the group's intents in one write and one fdatasync, beside the journal's.
    const intents = group.flatMap((item) => (item.plan.intent ? [item.plan.intent] : []));
    const recorded = record && intents.length ? record.intentsDurable(intents) : Promise.resolve();
    // The journal hands every entry of one group the same promise: one wait per run of entries sharing it, not one per row.
    let sending: Promise<void> | undefined;
    let items: Ready[] = [];
    for (const item of group) {
      const { row, plan } = item;
      if (record) item.recorded = plan.intent !== undefined;
      // Durable before the request leaves: a crash from here on reads as uncertain, never as unsent.
      const entry = journal.record({ key: plan.key, line: row.line, status: 'sending', sim: plan.sim, tag: plan.tag }, plan.robust);
      if (entry !== sending && sending !== undefined) this.whenDurable(sending, recorded, items);
      if (entry !== sending) items = [];
      sending = entry;
      items.push(item);
    }
    if (sending !== undefined) this.whenDurable(sending, recorded, items);
    // Written and synced now: this runs at the end of a turn already (SendWindow.admitSoon).
    journal.commit();
  }

  /** Once the journal's group and the record's intents are durable, the rows become ready (or, on failure, are not sent). */
  private whenDurable(sending: Promise<void>, recorded: Promise<Durable>, items: Ready[]): void {
    // Which of the two failed: the record's failure leaves the journal's `sending` entry settled not_sent below.
    let recordFailed = false;
    const recordedOrSays = recorded.catch((error) => {
      recordFailed = true;
      throw error;
    });
    Promise.all([sending, recordedOrSays]).then(
      ([, taken]) => {
        for (const item of items) {
          this.window.synced();
          const why = item.plan.intent && taken?.get(item.plan.intent.issuance);
          if (why) void this.takenByAnother(item, why);
          else this.offer(item);
        }
      },
      (error) => {
        for (const item of items) this.notDurable(item, error, recordFailed);
      },
    );
  }

  /**
   * The journal cannot be made durable: nothing more is sent. This row never left, and says so: a
   * written `sending` line reads as uncertain next time (the journal cannot tell), a line never
   * written leaves the row to the next run.
   */
  private notDurable(item: Ready, error: unknown, recordFailed = false): void {
    this.window.synced();
    const unwritten = error instanceof NotJournaled;
    this.fail(unwritten ? error.failure : error);
    this.drain();
    // Also wakes a feeder waiting for room: it must see the failure and stop, or the batch never ends.
    void this.notSent(item, unwritten ? JOURNAL_UNWRITTEN_REASON : recordFailed ? RECORD_FAILED_REASON : JOURNAL_FAILED_REASON);
  }

  /** A row whose intent another member's run committed first (the record database): held, never sent; the journal settles it not_sent. */
  private takenByAnother(item: Ready, why: string): Promise<void> | undefined {
    item.recorded = false;
    this.leftWindow();
    this.ports.journal.note({ key: item.plan.key, line: item.row.line, status: 'not_sent', reason: why });
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
        this.ports.journal.note({ key: item.plan.key, line, status: 'uncertain', reason: SEND_BUG_REASON });
        this.recordOutcome(item, 'uncertain', undefined, SEND_BUG_REASON);
      }
    }
  }

  /** Journals a row's outcome (written with the next group, not awaited), then reports it. */
  private async settle(item: Ready, outcome: SendOutcome): Promise<void> {
    const r = outcome.result;
    this.ports.journal.note({
      key: item.plan.key,
      line: item.row.line,
      status: r.status as 'filed',
      sourceOrderId: r.sourceOrderId,
      reason: r.error,
      errors: r.errors,
    });
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

  /** The row's outcome in the record of claims (written with the next group of intents, or at the end). */
  private recordOutcome(item: Ready, status: 'filed' | 'rejected' | 'uncertain' | 'not_sent', sourceOrderId?: string, error?: string): void {
    const intent = item.plan.intent;
    const record = this.ports.record;
    if (!record || !intent || !item.recorded) return;
    try {
      record.outcome({ issuance: intent.issuance, key: intent.key, status, sourceOrderId, error });
    } catch (e) {
      this.fail(e);
    }
  }

  /**
   * A row the batch stopped before sending (`journaled`: its `sending` entry was recorded): its
   * outcome journaled so the next run sends it (unless the journal failed), and reported.
   */
  private notSent(item: Ready, reason = this.stopReason(), journaled = true): Promise<void> {
    if (journaled) this.leftWindow();
    else this.window.wake();
    return this.settle(item, { result: { line: item.row.line, status: 'not_sent', error: reason }, stop: false });
  }

  /** A row left the window (its request left, or it was settled without leaving): held rows may be journaled. */
  private leftWindow(): void {
    this.window.left();
    this.makeDurableIfLow();
  }

  /** Every ready or held row waiting for a worker is settled not_sent at once, so a second Ctrl-C finds the journal true. */
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

  /** Another run took the journal: it may send any row this run has not journaled, so no more leave. */
  private lockLost(): boolean {
    const journal = this.ports.journal;
    if (!journal.lost()) return false;
    this.fail(journal.lostError());
    return true;
  }

  /** The first failure that ends the run is the one reported. */
  private fail(error: unknown): void {
    this.fatal ??= error;
  }

  private summarize(source: RowSource, inFlight: number[]): void {
    const summary = this.ports.tally.summary({ unit: source.unit, journal: this.ports.journal.path, inFlight });
    this.ports.view.summarize(summary);
  }
}
