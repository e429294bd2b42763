/**
 * The accessible mode (OPCLI_ACCESSIBLE=1, the `accessible` setting) in a real pseudo-terminal at 80
 * columns: questions in plain lines, a choice as a numbered list answered by its number, nothing
 * redrawn (no cursor movement, no line erased), a refused answer said and asked again.
 */
import { describe, expect, it } from 'vitest';
import { CLAIM_FIELDS } from '../../src/claims/fields.js';
import { RESOLUTIONS } from '../../src/schemas.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { hasScript, inPty } from '../pty.js';
import { claimBodies, claimsSuite, row } from './fixtures.js';

let sandbox: Sandbox;
const { env } = claimsSuite((s) => ({ sandbox } = s));

/** The flags of a whole claim, less the fields in `ask`. */
function flagsWithout(ask: Set<string>): string[] {
  const values = row(1);
  return CLAIM_FIELDS.flatMap((f) => {
    const value = values[f.key as keyof typeof values];
    if (ask.has(f.key) || value === undefined || f.type === 'boolean' || (value === '' && !f.required)) return [];
    return [`--${f.flag}`, value];
  });
}

describe.runIf(hasScript)('the accessible mode in a pseudo-terminal', () => {
  it('lists the choices of an enum with numbers, takes a number, and redraws nothing', async () => {
    const flags = flagsWithout(new Set(['resolution', 'customer.email']));
    const r = await inPty(['claims', 'file', ...flags, '--dry-run'], { ...env(), OPCLI_ACCESSIBLE: '1' }, [
      ['Customer email (an e-mail address such as alice@example.com):', 'bob'],
      ['Not accepted:', 'bob@example.com'],
      [`Type a number from 1 to ${RESOLUTIONS.length}: `, '9'],
      ['is not one of the numbers', String(RESOLUTIONS.indexOf('REFUND') + 1)],
    ]);
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).toContain(RESOLUTIONS.map((v, i) => `  ${i + 1}. ${v}`).join('\r\n'));
    expect(r.screen).toContain('"resolution": "REFUND"');
    expect(r.screen).toContain('"email": "bob@example.com"');
    // Nothing redrawn: no line erased, no cursor moved up or sideways, no hidden cursor.
    expect(r.raw).not.toMatch(/\x1b\[(\d*[ABCDGK]|2K|\?25l)/);
    expect(claimBodies(sandbox)).toHaveLength(0);
  });

  it('asks the confirmation as a plain yes-or-no line, says a refused answer, and files on yes', async () => {
    const r = await inPty(['claims', 'file', ...flagsWithout(new Set())], { ...env(), OPCLI_ACCESSIBLE: '1' }, [
      ['(yes or no, Enter for no) ', 'maybe'],
      ['Not accepted: answer yes or no.', 'yes'],
    ]);
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).toMatch(/File this claim for customer1@example\.com in store \S+\? \(yes or no, Enter for no\) maybe/);
    expect(r.raw).not.toMatch(/\x1b\[(\d*[ABCDGK]|2K|\?25l)/);
    expect(claimBodies(sandbox)).toHaveLength(1);
  });

  it('the accessible setting does the same, and OPCLI_ACCESSIBLE=0 wins over it', async () => {
    expect((await runOpcli(['config', 'set', 'accessible', 'true'], { env: env() })).code).toBe(0);
    const flags = flagsWithout(new Set(['resolution']));
    const on = await inPty(['claims', 'file', ...flags, '--dry-run'], env(), [[`Type a number from 1 to ${RESOLUTIONS.length}: `, '1']]);
    expect(on.code, on.screen).toBe(0);
    expect(on.screen).toContain(`"resolution": "${RESOLUTIONS[0]}"`);
    const off = await inPty(['claims', 'file', ...flags, '--dry-run'], { ...env(), OPCLI_ACCESSIBLE: '0' }, [['Resolution', '\r']]);
    expect(off.screen).not.toContain('Type a number');
  });
});
