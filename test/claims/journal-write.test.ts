/**
 * The journal writes each group on the main thread (fs.writeSync). What the kernel may do to such a
 * write, injected through the journal's `io`: write part of it (a full disk may stop part way) or
 * refuse it (ENOSPC).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from '../../src/claims/journal.js';
import { tempConfigDir } from '../helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempConfigDir());
});
afterEach(() => cleanup());

const key = (i: number) => createHash('sha256').update(String(i)).digest('hex').slice(0, 32);
const entries = (path: string) =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => JSON.parse(l) as { line: number; status: string });

/** A disk that writes for real, at most 7 bytes a call ('short'), or not at all ('full'). */
function disk() {
  const state = { mode: 'real' as 'real' | 'short' | 'full', calls: 0 };
  const io = {
    writeSync: (fd: number, buffer: Buffer) => {
      state.calls++;
      if (state.mode === 'full') throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      return writeSync(fd, state.mode === 'short' ? buffer.subarray(0, 7) : buffer);
    },
  };
  return { state, io };
}

describe('a group written on the main thread', () => {
  it('is continued after a short write until every byte is written: no torn line', async () => {
    const path = join(dir, 'j.jsonl');
    const { state, io } = disk();
    const journal = await Journal.open(path, 0, io);
    try {
      state.mode = 'short';
      await Promise.all([
        journal.record({ key: key(1), line: 2, status: 'sending' }, '{"a":1}'),
        journal.record({ key: key(2), line: 3, status: 'sending' }, '{"a":2}'),
      ]);
      journal.note({ key: key(1), line: 2, status: 'filed', sourceOrderId: 'ord_1' });
      await journal.flushed();
    } finally {
      await journal.close();
    }
    // Many 7-byte writes, every line whole and in order.
    expect(state.calls).toBeGreaterThan(20);
    expect(entries(path).map((e) => [e.line, e.status])).toEqual([
      [2, 'sending'],
      [3, 'sending'],
      [2, 'filed'],
    ]);
  });

  it('refused (a full disk) refuses its rows and every later entry, and says what to do', async () => {
    const path = join(dir, 'j.jsonl');
    const { state, io } = disk();
    const journal = await Journal.open(path, 0, io);
    try {
      await journal.record({ key: key(1), line: 2, status: 'sending' }, '{}');
      state.mode = 'full';
      await expect(journal.record({ key: key(2), line: 3, status: 'sending' }, '{}')).rejects.toThrow(/Cannot write the journal .*j\.jsonl: ENOSPC/);
      state.mode = 'real';
      // The disk has room again, but this run's journal is no longer trusted: nothing more leaves.
      await expect(journal.record({ key: key(3), line: 4, status: 'sending' }, '{}')).rejects.toThrow(/Cannot write the journal/);
      await expect(journal.flushed()).rejects.toMatchObject({ hint: expect.stringContaining('Free disk space or pass --journal') });
    } finally {
      await journal.close();
    }
    // Only the row made durable before the failure is in the journal.
    expect(entries(path).map((e) => [e.line, e.status])).toEqual([[2, 'sending']]);
  });
});
