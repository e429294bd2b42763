/**
 * The send pipeline of a batch (fast path, bench/claims-batch.mjs; its stages: ARCHITECTURE.md,
 * "Three flows"). The window (SendWindow) holds the rows between `key` and `send`, recorded in
 * groups ahead of the free slots, while one worker per `--concurrency` slot sends the rows already
 * durable; the outage watch (OutageWatch) stands between `record` and `send`.
 */
import { setMaxListeners } from 'node:events';
import { OpcliError, NetworkError, ApiError, AuthError, RedirectError, UsageError, ExitCode, TimeoutError } from '../core/errors.js';
import { compiled, isLater, isStoreMismatch, type NotToSend, type Planner, type RowResult, type RowStatus, storeMismatch, type ToSend } from './plan.js';
import type { ClaimsRecord, NewIntent } from './record.js';
import type { RowSource, SourceRow } from './reader.js';
import { whenAborted } from '../core/timers.js';
import { PATHS } from '../api/service.js';
import type { RequestLimiter, Permit, LimiterSnapshot } from '../http/adaptive.js';
import { type HttpClient, neverLeft, serviceNotReached, stoppedOnThisSide } from '../http/client.js';
import { ClaimCreated, type OfflineClaim } from '../schemas.js';
import { count } from '../text/count.js';

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

interface PipelineOptions {
  concurrency: number;
  /** `--wait-for-service`: how long an outage may last before the batch stops; undefined stops at once. */
  waitForServiceMs?: number;
  /** The store the token belongs to, for the words of a store-mismatch refusal. */
  tokenStore?: string;
}

/** What the pipeline uses of the world: the network, the clock, the stop signals, the records, and where it reports. */
export interface SendPorts {
  /** The HTTP core: the claim request (createClaim, below) and the outage probe's GET. */
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
    // Answers showing the service down hold the rows not sent yet (OutageWatch, below).
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
      // The feeder and one worker per slot, until every row is settled.
      const work = Promise.all([this.feed(source.rows), ...Array.from({ length: this.opts.concurrency }, () => this.worker())]).then(() => 'done' as const);
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
        const planned = this.planner.plan(row);
        const output = this.admit(row, isLater(planned) ? await planned : planned);
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
    this.window.admitSoon(this.admitNow);
    return undefined;
  }

  /** Records the held rows' intents as one group (one write, one fdatasync), as many as the window has room for; stopping: not_sent. */
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

  /** The record cannot be made durable: nothing more is sent; this row never left, and its not_sent outcome lets the next run send it. */
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
    this.window.admitSoon(this.admitNow);
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
      // Called on each attempt's permit (a 429 is asked again): the row left on the first.
      const outcome = await this.request(item, () => {
        if (gone) return;
        gone = true;
        // In flight from here on: a row still waiting for its turn when the batch stops never left.
        this.inFlight.add(line);
        this.ports.tally.sent();
        this.leftWindow();
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

  /**
   * Sends one planned row, paced by the limiter (`onLeave` on each permit); a failure is the row's
   * outcome. A stop while waiting for a permit sent nothing: the HTTP core repeats a POST only
   * after a 429 or when it never left. A request that left is never cut short.
   */
  private async request({ plan, row }: Ready, onLeave: () => void): Promise<SendOutcome> {
    const { limiter } = this.ports;
    const stop = this.stopSending;
    const paced: RequestLimiter = {
      async acquire(_signal, retryOf): Promise<Permit> {
        try {
          const permit = await limiter.acquire(stop, retryOf);
          onLeave();
          return permit;
        } catch (error) {
          if (stop.aborted) throw new StoppedBeforeSending();
          throw error;
        }
      },
      snapshot: () => limiter.snapshot(),
    };
    try {
      // No signal on the request: Ctrl-C stops new rows, but a request in flight is let finish so its outcome is known.
      const http = await this.ports.http();
      const created = await createClaim(http, plan.claim, { limiter: paced, answer: compiled(ClaimCreated) });
      return { result: { line: row.line, status: 'filed', sourceOrderId: created.payload.sourceOrderId }, stop: false };
    } catch (error) {
      if (error instanceof StoppedBeforeSending) return { result: { line: row.line, status: 'not_sent', error: NOT_SENT_REASON }, stop: false };
      const { status, stop } = classifyFailure(error);
      let message = error instanceof Error ? error.message.split('\n')[0] : String(error);
      if (isStoreMismatch(error)) message = `${storeMismatch(plan.claim.storeId, this.opts.tokenStore)} (403)`;
      const errors = error instanceof ApiError && error.fieldErrors.length ? error.fieldErrors : undefined;
      return { result: { line: row.line, status, error: message, errors }, stop, error };
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

  /** A row the batch stopped before sending (`recorded`: its intent was written): recorded not_sent, so the next run sends it. */
  private notSent(item: Ready, reason = this.stopReason(), recorded = true): Promise<void> {
    if (recorded) this.leftWindow();
    else this.window.wake();
    return this.settle(item, { result: { line: item.row.line, status: 'not_sent', error: reason }, stop: false });
  }

  /** A row left the window (its request left, or it was settled without leaving): held rows may be recorded. */
  private leftWindow(): void {
    this.window.left();
    this.window.admitSoon(this.admitNow);
  }

  /** Every ready or held row waiting for a worker is settled not_sent at once, so a second Ctrl-C finds the record true. */
  private drain(): void {
    const { recorded, planned } = this.window.drain();
    for (const item of recorded) void this.notSent(item);
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

  /** Another run took the record's lock and may send any row not settled here: no more leave. Asked at most every LOST_CHECK_MS. */
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

// The send window: a planned row is held; held rows' intents are recorded together once the ready
// ones run low; a durable row is ready for the next free worker. At most `size` rows are recorded
// unsent: a crash leaves those uncertain. Nothing here writes or sends.
/** A row planned to send, on its way through the window. */
interface Ready {
  row: SourceRow;
  plan: ToSend;
  /** Its intent was written to the record of claims: its outcome goes there too. */
  recorded?: boolean;
}

/** Held rows are recorded once fewer than a quarter of the window are ready: lower, a slot waits on fdatasync; higher, groups shrink. */
function lowWaterMark(window: number): number {
  return Math.max(1, Math.ceil(window / 4));
}

/** The rows held, syncing and ready, and the workers and the feeder waiting on them. */
class SendWindow {
  /** Planned to send, not recorded yet (at most `size`): recorded together once the ready rows run low. */
  private readonly held: Ready[] = [];
  /** Durable (its intent synced), waiting for a worker. */
  private readonly ready: Ready[] = [];
  /** Workers waiting for a ready row (undefined: nothing more will be). */
  private readonly takers: ((item: Ready | undefined) => void)[] = [];
  /** Rows recorded whose request has not left: at most `size`. */
  private unsent = 0;
  /** Intents queued whose fdatasync has not returned. */
  private syncing = 0;
  /** The feeder may still plan rows. */
  private feeding = true;
  private wakeFeeder?: () => void;
  /** `admitSoon` will admit at the end of this turn. */
  private admitting = false;
  private readonly lowWater: number;

  constructor(readonly size: number) {
    this.lowWater = lowWaterMark(size);
  }

  /** As many rows are held as the window holds: the feeder waits for room. */
  full(): boolean {
    return this.held.length >= this.size;
  }

  /** Resolves when the feeder may look again (room was made, or the batch is stopping). */
  waitForRoom(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wakeFeeder = resolve;
    });
  }

  /** The feeder, if it waits for room, looks again. */
  wake(): void {
    const resume = this.wakeFeeder;
    this.wakeFeeder = undefined;
    resume?.();
  }

  hold(item: Ready): void {
    this.held.push(item);
  }

  /** The held rows are due to be recorded: the rows ready or on their way to it are fewer than the low-water mark. */
  low(): boolean {
    return this.held.length > 0 && this.ready.length + this.syncing < this.lowWater;
  }

  /**
   * Calls `admit` once at the end of this turn when the held rows are due (`low`): by then the rows
   * workers took in this turn have left the window, so the group gets their room, and the record
   * still writes it in that same turn.
   */
  admitSoon(admit: () => void): void {
    if (this.admitting || !this.low()) return;
    this.admitting = true;
    setImmediate(() => {
      this.admitting = false;
      admit();
    });
  }

  /** The held rows the window has room for, now syncing: each is `unsent` until its request leaves. */
  admit(): Ready[] {
    const group = this.held.splice(0, this.size - this.unsent);
    this.unsent += group.length;
    this.syncing += group.length;
    return group;
  }

  /** A row's intent is durable (or failed to be). */
  synced(): void {
    this.syncing--;
  }

  /** A row left the window: its request left, or it was settled without leaving. */
  left(): void {
    this.unsent--;
  }

  /** A durable row: to a waiting worker, else to the queue. */
  give(item: Ready): void {
    const take = this.takers.shift();
    if (take) take(item);
    else this.ready.push(item);
  }

  next(): Ready | undefined {
    return this.ready.shift();
  }

  /** Undefined when nothing more can become ready; else a promise of the next ready row. */
  wait(): Promise<Ready | undefined> | undefined {
    if (!this.feeding && this.held.length === 0 && this.syncing === 0) return undefined;
    return new Promise((resolve) => this.takers.push(resolve));
  }

  /** Every ready and held row, taken out (the batch stops): `recorded` had their intent written, `planned` did not. */
  drain(): { recorded: Ready[]; planned: Ready[] } {
    return { recorded: this.ready.splice(0), planned: this.held.splice(0) };
  }

  fed(): void {
    this.feeding = false;
  }

  /** The workers stop asking once nothing more can become ready. */
  endIfDone(): void {
    if (this.feeding || this.held.length > 0 || this.syncing > 0 || this.ready.length > 0) return;
    for (const take of this.takers.splice(0)) take(undefined);
  }
}

/**
 * Endpoint 6, POST /v1/claims/offline (a batch's rows and the single claim alike); a POST is not
 * resent when its fate is unknown. Retries are not announced (the outage watch and the summary speak
 * for a batch). A batch paces with one shared `limiter` and reads answers with ClaimCreated compiled.
 */
export async function createClaim(
  http: HttpClient,
  claim: OfflineClaim,
  options: { limiter?: RequestLimiter; answer?: typeof ClaimCreated } = {},
): Promise<ClaimCreated> {
  return (await http.request({ method: 'POST', url: PATHS.claims, json: claim, limiter: options.limiter, quiet: true }, options.answer ?? ClaimCreated)).body;
}

/** How a failed request ends: the row's status, and whether the whole batch must stop. */
export function classifyFailure(error: unknown): { status: 'rejected' | 'uncertain' | 'not_sent'; stop: boolean } {
  // A redirect meets every row alike (a gateway, a wrong base URL): the batch stops. After a 307 or
  // 308 the claim was not processed; after another 3xx it may have been.
  if (error instanceof RedirectError) return { status: error.uncertain ? 'uncertain' : 'not_sent', stop: true };
  if (error instanceof ApiError) {
    // This row's storeId is not the token's store: this row is refused, the others may be fine.
    if (isStoreMismatch(error)) return { status: 'rejected', stop: false };
    // Refused before anything happened: the token or scope is wrong for every row alike.
    if (error.status === 401 || error.status === 403) return { status: 'not_sent', stop: true };
    // 429 (or 421, or a status the profile's not-processed-statuses names) after the core's
    // retries: refused, nothing created; the next run sends it.
    if (error.status === 429 || error.notProcessed) return { status: 'not_sent', stop: false };
    if (error.status >= 500) return { status: 'uncertain', stop: false };
    return { status: 'rejected', stop: false };
  }
  // Raised before a request went out (not logged in, no base URL).
  if (error instanceof AuthError || error instanceof UsageError) return { status: 'not_sent', stop: true };
  // Never left (the HTTP core's one rule, after its retries): nothing was created. Whether the
  // service is down is the outage watch's to judge (OutageWatch, below); a failure stopped on this
  // side (an untrusted certificate, a proxy's refusal...) meets every row alike: the batch stops.
  if (neverLeft(error)) return { status: 'not_sent', stop: stoppedOnThisSide(error) };
  // A timeout, a lost connection, an unreadable 2xx: the claim may exist.
  return { status: 'uncertain', stop: false };
}

/** What sending one row came to. */
interface SendOutcome {
  result: RowResult;
  /** The whole batch must stop (every row would fail alike). */
  stop: boolean;
  error?: unknown;
}

/** The batch stopped while this row waited for its turn: no attempt of it reached the server. */
class StoppedBeforeSending extends Error {}

/** What an answer says about the service: the words of each kind of outage (OutageWatch, below). */
type OutageCause = 'refused' | 'bad-gateway' | 'unavailable' | 'gateway-timeout' | 'no-answer';

const CAUSES: Record<OutageCause, string> = {
  refused: 'the service refused connections',
  'bad-gateway': 'the gateway in front of the service could not get an answer from it (502 Bad Gateway)',
  unavailable:
    'the service answered that it is unavailable (503); if that is a gateway answering its rate limit with 503, `opcli config set not-processed-statuses 429,503` has them asked again as a 429 is, and never uncertain',
  'gateway-timeout':
    'the gateway in front of the service gave up waiting for it (504 Gateway Timeout): the service was holding requests, and may still process the ones the gateway gave up on',
  'no-answer': 'the service stopped answering (timed out)',
};

/** The kind of outage a failed request shows, or undefined when it shows none (a refused row, a redirect). */
function outageCause(error: unknown): OutageCause | undefined {
  if (error instanceof RedirectError) return undefined;
  if (error instanceof ApiError) {
    if (error.status === 502) return 'bad-gateway';
    if (error.status === 503) return 'unavailable';
    if (error.status === 504) return 'gateway-timeout';
    return undefined;
  }
  if (error instanceof TimeoutError) return 'no-answer';
  // Connection refused, DNS, a connection closed before the request was written; not a failure
  // stopped on this side (an untrusted certificate, a proxy's refusal): the service is not down.
  if (serviceNotReached(error)) return 'refused';
  return undefined;
}

/** The time between probes while waiting for the service. */
const PROBE_EVERY_MS = 1_000;

/** What the probe found: the service answered (whatever the status), or the outage goes on. */
export type ProbeResult = { up: true } | { up: false; cause: OutageCause; detail: string };

interface OutageOptions {
  /** Asks the service once, with a request safe to repeat (GET /v1/orders?size=1). */
  probe: () => Promise<ProbeResult>;
  /** `--wait-for-service`: how long to wait for the service to come back; undefined stops at once. */
  waitMs?: number;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Stops the wait (Ctrl-C). */
  signal: AbortSignal;
  notice: (text: string) => void;
}

/** The batch stopped because the service is down: the rows not sent are sent by a rerun (exit 1). */
class OutageError extends OpcliError {
  constructor(cause: OutageCause, failures: number, waitedMs: number | undefined) {
    const waited = waitedMs === undefined ? '' : `, and it did not come back within ${Math.round(waitedMs / 1000)} s`;
    super(
      `The service is down (${count(failures)} request${failures === 1 ? '' : 's'} in a row failed${waited}): ${CAUSES[cause]}; opcli stopped sending. Rerunning the same command is safe: it sends the rows not sent and the rows not read yet, never a row filed or uncertain${cause === 'gateway-timeout' ? ' (the service may still create the uncertain ones: look for them in the merchant dashboard before --retry-uncertain, which files again any that exist)' : ''}.`,
      { exitCode: ExitCode.failed },
    );
  }
}

/** The hint every connection failure gets unless it knows better (the line itself says what to do). */
const GENERIC_HINT = new NetworkError('', { sent: false }).hint;

/** No claim request of this run reached the service: one line however many rows, since rerunning sends everything (exit 1). */
export class UnreachableError extends OpcliError {
  constructor(what: string, failure: NetworkError) {
    super(`${what}: the service cannot be reached (${failure.message.replace(/\.$/, '')}); nothing was sent, rerunning is safe.`, {
      exitCode: ExitCode.failed,
      hint: failure.hint === GENERIC_HINT ? undefined : failure.hint,
      cause: failure,
    });
  }
}

/**
 * Watches a batch's answers for an outage (refused connections, 502-504, no answer): a gate closes
 * in front of the rows not yet sent, so only the rows in flight meet it. Once they are answered, a
 * harmless GET asks whether the service is back; if not, the batch stops (or waits,
 * --wait-for-service). After a probe finds it up, one row goes first and the others follow only
 * once it is answered well (a gateway may answer a GET while POSTs still fail).
 */
export class OutageWatch {
  /** Rows past the gate whose outcome is not in. */
  private inFlight = 0;
  /** Outage answers since the last good one. */
  private failures = 0;
  private cause?: OutageCause;
  private closed?: { promise: Promise<void>; open: () => void };
  private deciding = false;
  /** The probe found the service up: one row may pass the closed gate. */
  private admitOne = false;
  /** That row is out, or no row has been answered well since the probe: the probe is not proof yet. */
  private onTrial = false;
  /** When this outage began to be waited for (--wait-for-service counts from here). */
  private waitStarted?: number;
  /** "The service looks down" was said: "it is back" is said too. */
  private announced = false;
  /** Set when the batch must stop: the rows still at the gate are not sent. */
  stopError?: OutageError;
  /** A claim request of this run may have reached the service (an answer, or a failure after it was written). */
  private reached = false;
  /** The first failure that proved the service was not reached. */
  private unreachable?: NetworkError;

  constructor(private readonly options: OutageOptions) {}

  /** True when the row may be sent, false when the batch stops; a promise of that while the gate is closed (an open gate costs no turn). */
  enter(): boolean | Promise<boolean> {
    if (!this.closed && !this.stopError) {
      this.inFlight++;
      return true;
    }
    return this.wait();
  }

  private async wait(): Promise<boolean> {
    for (;;) {
      if (this.stopError) return false;
      if (!this.closed) break;
      if (this.admitOne) {
        this.admitOne = false;
        break;
      }
      await this.closed.promise;
    }
    this.inFlight++;
    return true;
  }

  /** A row that entered is settled: `error` is its failure; `answered` false when it never went (stopped before its turn). */
  leave(error: unknown, answered = true): void {
    this.inFlight--;
    if (answered) this.witness(error);
    const cause = error === undefined ? undefined : outageCause(error);
    if (cause) {
      this.failures++;
      this.cause = cause;
      this.closed ??= gate();
    } else if (answered && (error === undefined || error instanceof ApiError)) {
      // An answer from the service itself. Once the gate is closed, only a row let through after
      // the probe opens it: a row answered well now may have been sent before the failures began.
      if (this.onTrial) {
        this.onTrial = false;
        this.clear();
        if (this.announced) this.options.notice('The service is back; going on.\n');
        this.announced = false;
        this.reopen();
      } else if (!this.closed) this.clear();
    }
    if (this.closed && this.inFlight === 0 && !this.admitOne) void this.decide();
  }

  /** The failure that proved the service unreachable, when no claim request of the run reached it; else undefined. */
  neverReached(): NetworkError | undefined {
    return this.reached ? undefined : this.unreachable;
  }

  /** What a settled request says of the service: reached (any answer, or written before it failed), or not. */
  private witness(error: unknown): void {
    const notReached = serviceNotReached(error);
    if (notReached) this.unreachable ??= notReached;
    else if (!neverLeft(error)) this.reached = true;
  }

  /** Stops at once (the batch stops for another reason): rows at the gate go on to be settled not sent. */
  release(): void {
    this.admitOne = false;
    this.reopen();
  }

  private clear(): void {
    this.failures = 0;
    this.cause = undefined;
    this.waitStarted = undefined;
  }

  private reopen(): void {
    const closed = this.closed;
    this.closed = undefined;
    closed?.open();
  }

  /** Lets one row through the closed gate (the others wait for its answer). */
  private letOneThrough(): void {
    const old = this.closed;
    this.closed = gate();
    this.admitOne = true;
    this.onTrial = true;
    old?.open();
  }

  /** Every row in flight is answered and the gate is closed: ask the service. */
  private async decide(): Promise<void> {
    if (this.deciding) return;
    this.deciding = true;
    const { waitMs } = this.options;
    // The probe said "up" and the row let through failed as the others did: it was not proof.
    const distrust = this.onTrial;
    this.onTrial = false;
    this.waitStarted ??= this.options.now();
    const started = this.waitStarted;
    let up = false;
    try {
      for (let first = true; ; first = false) {
        const found: ProbeResult = first && distrust ? { up: false, cause: this.cause ?? 'bad-gateway', detail: '' } : await this.options.probe();
        if (found.up) {
          up = true;
          return;
        }
        if (waitMs === undefined || this.options.signal.aborted || this.options.now() - started >= waitMs) {
          this.stopError = new OutageError(this.cause ?? found.cause, this.failures, waitMs);
          return;
        }
        if (!this.announced) {
          this.announced = true;
          this.options.notice(
            `The service looks down: ${CAUSES[this.cause ?? found.cause]}. Waiting up to ${Math.round(waitMs / 1000)} s for it (--wait-for-service), asking every ${PROBE_EVERY_MS / 1000} s.\n`,
          );
        }
        await this.options.sleep(Math.min(PROBE_EVERY_MS, Math.max(0, waitMs - (this.options.now() - started))), this.options.signal).catch(() => {});
      }
    } finally {
      this.deciding = false;
      if (up && !this.stopError) this.letOneThrough();
      else this.reopen();
    }
  }
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Asks the service once with GET /v1/orders?size=1 (safe to repeat): any answer but 502-504 means it is up. */
async function probeService(http: () => Promise<HttpClient>, signal: AbortSignal): Promise<ProbeResult> {
  try {
    await (await http()).request({ method: 'GET', url: PATHS.orders, query: { size: 1 }, retry: 'never', signal });
    return { up: true };
  } catch (error) {
    const cause = outageCause(error);
    if (cause) return { up: false, cause, detail: error instanceof Error ? error.message : String(error) };
    // Stopped on this side (an untrusted certificate, a proxy's refusal): the service is not reached; it is read as refusing.
    if (error instanceof NetworkError) return { up: false, cause: neverLeft(error) ? 'refused' : 'no-answer', detail: error.message };
    return { up: true };
  }
}

// What the stages hand the report (the verb's view, src/commands/claims/index.ts, prints; nothing here does).
/** A batch's counts, by outcome (`sent`: requests sent in this run; `done`: rows). */
const COUNT_NAMES = [
  'filed',
  'filedEarlier',
  'rejected',
  'rejectedEarlier',
  'invalid',
  'held',
  'uncertain',
  'uncertainEarlier',
  'notSent',
  'valid',
  'sent',
  'done',
] as const;
export type Counts = Record<(typeof COUNT_NAMES)[number], number>;

export function emptyCounts(): Counts {
  return Object.fromEntries(COUNT_NAMES.map((name) => [name, 0])) as Counts;
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

/** What a batch came to, for the summary at its end (or at a second Ctrl-C): the counts, time and limiter's state then, and what the batch adds. */
export interface BatchSummary extends Pick<BatchProgress, 'counts' | 'elapsedMs' | 'limits'> {
  /** What the input's positions are (lines of a CSV or JSONL file, items of a JSON array). */
  unit: 'line' | 'item';
  journal: string;
  /** Rows an earlier run sent without reading the answer: the first ones, and how many in all. */
  earlierUncertain: { lines: number[]; count: number };
  /** Rows whose request had no answer when the batch was stopped at once. */
  inFlight: number[];
}

/** The batch's running account, read by the display: counts by outcome, time, the input's estimated size, the limiter's state. */
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
  /** `verb`: send, validate (--validate-only) or plan (--dry-run); `progress`: asked of the batch at each draw of the status line. */
  report(source: RowSource, options: { out?: string; verb: 'send' | 'validate' | 'plan' }, progress: () => BatchProgress): BatchReport;
  /** The summary at the end (or at a second Ctrl-C). */
  summarize(summary: BatchSummary): void;
  notice(text: string): void;
}
