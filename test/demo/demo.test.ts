/**
 * The tour (`npm start`) is checked by what it did, not by a transcript: every command ended with the
 * code its step meant, a command meant to work printed no error, and the sandbox holds what the
 * narration says was done (claims filed once each, the order updated, one credit paid).
 */
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { runTour, type TourCommand } from '../../src/commands/demo/index.js';
import { createDeps } from '../../src/cli/deps.js';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { displayWidth } from '../../src/text/wrap.js';
import { capturedStreams, runOpcli } from '../helpers.js';

/** The tour run in-process, piped (as in a log), keeping its sandbox to read what it received. */
async function pipedTour(): Promise<{ commands: TourCommand[]; sandbox: Sandbox; stdout: string; stderr: string }> {
  const streams = capturedStreams();
  const deps = createDeps({
    stdin: Readable.from([]),
    stdout: streams.stdout,
    stderr: streams.stderr,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', COLUMNS: '80' },
    cwd: process.cwd(),
  });
  let sandbox: Sandbox | undefined;
  const commands = await runTour(
    {
      keep: false,
      runCli,
      startSandbox: async (options) => {
        sandbox = await startSandbox(options);
        return sandbox;
      },
    },
    deps,
  );
  return { commands, sandbox: sandbox as Sandbox, stdout: streams.out(), stderr: streams.err() };
}

/** How many claims the sandbox created while a command ran (its accepted POSTs of a claim). */
function claimPosts(command: TourCommand): number {
  return command.received.filter((r) => r.method === 'POST' && r.path === '/v1/claims/offline' && r.status >= 200 && r.status < 300).length;
}

describe('opcli demo (npm start), piped', () => {
  let tour: Awaited<ReturnType<typeof pipedTour>>;
  beforeAll(async () => {
    tour = await pipedTour();
  });

  it('runs every step in order, each command ending with the code its step means', () => {
    const steps = [...tour.stderr.matchAll(/^Step (\d+) of (\d+): (.*)$/gm)];
    const total = Number(steps[0]?.[2]);
    expect(steps.map((m) => Number(m[1]))).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    // Every step ran commands, and the record names them in the same order.
    expect([...new Set(tour.commands.map((c) => c.step))]).toEqual(steps.map((m) => m[3]));
    const titles = steps.map((m) => m[3]).join('\n');
    for (const topic of [/Log in/, /orders/i, /variant/i, /session token/i, /claim/i, /batch/i, /store credit/i, /Log out/]) expect(titles).toMatch(topic);
    for (const c of tour.commands) expect(c.code, `opcli ${c.argv.join(' ')}\n${c.stderr}`).toBe(c.expected);
    // A command meant to work shows no error; each step's shown command precedes its output.
    for (const c of tour.commands.filter((c) => c.expected === 0)) expect(c.stderr, `opcli ${c.argv.join(' ')}`).not.toMatch(/^Error:/m);
    expect(tour.stderr).toContain('$ opcli auth login');
    expect(tour.stderr.trimEnd().split('\n').at(-2)).toContain('The tour is over.');
    // Credentials appear masked or not at all.
    expect(tour.stdout + tour.stderr).not.toMatch(/svc_(at|rt|secret)_[A-Za-z0-9]{4,}/);
  });

  it('files the single claim and every batch row, each once: the bad row after it is fixed, filed rows skipped on the rerun', () => {
    const claimRuns = tour.commands.filter((c) => c.argv[0] === 'claims' && c.argv[1] === 'file');
    const batchRuns = claimRuns.filter((c) => c.argv.includes('--from') && !c.argv.includes('--validate-only'));
    // The single claim (its bad flag sent nothing), then the batch: four rows, then the fixed row alone.
    expect(claimRuns.filter((c) => c.argv.includes('--data')).map(claimPosts)).toEqual([0, 1]);
    expect(batchRuns.map(claimPosts)).toEqual([4, 1]);
    expect(batchRuns.map((c) => c.code)).toEqual([3, 0]);
    expect(claimRuns.filter((c) => c.argv.includes('--validate-only')).map((c) => c.received.length)).toEqual([0]);
    // The sandbox holds six claims: one per batch customer, and the single claim's customer once.
    const emails = tour.sandbox.claims.map((c) => (c.payload.customer as { email: string }).email).sort();
    expect(emails).toEqual(['alice', 'bob', 'carol', 'dave', 'erin', 'frank'].map((n) => `${n}@example.com`));
    expect(tour.sandbox.requests.filter((r) => r.method === 'POST' && r.path === '/v1/claims/offline')).toHaveLength(6);
  });

  it('changes what each command says it changes: the order, the variant, the session, one credit, the logout', () => {
    const { sandbox } = tour;
    expect(sandbox.counters.ordersUpdated).toBe(1);
    expect(sandbox.order('ord_000001')?.total).toBe(42.5);
    expect(sandbox.variants.map((v) => v.productId)).toEqual(['prod_mug']);
    expect(sandbox.counters.sessionVerifications).toBeGreaterThanOrEqual(1);
    const { trigger, creditApiIssue, creditApiTopUp, native } = sandbox.counters.creditsPosted;
    expect(trigger + creditApiIssue + creditApiTopUp + native).toBe(1);
    expect(sandbox.loyaltyCard('cust_1001')?.balance).toBe(35);
    expect(sandbox.counters.revocations).toBeGreaterThanOrEqual(1);
  });

  it('passes data through whole: no tab-separated line broken mid-value, and claims template --csv shows its output', () => {
    const lines = tour.stdout.split('\n');
    // The orders list steps' records, each whole on its line: the first shows every field of 5 orders, the second 4 columns of 3.
    const records = lines.filter((l) => /^ord_\d{6}\t/.test(l)).map((l) => l.split('\t').length);
    expect(records).toEqual([...Array(5).fill(records[0]), 4, 4, 4]);
    expect(records[0]).toBeGreaterThan(10);
    expect(tour.stdout).toMatch(/\twoocommerce\t5\.38\t252\.32\t/);
    const header = lines.find((l) => l.startsWith('customer.email,'));
    expect(header).toBeDefined();
    expect(header).toContain(',issueType,resolution');
    // The header stays one line, wider than 80 columns: a pipe gets it as the command wrote it.
    expect((header as string).length).toBeGreaterThan(80);
  });
});

describe('opcli demo on a terminal', () => {
  it('fits an 80-column terminal and ends without an error', async () => {
    const r = await runOpcli(['demo'], { tty: true, env: { NO_COLOR: '1', COLUMNS: '80' } });
    expect(r.code, r.stderr).toBe(0);
    for (const line of (r.stdout + r.stderr).split('\n')) {
      // Progress lines are redrawn in place; what stays on screen is what follows the last erase.
      const shown = line.split('\r\u001b[2K').at(-1) as string;
      expect(displayWidth(shown), shown).toBeLessThanOrEqual(80);
    }
    // The ledger's history keeps its status and amount whole at 80 columns (a table cut them to "issue…" and "25.00…").
    expect(r.stdout).toMatch(/ issued {2}25\.00 USD {2}claim CLM-1001, order #1001$/m);
    expect(r.stdout).not.toMatch(/issue…|25\.00…/);
    const tail = r.stderr.slice(r.stderr.lastIndexOf('Step '));
    expect(tail).toMatch(/^Step \d+ of \d+: Log out/);
    expect(tail).not.toContain('Error:');
  });
});
