/**
 * Keeps a batch's per-row output in input order while rows finish in any order: a row done before an
 * earlier one waits for it. When MAX_WAITING rows wait (one slow request), the batch reads no new
 * row until they are fewer, so memory stays flat whatever the input size.
 */
export const MAX_WAITING = 1_000;

export class InOrder<T> {
  private readonly waiting = new Map<number, T>();
  private nextSeq = 0;
  /** The drain under way, if one is. */
  private draining: Promise<void> | undefined;
  /** Readers waiting for `waiting` to shrink below MAX_WAITING. */
  private roomWaiters: (() => void)[] = [];

  constructor(private readonly emit: (item: T) => Promise<void>) {}

  /** Undefined while there is room for more rows; else a promise that resolves once fewer than MAX_WAITING rows wait. */
  room(): Promise<void> | undefined {
    if (this.waiting.size < MAX_WAITING) return undefined;
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Row `seq` is done: it goes out now if every earlier row has, else when they have. */
  async done(seq: number, item: T): Promise<void> {
    this.waiting.set(seq, item);
    // One drain at a time: a second one would write its rows while the first awaits a write.
    if (this.draining) return;
    this.draining = this.drain();
    try {
      await this.draining;
    } finally {
      this.draining = undefined;
    }
    if (this.roomWaiters.length && this.waiting.size < MAX_WAITING) for (const resolve of this.roomWaiters.splice(0)) resolve();
  }

  private async drain(): Promise<void> {
    for (let next = this.waiting.get(this.nextSeq); next !== undefined; next = this.waiting.get(this.nextSeq)) {
      this.waiting.delete(this.nextSeq);
      this.nextSeq++;
      await this.emit(next);
    }
  }

  /**
   * The end: anything still waiting (a gap cannot happen: every pulled row completes) goes out in
   * order, once a drain under way has ended (else the rows it had yet to write went out twice).
   */
  async flush(): Promise<void> {
    await this.draining?.catch(() => {});
    for (const seq of [...this.waiting.keys()].sort((a, b) => a - b)) {
      const item = this.waiting.get(seq) as T;
      this.waiting.delete(seq);
      await this.emit(item);
    }
    for (const resolve of this.roomWaiters.splice(0)) resolve();
  }
}
