import { describe, expect, it } from 'vitest';
import { displayWidth } from '../../src/text/width.js';
import { runOpcli } from '../helpers.js';

describe('opcli demo (npm start)', () => {
  it('runs every step against its own sandbox, in order, without printing a secret', async () => {
    const r = await runOpcli(['demo'], { env: { NO_COLOR: '1' } });
    expect(r.code, r.stderr).toBe(0);
    const steps = [...r.stderr.matchAll(/^Step (\d+) of (\d+): (.*)$/gm)];
    const total = Number(steps[0]?.[2]);
    expect(steps.map((m) => Number(m[1]))).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    const titles = steps.map((m) => m[3]).join('\n');
    for (const topic of [/Log in/, /orders/i, /variant/i, /session token/i, /claim/i, /batch/i, /store credit/i, /Log out/]) expect(titles).toMatch(topic);
    // Each command is shown before it runs, and the last thing said is the end of the tour.
    expect(r.stderr).toContain('$ opcli auth login');
    expect(r.stderr).toContain('$ opcli claims file --from');
    expect(r.stderr.trimEnd().split('\n').at(-2)).toContain('The tour is over.');
    // Credentials appear masked or not at all.
    expect(r.stdout + r.stderr).not.toMatch(/svc_(at|rt|secret)_[A-Za-z0-9]{4,}/);
  }, 60_000);

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
  }, 60_000);
});

describe('opcli demo piped (a log, a file)', () => {
  it('passes data through whole: no tab-separated line broken mid-value, and claims template --csv shows its output', async () => {
    const r = await runOpcli(['demo'], { env: { NO_COLOR: '1', COLUMNS: '80' } });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    // The orders list steps' records, each whole on its line: the first shows every field of 5 orders, the second 4 columns of 3.
    const records = lines.filter((l) => /^ord_\d{6}\t/.test(l)).map((l) => l.split('\t').length);
    expect(records).toEqual([...Array(5).fill(records[0]), 4, 4, 4]);
    expect(records[0]).toBeGreaterThan(10);
    expect(r.stdout).toMatch(/\twoocommerce\t5\.38\t252\.32\t/);
    const header = lines.find((l) => l.startsWith('customer.email,'));
    expect(header).toBeDefined();
    expect(header).toContain(',issueType,resolution');
    // The header stays one line, wider than 80 columns: a pipe gets it as the command wrote it.
    expect((header as string).length).toBeGreaterThan(80);
  }, 60_000);
});
