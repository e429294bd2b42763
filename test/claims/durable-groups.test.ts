/**
 * When a batch makes its rows durable: a row's intent in the record of claims (its one line before
 * the request; no journal is written) is synced (fdatasync) before its request reaches the server,
 * and the rows are synced in groups as large as the window (--concurrency) allows, not a few rows each.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { type Call, describeCalls, fdPath, straceMissing, traceOpcli } from '../syscall-trace.js';
import { claimsSuite, duplicates, claimBodies, writeRows } from './fixtures.js';

const missing = straceMissing();

let sandbox: Sandbox;
let dir: string;
const { created, env } = claimsSuite((s) => ({ sandbox, dir } = s));

const WRITES = new Set(['write', 'writev', 'pwrite64', 'sendto', 'sendmsg']);
const isRecord = (path: string) => /claims-record-[^/]*\.jsonl$/.test(path);

/** The bytes of a traced write, as strace escapes them in its strings (one, or one a buffer of a writev). */
function written(call: Call): string {
  const quoted = [...call.text.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]).join('');
  return quoted.replace(/\\(x[0-9a-f]{2}|[0-7]{1,3}|.)/g, (_, e: string) => {
    if (e[0] === 'x') return String.fromCharCode(Number.parseInt(e.slice(1), 16));
    if (/^[0-7]+$/.test(e)) return String.fromCharCode(Number.parseInt(e, 8));
    return ({ n: '\n', t: '\t', r: '\r', v: '\v', f: '\f' } as Record<string, string>)[e] ?? e;
  });
}

/** The JSON lines a traced write carried (a line cut between two writes is left out). */
function entries(call: Call): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const text of written(call).split('\n')) {
    try {
      out.push(JSON.parse(text));
    } catch {
      // An empty or partial line.
    }
  }
  return out;
}

/**
 * From the system calls of a batch (the built binary under strace): when each claim request's first
 * byte was written to its socket, and which record intents (by row line) a returned fdatasync of
 * their file had made durable by then.
 */
function durability(calls: Call[]) {
  const synced = (file: (path: string) => boolean) =>
    calls.flatMap((c, at) => ((c.name === 'fdatasync' || c.name === 'fsync') && file(fdPath(c.fd)) && /\)\s+= 0$/.test(c.text) ? [{ c, at }] : []));
  const writesTo = (file: (path: string) => boolean) => calls.filter((c) => WRITES.has(c.name) && file(fdPath(c.fd)));
  /** The entries of `file` whose write ended before a sync of the file that returned before `when`. */
  const durableAt = (file: (path: string) => boolean, when: number) => {
    const lastSync = synced(file)
      .filter(({ c }) => c.end < when)
      .at(-1)?.c;
    return lastSync
      ? writesTo(file)
          .filter((w) => w.end < lastSync.start)
          .flatMap(entries)
      : [];
  };
  const requests = calls.filter((c) => WRITES.has(c.name) && c.fd.includes('TCP') && /POST \/v1\/claims\/offline/.test(c.text));
  return {
    requests: requests.map((r) => ({
      line: Number(/row (\d+)/.exec(written(r))?.[1]) + 1,
      intents: durableAt(isRecord, r.start).filter((e) => e.type === 'intent'),
    })),
    syncs: { record: synced(isRecord).length },
  };
}

describe('the rows a batch makes durable before sending', () => {
  it.skipIf(missing)("no claim reaches the server before its row's intent is synced", async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 120);
    const res = await traceOpcli(['claims', 'file', '--from', path, '--concurrency', '8'], env());
    expect(res.code, res.stderr).toBe(0);
    const { requests, syncs } = durability(res.calls);
    const early: string[] = [];
    for (const { line, intents } of requests) if (!intents.some((e) => e.line === line)) early.push(`line ${line}: its intent was not synced`);
    const shown = describeCalls(res.calls, (c) => c.name.includes('sync') || c.fd.includes('TCP') || isRecord(fdPath(c.fd)));
    expect(requests.length, shown).toBeGreaterThanOrEqual(120);
    expect(early, shown).toEqual([]);
    expect(created()).toHaveLength(120);
    expect(duplicates(claimBodies(sandbox))).toEqual([]);
    expect(syncs.record).toBeGreaterThan(0);
    // No journal is written beside the input: the row is written once, synced once.
    expect(res.calls.some((c) => fdPath(c.fd).endsWith('.journal.jsonl'))).toBe(false);
  });

  it.skipIf(missing)('syncs each file about once per --concurrency rows, not once per few rows', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 400);
    // A stated rate far above the sandbox's (no slow start: docs/http.md#rate-limits) keeps the window
    // full from the first row, so the groups are the window's alone; slow start's ramp (a round of at
    // least 50 ms, each round's rows a group of their own) is the pacing's, tested in test/http/.
    const res = await traceOpcli(['claims', 'file', '--from', path, '--concurrency', '8', '--rate', '100000/s'], env());
    expect(res.code, res.stderr).toBe(0);
    expect(created()).toHaveLength(400);
    const { syncs } = durability(res.calls);
    // 50 full groups of 8; a few more where a row was slow to leave, and the syncs at the start and
    // end. Far from the 400 of a sync a row.
    expect(syncs.record).toBeGreaterThan(0);
    expect(syncs.record).toBeLessThanOrEqual(72);
  });
});
