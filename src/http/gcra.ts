/** The gate paced requests pass in the order they asked: a slot, then GCRA (ITU-T I.371) with a tolerance of 0, TIMER_MS under FINE_MS (docs/http.md#rate-limits). */
import { type PaceClock, whenAborted } from '../core/timers.js';

const TIMER_MS = 1;
const FINE_MS = 2;

export class Gcra {
  /** The turn of the last request to ask; when the last request left (the later of its due time and its write). */
  private turn: Promise<void> = Promise.resolve();
  private last = Number.NEGATIVE_INFINITY;
  /** Those let go but not yet written or ended; those not yet ended. */
  private unwritten = 0;
  inFlight = 0;
  /** Requests asking to go: in the gate and not yet let go. */
  asking = 0;
  /** How many may be in flight now, and when the next may leave with `inFlight` in the air (read at each try); what waits for a write or a free slot. */
  slots = () => 1;
  notBefore = (_t: number, _inFlight: number) => 0;
  private readonly wakers: (() => void)[] = [];
  private fine = true;
  /** A server that allows a burst (`catchUp`) takes a late request's lost time, up to an interval (`slack`), back from the next: GCRA's tolerance. */
  catchUp = false;
  private slack = 0;
  /** Requests sleeping on the spacing now; no request leaves before `pausedUntil` (a back-off). */
  waiting = 0;
  pausedUntil = 0;
  constructor(private readonly clock: PaceClock) {}
  /** Waits for a slot and until a request conforms at the interval `intervalOf()` reads (ms), and lets it go; true if the spacing made it wait. */
  async wait(intervalOf: () => number, signal?: AbortSignal): Promise<boolean> {
    const before = this.turn;
    let done = () => {};
    this.turn = new Promise<void>((resolve) => (done = resolve));
    this.asking++;
    try {
      await until(before, signal);
      return await this.conform(intervalOf, signal);
    } finally {
      this.asking--;
      done();
    }
  }
  private async conform(intervalOf: () => number, signal?: AbortSignal): Promise<boolean> {
    let waited = false;
    for (;;) {
      signal?.throwIfAborted();
      const t = this.clock.now();
      const interval = intervalOf();
      const fine = interval >= FINE_MS;
      if (this.inFlight >= this.slots() || (fine && this.unwritten > 0)) {
        await until(new Promise<void>((resolve) => this.wakers.push(resolve)), signal);
        continue;
      }
      const due = Math.max(this.pausedUntil, this.last + interval, this.notBefore(t, this.inFlight));
      if (due - t <= (fine ? 0 : TIMER_MS)) {
        this.slack = this.catchUp ? interval : 0;
        this.last = Math.max(t - this.slack, due);
        this.fine = fine;
        this.unwritten++;
        this.inFlight++;
        return waited;
      }
      waited = true;
      this.waiting++;
      await this.clock.sleep(due - t, signal).finally(() => this.waiting--);
    }
  }
  /** A request let go was written at `at`, or (undefined) ended: the next may go, and at its end its slot is free. */
  written(at: number | undefined, unwritten = false): void {
    if (at !== undefined && this.fine) this.last = Math.max(this.last, at - this.slack);
    if (at !== undefined || unwritten) this.unwritten--;
    if (at === undefined) this.inFlight--;
    for (const wake of this.wakers.splice(0)) wake();
  }
}

function until(promise: Promise<void>, signal?: AbortSignal): Promise<void> {
  if (!signal) return promise;
  return new Promise<void>((resolve, reject) => {
    const stop = whenAborted(signal, () => reject(signal.reason));
    promise.then(resolve).finally(stop);
  });
}
