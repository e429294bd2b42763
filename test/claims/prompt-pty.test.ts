/**
 * `claims file` asking for missing fields in a real pseudo-terminal at 80 columns (util-linux
 * `script`, the built binary, @inquirer/prompts): the questions are in words, and a refused answer
 * shows the batch's message for that field, not zod's.
 */
import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLAIM_FIELDS } from '../../src/claims/fields.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { BIN } from '../helpers.js';
import { claimBodies, claimsSuite, row } from './fixtures.js';

const hasScript = spawnSync('script', ['--version']).status === 0;

let sandbox: Sandbox;
const { env } = claimsSuite((s) => ({ sandbox } = s));

/** Runs `argv` in an 80-column pty; each time the screen shows an expected text, types its answer. */
function inPty(argv: string[], environment: Record<string, string>, answers: [string, string][]): Promise<{ code: number | null; screen: string }> {
  return new Promise((resolve) => {
    const command = ['stty', 'cols', '80', 'rows', '40', ';', ...[process.execPath, BIN, ...argv].map((a) => `'${a.replace(/'/g, "'\\''")}'`)].join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm', ...environment } });
    let screen = '';
    let next = 0;
    let seenUpTo = 0;
    child.stdout.on('data', (chunk) => {
      screen += chunk.toString();
      const pending = answers[next];
      if (pending && screen.indexOf(pending[0], seenUpTo) >= 0) {
        seenUpTo = screen.length;
        next++;
        child.stdin.write(`${pending[1]}\r`);
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen: screen.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '') });
    });
  });
}

describe.runIf(hasScript)('claims file prompts in a pseudo-terminal', () => {
  it("asks in words and answers a bad value with the batch's message", async () => {
    const values = row(1);
    const ask = new Set(['customer.email', 'warranty.dateOfPurchase']);
    const flags = CLAIM_FIELDS.flatMap((f) => {
      const value = values[f.key as keyof typeof values];
      if (ask.has(f.key) || value === undefined || f.type === 'boolean' || (value === '' && !f.required)) return [];
      return [`--${f.flag}`, value];
    });
    const r = await inPty(['claims', 'file', ...flags, '--dry-run'], env(), [
      ['Customer email (an e-mail address such as alice@example.com):', ''],
      ['missing (required: an e-mail address', 'bob@example.com'],
      ['Warranty date of purchase (', '2024-02-30T10:00:00Z'],
      ['is not a date that exists', '\u00152024-02-29T10:00:00Z'],
    ]);
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).not.toContain('customer.email:');
    expect(r.screen).not.toContain('Invalid ISO');
    expect(r.screen).toContain('"2024-02-30T10:00:00Z" is not a date that exists: February 2024 has 29 days');
    expect(r.screen).toContain('"email": "bob@example.com"');
    expect(r.screen).toContain('"dateOfPurchase": "2024-02-29T10:00:00Z"');
    expect(claimBodies(sandbox)).toHaveLength(0);
  });
});
