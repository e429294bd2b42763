/**
 * One streaming reader of a record's lines for both histories: the lines of one key are held together,
 * and each entry (an attempt) is handed over in the record's order with its key's lines once the
 * client says they are complete. An entry that waited `window` entries, or whose key's lines were
 * dropped to hold at most `held`, gets its key's lines from the index instead: memory is bounded by
 * the window, never the record. Without an index every entry waits for its lines or the record's end.
 */

/** What a history gives the reader: how its lines group, and what it makes of a key's lines. */
export interface ActionLines<L, E> {
  /** The key a line belongs to (undefined: a line of no action, such as a run's or the header). */
  key(line: L): string | undefined;
  /** The entry a line begins, handed over in the record's order (undefined: none). */
  entry(line: L): E | undefined;
  /** Whether the key's lines read so far are all `entry` needs. */
  complete(entry: E, lines: L[]): boolean;
  /** Whether a key no entry waits for may be forgotten (no later line can need the lines read so far). */
  forget(key: string): boolean;
  /** Hands `entry` over with its key's lines: those read (complete, or the record ended) or the index's. */
  hand(entry: E, lines: L[]): void;
}

/** How long an entry may wait for its key's lines, and how many lines may be held for keys that wait. */
export interface ActionLimits {
  window: number;
  held: number;
}

/** The limits of ActionStream (tests make them small to walk the index's way). */
export const ACTION_LIMITS: ActionLimits = { window: 10_000, held: 200_000 };

/** The record's lines, taken in its order, handed over entry by entry (ActionLines). */
export class ActionStream<L, E> {
  private readonly lines = new Map<string, L[]>();
  /** Entries queued or waiting, per key: a key with none is forgotten when the client says so. */
  private readonly waiting = new Map<string, number>();
  /** Keys whose lines were let go to bound memory: their entries are answered from the index. */
  private readonly dropped = new Set<string>();
  private queue: { key: string; entry: E }[] = [];
  private head = 0;
  private held = 0;

  constructor(
    private readonly client: ActionLines<L, E>,
    private readonly limits: ActionLimits,
    private readonly fromIndex?: (key: string) => L[],
  ) {}

  /** The next line of the record. */
  take(line: L): void {
    const key = this.client.key(line);
    if (key === undefined) return;
    if (!this.dropped.has(key)) {
      const lines = this.lines.get(key);
      if (lines) lines.push(line);
      else this.lines.set(key, [line]);
      this.held++;
    }
    const entry = this.client.entry(line);
    if (entry !== undefined) {
      this.queue.push({ key, entry });
      this.waiting.set(key, (this.waiting.get(key) ?? 0) + 1);
    }
    this.release(false);
    this.letGo(key);
    if (this.fromIndex && this.held > this.limits.held) this.drop();
  }

  /** The end of the record: every entry still waiting is handed over. */
  end(): void {
    this.release(true);
  }

  /** Hands over the entries at the head of the queue whose lines are complete (or that waited too long, or `all`). */
  private release(all: boolean): void {
    while (this.head < this.queue.length) {
      const { key, entry } = this.queue[this.head] as { key: string; entry: E };
      const lines = this.dropped.has(key) ? undefined : (this.lines.get(key) ?? []);
      const ready = lines !== undefined && (all || this.client.complete(entry, lines));
      if (!ready && !all && lines !== undefined && (!this.fromIndex || this.queue.length - this.head <= this.limits.window)) return;
      this.client.hand(entry, ready ? (lines as L[]) : (this.fromIndex as (key: string) => L[])(key));
      this.head++;
      this.waiting.set(key, (this.waiting.get(key) ?? 1) - 1);
      this.letGo(key);
      if (this.head > 4096 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
    }
  }

  /** Forgets a key's lines once no entry waits for them and the client needs them no more. */
  private letGo(key: string): void {
    if ((this.waiting.get(key) ?? 0) > 0 || !this.client.forget(key)) return;
    this.held -= this.lines.get(key)?.length ?? 0;
    this.lines.delete(key);
    this.waiting.delete(key);
  }

  /** Too many lines held: every held key's are dropped, and its entries answered from the index. */
  private drop(): void {
    for (const key of this.lines.keys()) this.dropped.add(key);
    this.lines.clear();
    this.held = 0;
  }
}
