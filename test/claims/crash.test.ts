import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { BIN, ROOT, runBinary, runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';
import { type TeamRecord, teamRecord } from '../giftcard/fixture.js';
import { batchLines, claimBodies, duplicates, heldSandbox, onBackend, RECORD_BACKENDS, results, rowOf, writeRows } from './fixtures.js';

let sandbox: Sandbox;
let dir: string;
let cleanup: () => void;
/** The record-url of the test's own database, when the record of claims is in PostgreSQL (fixtures.ts RECORD_BACKENDS). */
let recordEnv: Record<string, string> = {};
/** That database, for what it holds of a batch (fixtures.ts batchLines). */
let team: TeamRecord | undefined;

beforeAll(async () => {
  sandbox = await startSandbox();
  ({ dir, cleanup } = tempConfigDir());
  await sandboxProfile(sandbox, dir);
});
afterAll(async () => {
  await sandbox.close();
  cleanup();
});

/** The built binary filing `path` as a user starts it, its stderr collected. */
function startBatch(path: string, concurrency: number, configDir: string) {
  const child = spawn(process.execPath, [BIN, 'claims', 'file', '--from', path, '--concurrency', String(concurrency)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, OPCLI_CONFIG_DIR: configDir, ...recordEnv },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const run = {
    child,
    stderr: '',
    exited: new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal }))),
  };
  child.stderr.on('data', (c) => {
    run.stderr += c.toString();
  });
  return run;
}

/** Sends `signal` to the run as soon as `ready()` holds; fails (and kills it) if that takes 20 s. */
function signalWhen(run: ReturnType<typeof startBatch>, ready: () => boolean, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve, reject) => {
    const stop = () => {
      clearInterval(poll);
      clearTimeout(limit);
    };
    const poll = setInterval(() => {
      if (!ready()) return;
      stop();
      run.child.kill(signal);
      resolve();
    }, 2);
    const limit = setTimeout(() => {
      stop();
      run.child.kill('SIGKILL');
      reject(new Error(`the batch never got there: ${run.stderr}`));
    }, 20_000);
  });
}

// The same kills with the record of claims in files and in the team's PostgreSQL.
for (const record of RECORD_BACKENDS) {
  describe(onBackend(record), () => {
    beforeEach(async () => {
      team = record === 'database' ? await teamRecord() : undefined;
      recordEnv = team?.env(0) ?? {};
    });

    describe('kill -9 in the middle of a batch (built binary)', () => {
      it('loses nothing and files nothing twice: rows in flight at the kill come back uncertain and are not resent', async () => {
        const held = await heldSandbox();
        try {
          const path = join(held.dir, 'big.csv');
          const total = 150;
          writeRows(path, total);
          // Claims are created at once but answered late (as the test moves the clock), so requests are in
          // flight when the kill lands, and the batch cannot finish before it, however loaded the machine.
          held.sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', phase: 'after', latencyMs: 40 }]);
          const run = startBatch(path, 8, held.dir);
          const stopPump = held.pump();
          await signalWhen(run, () => held.sandbox.counters.claimsCreated >= 100, 'SIGKILL').finally(stopPump);
          expect((await run.exited).signal).toBe('SIGKILL');
          held.sandbox.setFaults([]);

          const journalPath = `${path}.journal.jsonl`;
          const atKill = await batchLines(journalPath, held.dir, team);
          const inFlight = [...atKill.entries()].filter(([, e]) => e.status === 'sending').map(([line]) => line);
          // The record of claims holds each in-flight row's intent, written before its request left.
          expect(inFlight.length).toBeGreaterThan(0);
          const createdAtKill = claimBodies(held.sandbox).map(rowOf);
          for (const r of createdAtKill) expect(atKill.has(r + 1)).toBe(true);

          // The same command again (in-process, so the results can be read): the stale lock is reclaimed.
          const rerun = await runOpcli(['claims', 'file', '--from', path, '--concurrency', '8', '--jsonl'], {
            env: { OPCLI_CONFIG_DIR: held.dir, ...recordEnv },
          });
          expect(rerun.code).toBe(3);
          const rows = results(rerun.stdout);
          expect(rows.map((r) => r.line)).toEqual(Array.from({ length: total }, (_, i) => i + 2));
          for (const r of rows) expect(['filed', 'rejected', 'uncertain']).toContain(r.status);
          // Rows that were in flight at the kill are uncertain and were not resent.
          const uncertain = rows.filter((r) => r.status === 'uncertain').map((r) => r.line);
          expect(uncertain.sort((a, b) => a - b)).toEqual(inFlight.sort((a, b) => a - b));
          expect(rerun.stderr).toContain('Uncertain from an earlier run');
          // No two identical bodies ever reached the sandbox, and every filed row is there.
          const bodies = claimBodies(held.sandbox);
          expect(duplicates(bodies)).toEqual([]);
          const ids = new Set(held.sandbox.claims.map((c) => c.sourceOrderId));
          const filed = rows.filter((r) => r.status === 'filed');
          expect(filed.length).toBe(total - inFlight.length);
          for (const r of filed) expect(ids.has(r.sourceOrderId as string)).toBe(true);
          // Every row was sent at most once; a row never received was one recorded as in flight (the kill
          // landed between its intent and its request), which is why such rows are uncertain.
          const received = new Set(bodies.map(rowOf));
          expect(received.size).toBe(bodies.length);
          const neverReceived = Array.from({ length: total }, (_, i) => i + 1).filter((r) => !received.has(r));
          for (const r of neverReceived) expect(inFlight).toContain(r + 1);
        } finally {
          await held.close();
        }
      }, 60_000);

      it('the built binary prints the progress-free summary on a pipe and exits 3 on a file with an invalid row', async () => {
        const path = join(dir, 'small.csv');
        writeRows(path, 3);
        const res = await runBinary(['claims', 'file', '--from', path, '--validate-only'], { env: { OPCLI_CONFIG_DIR: dir, ...recordEnv } });
        expect(res.code).toBe(0);
        expect(res.stderr).toBe('Checked 3 rows: 3 valid, 0 invalid. Nothing was sent.\n');
        expect(res.stdout).toBe('');
      });
    });

    describe('kill -9, then the journal deleted (built binary)', () => {
      it('the rows in flight at the kill stay uncertain in the record of claims: the same file run again sends none of them twice', async () => {
        const held = await heldSandbox();
        try {
          const path = join(held.dir, 'gone.csv');
          const total = 60;
          writeRows(path, total);
          held.sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', phase: 'after', latencyMs: 40 }]);
          const run = startBatch(path, 8, held.dir);
          const stopPump = held.pump();
          await signalWhen(run, () => held.sandbox.counters.claimsCreated >= 20, 'SIGKILL').finally(stopPump);
          expect((await run.exited).signal).toBe('SIGKILL');
          held.sandbox.setFaults([]);
          const journalPath = `${path}.journal.jsonl`;
          const inFlight = [...(await batchLines(journalPath, held.dir, team)).entries()].filter(([, e]) => e.status === 'sending').map(([line]) => line);
          expect(inFlight.length).toBeGreaterThan(0);
          rmSync(journalPath, { force: true });

          const rerun = await runOpcli(['claims', 'file', '--from', path, '--concurrency', '8', '--jsonl'], {
            env: { OPCLI_CONFIG_DIR: held.dir, ...recordEnv },
          });
          expect(rerun.code).toBe(3);
          const rows = results(rerun.stdout);
          // In flight at the kill: uncertain, never sent again. CHOICE (docs/spec-choices.md#the-same-batch):
          // the journal gone, the record still names the batch, so they are its uncertain rows, no longer held as another file's.
          for (const line of inFlight) {
            const r = rows.find((x) => x.line === line);
            expect(r?.status).toBe('uncertain');
            expect(r?.earlier).toBe(true);
          }
          expect(duplicates(claimBodies(held.sandbox))).toEqual([]);
        } finally {
          await held.close();
        }
      }, 60_000);
    });

    describe('two reruns at once after a kill -9 (built binary)', () => {
      it("with files, exactly one takes the record's lock and the other is refused; with the database both run; every row reaches the service once", async () => {
        // Answers are held while the clock stands, so the rerun that takes the lock holds it for as
        // long as the test wants, not for a guessed time.
        const held = await heldSandbox();
        try {
          const path = join(held.dir, 'two-reruns.csv');
          const total = 150;
          writeRows(path, total);
          held.sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', phase: 'after', latencyMs: 30 }]);
          const killed = startBatch(path, 4, held.dir);
          const stopPump = held.pump();
          await signalWhen(killed, () => held.sandbox.claims.length >= 100, 'SIGKILL').finally(stopPump);
          expect((await killed.exited).signal).toBe('SIGKILL');
          const journalPath = `${path}.journal.jsonl`;
          const inFlight = [...(await batchLines(journalPath, held.dir, team)).entries()].filter(([, e]) => e.status === 'sending').map(([line]) => line);

          // Both reruns start with the clock standing. Files: the one that takes the record's lock waits
          // for its first answers, so the other finds it taken; neither is willing to wait (--lock-wait
          // 0s): which one loses is a race, and the winner takes the dead run's lock at once whatever its
          // wait. The database takes no lock: both run, and its unique key gives each row's attempt to one.
          const args = ['claims', 'file', '--from', path, '--concurrency', '4', '--lock-wait', '0s'];
          const runs = [
            runBinary(args, { env: { OPCLI_CONFIG_DIR: held.dir, ...recordEnv } }),
            runBinary(args, { env: { OPCLI_CONFIG_DIR: held.dir, ...recordEnv } }),
          ] as const;
          let stop = () => {};
          if (record === 'file') {
            const first = await Promise.race(runs);
            expect(first.stderr).toContain('Another opcli run is filing claims for this store');
          }
          // Only now may the other finish.
          stop = held.pump();
          const [a, b] = await Promise.all(runs).finally(stop);
          held.sandbox.setFaults([]);
          const refused = [a, b].filter((r) => r.stderr.includes('Another opcli run is filing claims for this store'));
          const proceeded = [a, b].filter((r) => !refused.includes(r));
          if (record === 'file') {
            expect(refused).toHaveLength(1);
            // The record's lock is the one lock of a batch (no journal is written): its refusal is exit 3, nothing sent.
            expect(refused[0]?.code).toBe(3);
            expect(refused[0]?.stderr).toContain('nothing was sent');
          } else expect(refused).toHaveLength(0);
          // The rows in flight at the kill are uncertain (exit 3); every other row was filed.
          for (const run of proceeded) {
            expect(run.code).toBe(3);
            expect(run.stderr).toContain('Uncertain from an earlier run');
          }
          const bodies = claimBodies(held.sandbox);
          expect(duplicates(bodies)).toEqual([]);
          const received = new Set(bodies.map(rowOf));
          expect(received.size).toBe(bodies.length);
          // Each row reached the service once, except rows recorded as in flight that the kill stopped before they left.
          for (let r = 1; r <= total; r++) if (!received.has(r)) expect(inFlight).toContain(r + 1);
          expect(received.size).toBeGreaterThanOrEqual(total - inFlight.length);
        } finally {
          await held.close();
        }
      }, 60_000);
    });

    describe('Ctrl-C twice (built binary)', () => {
      it('the first prints at once what is in flight; the second prints the summary, lists the uncertain rows and exits 130', async () => {
        // After the first 8, every claim is created and its answer held (the clock never moves): the
        // notice must come while they are in flight, and the second Ctrl-C must not wait for them.
        const held = await heldSandbox();
        try {
          const path = join(held.dir, 'ctrl-c.csv');
          writeRows(path, 200);
          held.sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', phase: 'after', latencyMs: 300, after: 8 }]);
          const run = startBatch(path, 4, held.dir);
          await signalWhen(run, () => held.sandbox.claims.length >= 10, 'SIGINT');
          await signalWhen(run, () => run.stderr.includes('Stopping:'), 'SIGINT');
          expect(run.stderr).toMatch(/Stopping: waiting for [1-4] requests? in flight \(Ctrl-C again to stop now\)/);
          expect((await run.exited).code).toBe(130);
          expect(run.stderr).toMatch(/Filed \d+ claims; 0 rejected by the API, 0 invalid \(not sent\), [1-4] uncertain/);
          expect(run.stderr).toMatch(/Uncertain \(in flight when stopped; the claims may exist\): lines? \d+/);
          // Nothing answered after the first 8: the process did not wait for the held answers.
          expect(held.sandbox.requests.filter((r) => r.path === '/v1/claims/offline' && r.status !== 0)).toHaveLength(8);
        } finally {
          await held.close();
        }
      }, 30_000);
    });
  });
}
