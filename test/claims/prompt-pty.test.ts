/**
 * `claims file` asking for missing fields in a real pseudo-terminal at 80 columns (util-linux
 * `script`, the built binary, @inquirer/prompts): the questions are in words, and a refused answer
 * shows the batch's message for that field, not zod's.
 */
import { describe, expect, it } from 'vitest';
import { CLAIM_FIELDS } from '../../src/claims/fields.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { hasScript, inPty } from '../pty.js';
import { claimBodies, claimsSuite, row } from './fixtures.js';

let sandbox: Sandbox;
const { env } = claimsSuite((s) => ({ sandbox } = s));

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
