import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal, type JournalIo, LOCK_WAIT_MS, NotJournaled, PriorIndex } from '../../src/claims/journal.js';
import { tempConfigDir } from '../helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempConfigDir());
});
afterEach(() => cleanup());

const key = (i: number) => createHash('sha256').update(String(i)).digest('hex').slice(0, 32);

describe('PriorIndex (the compact index of earlier outcomes)', () => {
  it('finds every key after growing, keeps the last outcome of an attempt (filed stays filed), and tells keys apart by 64 bits', () => {
    const index = new PriorIndex();
    for (let i = 0; i < 50_000; i++) index.set(key(i), i % 3 === 0 ? 'filed' : 'sending', i * 100);
    for (let i = 0; i < 50_000; i += 3) index.set(key(i), 'rejected', i * 100 + 1);
    for (let i = 1; i < 50_000; i += 3) index.set(key(i), 'rejected', i * 100 + 1);
    expect(index.size).toBe(50_000);
    for (let i = 0; i < 50_000; i++) {
      // A filed row stays filed whatever follows (src/record/outcome.ts); a sending row takes its outcome.
      const want =
        i % 3 === 0 ? { status: 'filed', offset: i * 100 } : i % 3 === 1 ? { status: 'rejected', offset: i * 100 + 1 } : { status: 'sending', offset: i * 100 };
      expect(index.get(key(i))).toMatchObject(want);
    }
    expect(index.get(key(50_000))).toBeUndefined();
    // Same first 32 bits, different next 32: two keys. Only the last 64 of 128 bits differ: one key.
    const a = `${'0'.repeat(8)}${'1'.repeat(8)}${'2'.repeat(16)}`;
    index.set(a, 'filed', 7);
    expect(index.get(`${'0'.repeat(8)}${'3'.repeat(8)}${'2'.repeat(16)}`)).toBeUndefined();
    expect(index.get(`${'0'.repeat(8)}${'1'.repeat(8)}${'9'.repeat(16)}`)).toMatchObject({ status: 'filed', offset: 7 });
  });
});

describe('Journal', () => {
  it('reads outcomes back with their sourceOrderId and reason only when asked, from any entry size; a torn line is skipped', async () => {
    const path = join(dir, 'j.jsonl');
    const long = 'x'.repeat(5000);
    writeFileSync(
      path,
      [
        { journal: 'opcli claims', version: 2 },
        { key: key(1), line: 2, status: 'sending' },
        { key: key(1), line: 2, status: 'filed', sourceOrderId: 'ord_1' },
        { key: key(2), line: 3, status: 'sending' },
        { key: key(2), line: 3, status: 'rejected', reason: long, errors: [{ path: 'item.price', message: long }] },
        { key: key(3), line: 4, status: 'sending' },
      ]
        .map((e) => JSON.stringify({ ...e, at: '2024-05-01T10:00:00.000Z' }))
        .join('\n') + `\n{"key":"${key(4)}","line":5,"sta`,
    );
    const journal = await Journal.open(path);
    try {
      expect(journal.priorEntries).toBe(5);
      const filed = journal.priorOutcome(key(1));
      expect(filed?.status).toBe('filed');
      expect(await journal.priorDetail(filed as NonNullable<typeof filed>)).toEqual({ sourceOrderId: 'ord_1', reason: undefined });
      const rejected = journal.priorOutcome(key(2));
      expect(rejected?.status).toBe('rejected');
      expect(await journal.priorDetail(rejected as NonNullable<typeof rejected>)).toEqual({ sourceOrderId: undefined, reason: long });
      expect(journal.priorOutcome(key(3))?.status).toBe('sending');
      expect(journal.priorOutcome(key(4))).toBeUndefined();
    } finally {
      await journal.close();
    }
  });
});

describe('the group commit', () => {
  /** The journal's datasyncs (through its io), held until the test lets each call go (or fail), in call order. */
  function heldSyncs() {
    const calls: { release: () => void; fail: (error: Error) => void; wrote: number }[] = [];
    let holding = true;
    const io: JournalIo = {
      datasync(file) {
        const synced = file.datasync();
        if (!holding) return synced;
        return new Promise<void>((resolve, reject) => {
          calls.push({ release: () => synced.then(resolve, reject), fail: reject, wrote: readFileSync(join(dir, 'j.jsonl'), 'utf8').split('\n').length - 1 });
        });
      },
    };
    return { io, calls, stopHolding: () => (holding = false) };
  }
  const settled = (p: Promise<void>) =>
    p.then(
      () => 'durable',
      (e: Error) => `refused: ${e.message}`,
    );
  const turn = () => new Promise((r) => setImmediate(r));
  /** Turns the event loop (no timer) until `done`: a write and its sync are queued within a few turns. */
  async function turnsUntil(done: () => boolean): Promise<void> {
    for (let i = 0; i < 10_000 && !done(); i++) await turn();
    expect(done()).toBe(true);
  }

  /** A journal with two groups written, each one's fdatasync held: `first` and `second` settle to 'durable' or 'refused: …'. */
  async function twoGroupsSyncing() {
    const { io, calls, stopHolding } = heldSyncs();
    const journal = await Journal.open(join(dir, 'j.jsonl'), LOCK_WAIT_MS, io);
    const first = settled(journal.record({ key: key(1), line: 2, status: 'sending' }, '{}'));
    await turnsUntil(() => calls.length === 1);
    const second = settled(journal.record({ key: key(2), line: 3, status: 'sending' }, '{}'));
    // The second group is written and synced without waiting for the first sync.
    await turnsUntil(() => calls.length === 2);
    const close = async () => {
      for (const c of calls) c.release();
      stopHolding();
      await journal.close();
    };
    return { journal, calls, first, second, close };
  }

  it("writes the next group while the last group's fdatasync runs, and releases the groups in order", async () => {
    const { calls, first, second, close } = await twoGroupsSyncing();
    try {
      expect(calls[1]?.wrote).toBe(3);
      const order: string[] = [];
      void first.then(() => order.push('first'));
      void second.then(() => order.push('second'));
      calls[1]?.release();
      for (let i = 0; i < 5; i++) await turn();
      // Durable on disk, but not released before the group written ahead of it.
      expect(order).toEqual([]);
      calls[0]?.release();
      expect(await first).toBe('durable');
      expect(await second).toBe('durable');
      expect(order).toEqual(['first', 'second']);
    } finally {
      await close();
    }
  });

  it('refuses every entry after a failed fdatasync, even one whose own sync returned', async () => {
    const { journal, calls, first, second, close } = await twoGroupsSyncing();
    try {
      calls[1]?.release();
      calls[0]?.fail(Object.assign(new Error('ENOSPC: no space left on device, fdatasync'), { code: 'ENOSPC' }));
      expect(await first).toMatch(/^refused: Cannot write the journal .*j\.jsonl: ENOSPC/);
      expect(await second).toMatch(/^refused: Cannot write the journal/);
      expect(await settled(journal.record({ key: key(3), line: 4, status: 'sending' }, '{}'))).toMatch(/^refused: Cannot write the journal/);
      await expect(journal.flushed()).rejects.toThrow(/Cannot write the journal/);
    } finally {
      await close();
    }
  });

  it('tells the entries it never wrote (the next run sends them) from those it wrote (uncertain next time)', async () => {
    const { journal, calls, first, second, close } = await twoGroupsSyncing();
    const path = join(dir, 'j.jsonl');
    try {
      // Queued in the turn the first sync fails: refused before its group is written.
      const queued = journal.record({ key: key(3), line: 4, status: 'sending' }, '{}').catch((e: unknown) => e);
      calls[1]?.release();
      calls[0]?.fail(Object.assign(new Error('ENOSPC: no space left on device, fdatasync'), { code: 'ENOSPC' }));
      const refused = await queued;
      expect(refused).toBeInstanceOf(NotJournaled);
      expect((refused as NotJournaled).failure).toMatchObject({ message: expect.stringMatching(/^Cannot write the journal .*j\.jsonl: ENOSPC/) });
      const later = await journal.record({ key: key(4), line: 5, status: 'sending' }, '{}').catch((e: unknown) => e);
      expect(later).toBeInstanceOf(NotJournaled);
      // The two groups written before the failure are refused too; the run's failure is the journal's own error.
      const written = await Promise.all([first, second]);
      expect(written.every((w) => w.startsWith('refused: Cannot write the journal'))).toBe(true);
      const flushed = await journal.flushed().catch((e: unknown) => e);
      expect(flushed).not.toBeInstanceOf(NotJournaled);
      expect(flushed).toMatchObject({ hint: expect.stringContaining('Free disk space') });
    } finally {
      await close();
    }
    expect(entries(path).map((e) => e.line)).toEqual([2, 3]);
  });
});

describe('where a group is written', () => {
  it('writes on the main thread, and in the thread pool for the rest of the run once a write was slow', async () => {
    let elapsed = 0;
    let slow = false;
    // Each reading of the clock while `slow` is 10 ms after the last: the next write looks throttled.
    let pooledWrites = 0;
    const journal = await Journal.open(join(dir, 'j.jsonl'), 0, {
      now: () => (slow ? (elapsed += 10) : elapsed),
      write: (file, buffer) => {
        pooledWrites++;
        return file.write(buffer);
      },
    });
    try {
      await journal.record({ key: key(1), line: 2, status: 'sending' }, '{}');
      expect(pooledWrites).toBe(0);
      slow = true;
      await journal.record({ key: key(2), line: 3, status: 'sending' }, '{}');
      expect(pooledWrites).toBe(0);
      slow = false;
      await journal.record({ key: key(3), line: 4, status: 'sending' }, '{}');
      journal.note({ key: key(1), line: 2, status: 'filed', sourceOrderId: 'ord_1' });
      await journal.flushed();
      expect(pooledWrites).toBe(2);
    } finally {
      await journal.close();
    }
    // Every entry is in the file once, in the order it was recorded, whichever thread wrote it.
    const entries = readFileSync(join(dir, 'j.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l));
    expect(entries.map((e) => [e.line, e.status])).toEqual([
      [2, 'sending'],
      [3, 'sending'],
      [4, 'sending'],
      [2, 'filed'],
    ]);
  });
});

/**
 * Each group is written on the main thread (fs.writeSync). What the kernel may do to such a write,
 * injected through the journal's `io`: write part of it (a full disk may stop part way) or refuse it.
 */
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
