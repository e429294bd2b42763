/**
 * Even spacing of a batch's requests: the Generic Cell Rate Algorithm (ITU-T I.371, virtual
 * scheduling), the algorithm many servers limit with. A request leaves at its theoretical time, one
 * interval (read when it is due) after the last request left, never earlier: a limit tolerance of 0,
 * as a strict leaky bucket (nginx's `limit_req` without `burst`) refuses a request that comes early.
 * The last one counts from when it was written, not from its permit. A timer that fires late is not
 * made up (that would bring two closer at the server): the rate controller settles the pace where the
 * server's limit is. No I/O: the clock and the sleep are injected.
 */
/**
 * Node's timers keep whole milliseconds: an interval under FINE_MS cannot be slept, so there the
 * limit tolerance τ is TIMER_MS (a request leaves when due within it, on the theoretical grid, which
 * keeps the average rate) and a request does not wait for the write of the one before.
 */
const TIMER_MS = 1;
const FINE_MS = 2;

export class Gcra {
  /** When the last request left (the later of its TAT and its write). */
  private last = Number.NEGATIVE_INFINITY;
  /** Requests let go but neither written nor ended: the next waits for them. */
  private unwritten = 0;
  private readonly writeWaiters: (() => void)[] = [];
  /** The last request was spaced finely (its interval at least FINE_MS): its write counts. */
  private fine = true;
  /** Requests sleeping on the spacing now. */
  waiting = 0;
  /** No request leaves before this (a server's stated reset). */
  pausedUntil = 0;

  constructor(
    readonly now: () => number,
    private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
  ) {}

  /** Holds every request until `until`. */
  pause(until: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, until);
  }

  /**
   * Waits until a request conforms at the interval `intervalOf()` reads (ms, 0 for none), and lets it
   * go. Returns whether the spacing made it wait: the rate, not the work, is what holds the batch back.
   */
  async wait(intervalOf: () => number, signal?: AbortSignal): Promise<boolean> {
    let waited = false;
    for (;;) {
      signal?.throwIfAborted();
      const t = this.now();
      const interval = intervalOf();
      const fine = interval >= FINE_MS;
      if (fine && this.unwritten > 0) {
        await this.untilWritten(signal);
        continue;
      }
      const due = Math.max(this.pausedUntil, this.last + interval);
      if (due - t > (fine ? 0 : TIMER_MS)) {
        waited = true;
        this.waiting++;
        try {
          await this.sleep(due - t, signal);
        } finally {
          this.waiting--;
        }
        continue;
      }
      this.last = fine ? t : Math.max(t, due);
      this.fine = fine;
      this.unwritten++;
      return waited;
    }
  }

  /** The request let go last was written at `at` (undefined: it ended unwritten). */
  written(at: number | undefined): void {
    if (at !== undefined && this.fine) this.last = Math.max(this.last, at);
    this.unwritten--;
    for (const wake of this.writeWaiters.splice(0)) wake();
  }

  /** Resolves when a request let go is written or ended; rejects when `signal` aborts first. */
  private untilWritten(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal?.reason);
      this.writeWaiters.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
