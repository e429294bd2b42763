import { describe, expect, test, vi } from 'vitest';
import { createRecorder } from '../../src/sandbox/server.js';

const request = (i: number) => ({ at: i, method: 'POST', path: '/v1/claims/offline', query: {}, headers: {}, body: `{"n":${i}}` });

describe('request recorder', () => {
  test('a read sees the last max requests, oldest first, however many came before', () => {
    const recorder = createRecorder(100);
    const list = recorder.list;
    for (let i = 1; i <= 1_050; i++) recorder.add(request(i));
    expect(recorder.list).toBe(list);
    expect(recorder.list.map((r) => r.seq)).toEqual(Array.from({ length: 100 }, (_, i) => 951 + i));
    expect(recorder.list.map((r) => r.at)).toEqual(Array.from({ length: 100 }, (_, i) => 951 + i));
    recorder.add(request(1_051));
    expect(recorder.list).toHaveLength(100);
    expect(recorder.list[0]?.seq).toBe(952);
    expect(recorder.list.at(-1)?.seq).toBe(1_051);
    recorder.clear();
    expect(recorder.list).toBe(list);
    expect(recorder.list).toHaveLength(0);
  });

  test('once full, the log is not moved on every request: the oldest are dropped in slices', () => {
    // Dropping one at a time moved the whole log (200,000 entries) per request: the sandbox fell from
    // ~20,000 to ~3,000 requests a second after its 200,000th.
    const recorder = createRecorder(800);
    for (let i = 1; i <= 800; i++) recorder.add(request(i));
    const splice = vi.spyOn(recorder.list, 'splice');
    try {
      for (let i = 801; i <= 10_800; i++) recorder.add(request(i));
      // 10,000 requests past a full log: one slice per max/8 = 100 of them, not one per request.
      expect(splice.mock.calls.length).toBeGreaterThan(0);
      expect(splice.mock.calls.length).toBeLessThanOrEqual(100);
      expect(recorder.list.map((r) => r.seq)).toEqual(Array.from({ length: 800 }, (_, i) => 10_001 + i));
    } finally {
      splice.mockRestore();
    }
  });
});
