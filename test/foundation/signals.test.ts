import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { BIN, sandboxProfile, tempConfigDir } from '../helpers.js';

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
    sandbox.setFaults([{ path: '/v1/orders', latencyMs: 150 }]);
    const r = await interrupt(['orders', 'list', '--all', '--size', '20', '--jsonl'], (out) => out.split('\n').length > 40);
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('Resume with:');
    const lines = r.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(40);
    expect(lines.length).toBeLessThan(2000);
    for (const line of lines) JSON.parse(line);
  });

  it('a claims batch lets the requests in flight finish, journals them and prints the summary', async () => {
    const header = 'customer.email,item.name,item.price,warranty.dateOfPurchase,warranty.warrantyPeriod,shippingAddress.firstName,shippingAddress.lastName,shippingAddress.address1,shippingAddress.city,shippingAddress.zip,shippingAddress.country,signature,salesChannel,claimCategory,issueType,resolution';
    const rows = Array.from({ length: 200 }, (_, i) => `c${i}@example.com,Kettle,10,2026-01-01T00:00:00Z,P1Y,A,B,1 Main St,Town,12345,US,,IN_STORE,WARRANTY,DAMAGED,RESHIP`);
    const csv = join(dir, 'claims.csv');
    writeFileSync(csv, `${header}\n${rows.join('\n')}\n`);
    sandbox.setFaults([{ path: '/v1/claims/offline', latencyMs: 100 }]);
    const r = await interrupt(['claims', 'file', '--from', csv, '--jsonl', '--concurrency', '2'], (out) => out.split('\n').length > 6);
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('Interrupted: no new rows were sent');
    expect(r.stderr).toMatch(/Filed \d+ claim/);
    // Every claim the sandbox created is journaled as filed; nothing is left "sending".
    const journal = readFileSync(`${csv}.journal.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const last = new Map<string, string>();
    for (const e of journal) last.set(e.key, e.status);
    expect([...last.values()].filter((s) => s === 'sending')).toEqual([]);
    expect([...last.values()].filter((s) => s === 'filed')).toHaveLength(sandbox.counters.claimsCreated);
    expect(sandbox.counters.claimsCreated).toBeLessThan(200);
  });
});
