/** The bounded log of received requests. */
import type { ReceivedRequest } from './types.js';

/**
 * A recorder keeping at most `max` requests, dropping the oldest. Dropping them one at a time would
 * move the whole log on every request once it is full (200,000 entries by default: the sandbox
 * fell from ~20,000 to ~3,000 requests a second); they are dropped in slices of max/8 instead, and
 * before every read, so a reader sees at most `max` and the log holds at most max + max/8.
 */
export function createRecorder(max: number) {
  const entries: ReceivedRequest[] = [];
  const slack = Math.max(1, Math.ceil(max / 8));
  const trim = () => {
    if (entries.length > max) entries.splice(0, entries.length - max);
  };
  let seq = 0;
  return {
    /** The requests kept, oldest first; always the same array. */
    get list(): ReceivedRequest[] {
      trim();
      return entries;
    },
    /** Records a request as received (status 0 until answered). */
    add(entry: Omit<ReceivedRequest, 'seq' | 'status'>): ReceivedRequest {
      const record: ReceivedRequest = { seq: ++seq, ...entry, status: 0 };
      entries.push(record);
      if (entries.length >= max + slack) trim();
      return record;
    },
    /** Forgets every request; the array stays the same object. */
    clear(): void {
      entries.length = 0;
    },
  };
}

export type Recorder = ReturnType<typeof createRecorder>;
