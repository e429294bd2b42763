/**
 * The table under the batch's compact indexes (the journal's earlier outcomes and look-alikes, the
 * run's occurrence counts): keys are hex digests, of which the first 64 bits are kept as two 32-bit
 * halves in typed arrays; open addressing with linear probing, grown at 70% load. A million keys
 * take tens of MB where a Map of strings took hundreds. A key is a SHA-256 prefix, so two keys
 * agreeing on 64 bits is practically impossible (about 1 in 18 million that any of a million rows
 * meets any of a million others). Each index keeps its values in its own columns, which move with
 * the keys when the table grows.
 */
type Column = Uint8Array | Uint32Array | Float64Array;

/** One 32-bit half of a hex key: digits `at` to `at + 8`. */
export function half(key: string, at: 0 | 8): number {
  return Number.parseInt(key.slice(at, at + 8), 16) >>> 0;
}

export class KeyTable<C extends Record<string, Column>> {
  private hi: Uint32Array;
  private lo: Uint32Array;
  private used: Uint8Array;
  private mask: number;
  /** The value columns, one slot per key slot (replaced when the table grows: read them anew each time). */
  columns: C;
  size = 0;
  /** Whether the last `slot` call took a new slot. */
  fresh = false;

  constructor(
    capacity: number,
    private readonly makeColumns: (capacity: number) => C,
  ) {
    this.hi = new Uint32Array(capacity);
    this.lo = new Uint32Array(capacity);
    this.used = new Uint8Array(capacity);
    this.columns = makeColumns(capacity);
    this.mask = capacity - 1;
  }

  /** The slot holding `key`, or -1. */
  find(key: string): number {
    if (this.size === 0) return -1;
    const hi = half(key, 0);
    const lo = half(key, 8);
    for (let i = lo & this.mask; this.used[i]; i = (i + 1) & this.mask) if (this.lo[i] === lo && this.hi[i] === hi) return i;
    return -1;
  }

  /** The slot of `key`, taken for it when it has none (`fresh` tells). */
  slot(key: string): number {
    if ((this.size + 1) * 10 > (this.mask + 1) * 7) this.grow();
    const hi = half(key, 0);
    const lo = half(key, 8);
    let i = lo & this.mask;
    while (this.used[i] && !(this.lo[i] === lo && this.hi[i] === hi)) i = (i + 1) & this.mask;
    this.fresh = !this.used[i];
    if (this.fresh) {
      this.size++;
      this.used[i] = 1;
      this.hi[i] = hi;
      this.lo[i] = lo;
    }
    return i;
  }

  private grow(): void {
    const { hi, lo, used, columns } = this;
    const capacity = (this.mask + 1) * 2;
    this.hi = new Uint32Array(capacity);
    this.lo = new Uint32Array(capacity);
    this.used = new Uint8Array(capacity);
    this.columns = this.makeColumns(capacity);
    this.mask = capacity - 1;
    const names = Object.keys(columns) as (keyof C)[];
    for (let j = 0; j < used.length; j++) {
      if (!used[j]) continue;
      let i = (lo[j] as number) & this.mask;
      while (this.used[i]) i = (i + 1) & this.mask;
      this.used[i] = 1;
      this.hi[i] = hi[j] as number;
      this.lo[i] = lo[j] as number;
      for (const name of names) (this.columns[name] as Column)[i] = (columns[name] as Column)[j] as number;
    }
  }
}
