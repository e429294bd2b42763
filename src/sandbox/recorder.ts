/** The bounded log of received requests. */
import type { ReceivedRequest } from './types.js';

/** A recorder keeping at most `max` requests, dropping the oldest. */
export function createRecorder(max: number) {
  const list: ReceivedRequest[] = [];
  let seq = 0;
  return {
    list,
    /** Records a request as received (status 0 until answered). */
    add(entry: Omit<ReceivedRequest, 'seq' | 'status'>): ReceivedRequest {
      const record: ReceivedRequest = { seq: ++seq, ...entry, status: 0 };
      list.push(record);
      if (list.length > max) list.splice(0, list.length - max);
      return record;
    },
    /** Forgets every request; the array stays the same object. */
    clear(): void {
      list.length = 0;
    },
  };
}

export type Recorder = ReturnType<typeof createRecorder>;
