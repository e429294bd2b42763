/**
 * The send window of a batch (fast path, guarded by bench/claims-batch.mjs): the rows between the
 * planner and the wire, kept in one place. A planned row is held; held rows are journaled `sending`
 * together (one fdatasync for the group) once the ready ones run low; a durable row is ready and
 * goes to the next free worker. At most `size` rows are journaled whose request has not left:
 * a crash leaves those `sending` without having sent them, and the next run reports them uncertain.
 * The pipeline (pipeline.ts) moves rows through it; nothing here writes or sends.
 */
import type { ToSend } from './plan.js';
import type { SourceRow } from './reader.js';

/** A row planned to send, on its way through the window. */
export interface Ready {
  row: SourceRow;
  plan: ToSend;
  /** Its intent was written to the record of claims: its outcome goes there too. */
  recorded?: boolean;
}

/**
 * How few rows may be ready (or syncing) before the held ones are journaled: a quarter of the
 * window, at least one. Lower, a slot more often waits for an fdatasync; higher, each fdatasync
 * covers fewer rows.
 */
export function lowWaterMark(window: number): number {
  return Math.max(1, Math.ceil(window / 4));
}

/** The rows held, syncing and ready, and the workers and the feeder waiting on them. */
export class SendWindow {
  /** Planned to send, not journaled yet (at most `size`): journaled together once the ready rows run low. */
  private readonly held: Ready[] = [];
  /** Durable (`sending` synced), waiting for a worker. */
  private readonly ready: Ready[] = [];
  /** Workers waiting for a ready row (undefined: nothing more will be). */
  private readonly takers: ((item: Ready | undefined) => void)[] = [];
  /** Rows journaled as `sending` whose request has not left: at most `size`. */
  private unsent = 0;
  /** `sending` entries queued whose fsync has not returned. */
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

  /** The held rows are due to be journaled: the rows ready or on their way to it are fewer than the low-water mark. */
  low(): boolean {
    return this.held.length > 0 && this.ready.length + this.syncing < this.lowWater;
  }

  /**
   * Calls `admit` at the end of this turn when the held rows are due (`low`), once however often it
   * is asked in the turn. Not at once: the rows workers took in this turn have left the window by
   * then (their requests went out), so the group gets their room. Made at once, a group of a
   * 10,000-row batch at --concurrency 16 held 9 rows on average (1,130 fdatasyncs of each file);
   * at the end of the turn, nearly 16 (635), and no row waits longer for its sync: the journal
   * writes its group in that same turn (Journal.commit), not one turn later.
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

  /** A row's `sending` entry is durable (or failed to be). */
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

  /** The next ready row, if one is. */
  next(): Ready | undefined {
    return this.ready.shift();
  }

  /** Undefined when nothing more can become ready; else a promise of the next ready row. */
  wait(): Promise<Ready | undefined> | undefined {
    if (!this.feeding && this.held.length === 0 && this.syncing === 0) return undefined;
    return new Promise((resolve) => this.takers.push(resolve));
  }

  /** Every ready and held row, taken out (the batch stops): `journaled` were recorded `sending`, `planned` were not. */
  drain(): { journaled: Ready[]; planned: Ready[] } {
    return { journaled: this.ready.splice(0), planned: this.held.splice(0) };
  }

  /** The feeder planned its last row. */
  fed(): void {
    this.feeding = false;
  }

  /** The workers stop asking once nothing more can become ready. */
  endIfDone(): void {
    if (this.feeding || this.held.length > 0 || this.syncing > 0 || this.ready.length > 0) return;
    for (const take of this.takers.splice(0)) take(undefined);
  }
}
