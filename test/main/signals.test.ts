import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { BIN, sandboxProfile, tempConfigDir, until } from '../helpers.js';
import { hasScript } from '../pty.js';
import { batchByLine } from '../claims/fixtures.js';

let sandbox: Sandbox;
let dir: string;
let cleanup: () => void;
beforeEach(async () => {
  sandbox = await startSandbox({ orders: 2000 });
  ({ dir, cleanup } = tempConfigDir());
  await sandboxProfile(sandbox, dir);
});
afterEach(async () => {
  await sandbox.close();
  cleanup();
});

/** A claims CSV of `n` valid rows in the test's folder; returns its path. */
function claimsCsv(n: number): string {
  const header =
    'customer.email,item.name,item.price,warranty.dateOfPurchase,warranty.warrantyPeriod,shippingAddress.firstName,shippingAddress.lastName,shippingAddress.address1,shippingAddress.city,shippingAddress.zip,shippingAddress.country,signature,salesChannel,claimCategory,issueType,resolution';
  const rows = Array.from(
    { length: n },
    (_, i) => `c${i}@example.com,Kettle,10,2026-01-01T00:00:00Z,P1Y,A,B,1 Main St,Town,12345,US,,IN_STORE,WARRANTY,DAMAGED,RESHIP`,
  );
  const csv = join(dir, 'claims.csv');
  writeFileSync(csv, `${header}\n${rows.join('\n')}\n`);
  return csv;
}

/** Runs the built binary, sends one SIGINT once `ready(stdout)` holds, and collects the result. */
function interrupt(args: string[], ready: (stdout: string) => boolean) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, OPCLI_CONFIG_DIR: dir, NO_COLOR: '1' }, cwd: dir });
    let stdout = '';
    let stderr = '';
    let sent = false;
    child.stdout.on('data', (c) => {
      stdout += c;
      if (!sent && ready(stdout)) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('one Ctrl-C (a real SIGINT to the built binary) stops cleanly', () => {
  it('orders list --all writes what it fetched and prints the resume command', async () => {
    sandbox.setFaults([{ path: '/v1/orders', latencyMs: 20 }]);
    const r = await interrupt(['orders', 'list', '--all', '--size', '20', '--jsonl'], (out) => out.split('\n').length > 40);
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('Resume with:');
    const lines = r.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(40);
    expect(lines.length).toBeLessThan(2000);
    for (const line of lines) JSON.parse(line);
  });

  it('a claims batch lets the requests in flight finish, journals them and prints the summary', async () => {
    const csv = claimsCsv(200);
    sandbox.setFaults([{ path: '/v1/claims/offline', latencyMs: 100 }]);
    const r = await interrupt(['claims', 'file', '--from', csv, '--jsonl', '--concurrency', '2'], (out) => out.split('\n').length > 6);
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('Interrupted: no new rows were sent');
    expect(r.stderr).toMatch(/Filed \d+ claim/);
    // Every claim the sandbox created is recorded as filed in the record of claims; nothing is left "sending".
    const last = new Map([...batchByLine(`${csv}.journal.jsonl`, dir)].map(([line, e]) => [line, e.status]));
    expect([...last.values()].filter((s) => s === 'sending')).toEqual([]);
    expect([...last.values()].filter((s) => s === 'filed')).toHaveLength(sandbox.counters.claimsCreated);
    expect(sandbox.counters.claimsCreated).toBeLessThan(200);
    // The next run files every other row once, those read and held back or journaled but not sent included.
    sandbox.setFaults([]);
    const rerun = await watch(['claims', 'file', '--from', csv, '--jsonl', '--concurrency', '2'], () => {});
    expect(rerun.code).toBe(0);
    // A line per row, then the summary.
    expect(rerun.stdout.trim().split('\n')).toHaveLength(201);
    expect(sandbox.counters.claimsCreated).toBe(200);
  });
});

/**
 * Runs the built binary; `on` sees the output so far after every chunk and may signal the child.
 * Resolves with the exit code once the process has ended.
 */
function watch(args: string[], on: (seen: { stdout: string; stderr: string }, child: ChildProcess) => void, started?: (child: ChildProcess) => void) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, OPCLI_CONFIG_DIR: dir, NO_COLOR: '1' }, cwd: dir });
    started?.(child);
    const seen = { stdout: '', stderr: '' };
    child.stdout.on('data', (c) => {
      seen.stdout += c;
      on(seen, child);
    });
    child.stderr.on('data', (c) => {
      seen.stderr += c;
      on(seen, child);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, ...seen });
    });
  });
}

describe('whole-process stops', () => {
  it('a second Ctrl-C stops at once, without waiting for the requests in flight, and prints the summary', async () => {
    const csv = claimsCsv(20);
    // The claims are held for a minute: a clean stop would wait for them; a second Ctrl-C must not.
    sandbox.setFaults([{ path: '/v1/claims/offline', latencyMs: 60_000 }]);
    const inFlight = () => sandbox.requests.filter((r) => r.path === '/v1/claims/offline').length;
    let first = false;
    let second = false;
    const poll = setInterval(() => {
      // The first Ctrl-C once the server holds the first request. Slow start lets no other leave
      // before it is answered (docs/http.md#rate-limits): the second row waits for its turn, and a
      // row that never left is not sent, never uncertain.
      if (!first && inFlight() === 1) {
        first = true;
        child?.kill('SIGINT');
      }
    }, 5);
    let child: ChildProcess | undefined;
    const r = await watch(
      ['claims', 'file', '--from', csv, '--jsonl', '--concurrency', '2'],
      (seen, c) => {
        if (!second && seen.stderr.includes('Ctrl-C again to stop now')) {
          second = true;
          c.kill('SIGINT');
        }
      },
      (c) => {
        child = c;
      },
    );
    clearInterval(poll);
    expect(second).toBe(true);
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('waiting for 1 request in flight');
    expect(r.stderr).toMatch(/Filed 0 claims; .* 1 uncertain/);
    expect(r.stderr).toContain('--retry-uncertain');
    // The server never answered: the process did not wait for it.
    expect(sandbox.counters.claimsCreated).toBe(0);
    expect(inFlight()).toBe(1);
  });

  it('SIGTERM stops orders list --all cleanly: what was fetched is written, exit 130 as for Ctrl-C', async () => {
    sandbox.setFaults([{ path: '/v1/orders', latencyMs: 20 }]);
    let sent = false;
    const r = await watch(['orders', 'list', '--all', '--size', '20', '--jsonl'], (seen, child) => {
      if (!sent && seen.stdout.split('\n').length > 40) {
        sent = true;
        child.kill('SIGTERM');
      }
    });
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('Resume with:');
    expect(r.stderr).not.toMatch(/Error|at .*\.js:\d+/);
    const lines = r.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(40);
    expect(lines.length).toBeLessThan(2000);
    for (const line of lines) JSON.parse(line);
  });

  it('SIGHUP (the terminal closed) ends a claims batch as Ctrl-C does: its state journaled, the summary, exit 130 (issue 43 row 5)', async () => {
    const csv = claimsCsv(200);
    sandbox.setFaults([{ path: '/v1/claims/offline', latencyMs: 100 }]);
    let sent = false;
    // claims file --from runs in the shim's child: the hang-up reaches the shim and is relayed.
    const r = await watch(['claims', 'file', '--from', csv, '--jsonl', '--concurrency', '2'], (seen, child) => {
      if (!sent && seen.stdout.split('\n').length > 6) {
        sent = true;
        child.kill('SIGHUP');
      }
    });
    expect(sent).toBe(true);
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/Filed \d+ claim/);
    const last = new Map([...batchByLine(`${csv}.journal.jsonl`, dir)].map(([line, e]) => [line, e.status]));
    expect([...last.values()].filter((s) => s === 'sending')).toEqual([]);
    expect([...last.values()].filter((s) => s === 'filed')).toHaveLength(sandbox.counters.claimsCreated);
    expect(sandbox.counters.claimsCreated).toBeLessThan(200);
  });

  /**
   * Runs a 200-row batch in a terminal (`script`) through the shell line `shell(opcli, exitFile)`,
   * closes the terminal once 4 claims are filed, and checks what is left: opcli ended by the hang-up
   * once its state was written (128 + SIGHUP), never by Node's abort restoring a terminal that no
   * longer exists (134, nodejs/node#51519); no row left in flight, every filed claim recorded.
   */
  async function closeTerminalMidBatch(prefix: string[], shell: (opcli: string, exitFile: string) => string) {
    const csv = claimsCsv(200);
    sandbox.setFaults([{ path: '/v1/claims/offline', latencyMs: 100 }]);
    const exitFile = join(dir, 'exit-code');
    const opcli = [...prefix, process.execPath, BIN, 'claims', 'file', '--from', csv, '--concurrency', '2'].map(quote).join(' ');
    const terminal = spawn('script', ['-qfec', shell(opcli, quote(exitFile)), '/dev/null'], {
      env: { PATH: process.env.PATH, HOME: dir, TERM: 'xterm', OPCLI_CONFIG_DIR: dir },
    });
    terminal.stdout.resume();
    await until(() => sandbox.counters.claimsCreated >= 4);
    // The terminal emulator closes: its side of the pty is gone.
    terminal.kill('SIGKILL');
    await until(() => existsSync(exitFile) && readFileSync(exitFile, 'utf8').endsWith('\n'));
    expect(readFileSync(exitFile, 'utf8').trim()).toBe('129');
    const last = new Map([...batchByLine(`${csv}.journal.jsonl`, dir)].map(([line, e]) => [line, e.status]));
    expect([...last.values()].filter((s) => s === 'sending')).toEqual([]);
    expect([...last.values()].filter((s) => s === 'filed')).toHaveLength(sandbox.counters.claimsCreated);
    expect(sandbox.counters.claimsCreated).toBeLessThan(200);
  }
  const quote = (a: string) => `'${a.replace(/'/g, "'\\''")}'`;

  it.runIf(hasScript)(
    'closing the terminal (its pty goes away) mid-batch: the hang-up is handled, writes to the gone terminal ignored, state journaled, ended by the hang-up',
    // The shell passes the hang-up on to its job, as an interactive shell does, then writes down
    // opcli's exit status (a wait cut short by the trap is waited again).
    () =>
      closeTerminalMidBatch(
        [],
        (opcli, exitFile) =>
          `trap 'kill -HUP $pid' HUP; ${opcli} & pid=$!; wait $pid; status=$?; while kill -0 $pid 2>/dev/null; do wait $pid; status=$?; done; echo $status > ${exitFile}`,
      ),
  );

  // setsid: opcli is outside the terminal's session, so no SIGHUP reaches it when the terminal goes;
  // only its next write to the terminal fails (EIO). Before, that write's error was thrown: the batch
  // ended without its state, and Node aborted restoring the gone terminal (134).
  it.runIf(hasScript)('a terminal that goes away without a hang-up reaching opcli (started with setsid): its EIO is the hang-up, never a crash', () =>
    closeTerminalMidBatch(['setsid'], (opcli, exitFile) => `trap '' HUP; ${opcli} & pid=$!; wait $pid; echo $? > ${exitFile}`),
  );

  it('`opcli orders list --all | head -1` exits quietly when the reader goes away', async () => {
    const script = `"${process.execPath}" "${BIN}" orders list --all --size 20 --jsonl | head -1; echo "opcli exit \${PIPESTATUS[0]}" >&2`;
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn('bash', ['--norc', '--noprofile', '-c', script], {
        env: { PATH: process.env.PATH, HOME: dir, OPCLI_CONFIG_DIR: dir, NO_COLOR: '1' },
        cwd: dir,
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(r.stdout).sourceOrderId).toBeDefined();
    // Nothing but the exit status on stderr: no EPIPE error, no stack trace.
    expect(r.stderr).toBe('opcli exit 0\n');
    // It stopped early instead of reading all 2,000 orders into a closed pipe.
    expect(sandbox.requests.filter((q) => q.path === '/v1/orders').length).toBeLessThan(100);
  });
});
