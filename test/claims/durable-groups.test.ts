/**
 * When a batch makes its rows durable: a row's `sending` line in the journal and its intent in the
 * record of claims are synced (fdatasync) before its request reaches the server, and the rows are
 * synced in groups as large as the window (--concurrency) allows, not a few rows each.
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { fileHandlePrototype, runOpcli } from '../helpers.js';
import { claimsSuite, duplicates, claimBodies, rowOf, writeRows } from './fixtures.js';

let sandbox: Sandbox;
let dir: string;
const { created, env } = claimsSuite((s) => ({ sandbox, dir } = s));

afterEach(() => {
  // The sandbox's log is one array for the whole file: its own push again.
  Reflect.deleteProperty(sandbox.requests, 'push');
  vi.restoreAllMocks();
  syncBuiltinESMExports();
});

/** The file an open descriptor is (Linux: /proc/self/fd). */
const pathOf = (fd: number) => fs.readlinkSync(`/proc/self/fd/${fd}`);

/** The JSON lines of a file that parse (a line being written may be cut short). */
function entries(path: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const text of fs.readFileSync(path, 'utf8').split('\n')) {
    try {
      out.push(JSON.parse(text));
    } catch {
      // An empty or partial line.
    }
  }
  return out;
}

/**
 * Counts the fdatasyncs of the journal (FileHandle.datasync) and of the record of claims
 * (fs.fdatasync), and tells which lines each one made durable: the lines in the file when it began.
 * `recordSyncMs` makes each sync of the record return that much later than the journal's.
 */
async function watchSyncs(journal: string, recordSyncMs = 0) {
  const durableLines = new Set<number>();
  const durableKeys = new Set<string>();
  const syncs = { journal: 0, record: 0 };
  const proto = await fileHandlePrototype();
  const realDatasync = proto.datasync;
  vi.spyOn(proto, 'datasync').mockImplementation(function (this: FileHandle) {
    if (pathOf(this.fd) !== journal) return realDatasync.call(this);
    syncs.journal++;
    const lines = entries(journal).flatMap((e) => (e.status === 'sending' ? [e.line as number] : []));
    return realDatasync.call(this).then(() => {
      for (const line of lines) durableLines.add(line);
    });
  });
  const realFdatasync = fs.fdatasync;
  vi.spyOn(fs, 'fdatasync').mockImplementation(((fd: number, done: (error: NodeJS.ErrnoException | null) => void) => {
    const path = pathOf(fd);
    if (!/claims-record-[^/]*\.jsonl$/.test(path)) return realFdatasync(fd, done);
    syncs.record++;
    const keys = entries(path).flatMap((e) => (e.type === 'intent' ? [e.key as string] : []));
    realFdatasync(fd, (error) =>
      setTimeout(() => {
        if (!error) for (const key of keys) durableKeys.add(key);
        done(error);
      }, recordSyncMs),
    );
  }) as typeof fs.fdatasync);
  // The named export `fdatasync` of node:fs (what src/ imports) follows the spy.
  syncBuiltinESMExports();
  return { durableLines, durableKeys, syncs };
}

/** Calls `arrived` with each claim request as the sandbox receives it, before it is answered. */
function onClaimArrival(arrived: (body: string) => void): void {
  const list = sandbox.requests;
  const push = list.push;
  list.push = (...items) => {
    for (const r of items) if (r.method === 'POST' && r.path === '/v1/claims/offline') arrived(r.body);
    return push.apply(list, items);
  };
}

describe('the rows a batch makes durable before sending', () => {
  it("no claim reaches the server before its row's `sending` line and its intent are synced", async () => {
    const path = join(dir, 'claims.csv');
    const journal = `${path}.journal.jsonl`;
    writeRows(path, 120);
    // The record's syncs return last: a request let go on the journal's alone would arrive early.
    const { durableLines, durableKeys, syncs } = await watchSyncs(journal, 3);
    const early: string[] = [];
    onClaimArrival((body) => {
      const line = rowOf(body) + 1;
      if (!durableLines.has(line)) early.push(`line ${line}: its sending line was not synced`);
      const key = entries(journal).find((e) => e.status === 'sending' && e.line === line)?.key as string | undefined;
      if (!key || !durableKeys.has(key)) early.push(`line ${line}: its intent was not synced`);
    });
    const res = await runOpcli(['claims', 'file', '--from', path, '--concurrency', '8'], { env: env() });
    expect(res.code).toBe(0);
    expect(early).toEqual([]);
    expect(created()).toHaveLength(120);
    expect(duplicates(claimBodies(sandbox))).toEqual([]);
    expect(syncs.journal).toBeGreaterThan(0);
    expect(syncs.record).toBeGreaterThan(0);
  });

  it('syncs each file about once per --concurrency rows, not once per few rows', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 400);
    const { syncs } = await watchSyncs(`${path}.journal.jsonl`);
    const res = await runOpcli(['claims', 'file', '--from', path, '--concurrency', '8'], { env: env() });
    expect(res.code).toBe(0);
    expect(created()).toHaveLength(400);
    // 50 full groups of 8; a few more where a row was slow to leave, and the syncs at the start and end.
    expect(syncs.journal).toBeLessThanOrEqual(60);
    expect(syncs.record).toBeLessThanOrEqual(60);
  });
});
