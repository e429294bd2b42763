/**
 * One claim holds the record's lock from its intent to its outcome: each line of the record names the
 * hash of the line before it, so no other run may append between the two.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runOpcli, until } from '../helpers.js';
import { heldSandbox } from './fixtures.js';

function claimFlags(email: string): string[] {
  return [
    ...['--customer-email', email, '--customer-phone', '+1 555 0100', '--item-name', 'Kettle', '--item-price', '49.99'],
    ...['--warranty-date-of-purchase', '2024-05-01T10:00:00Z', '--warranty-period', 'P1Y', '--shipping-first-name', 'Al', '--shipping-last-name', 'Ex'],
    ...['--shipping-address1', '1 Main St', '--shipping-city', 'Springfield', '--shipping-zip', '62701', '--shipping-country', 'US'],
    ...['--signature', '', '--sales-channel', 'IN_STORE', '--claim-category', 'WARRANTY', '--issue-type', 'DEFECTIVE_ITEM'],
    ...['--resolution', 'RESHIP'],
  ];
}

it('a claim whose answer is out keeps the record locked; a second claim waits and is recorded after its outcome', async () => {
  const held = await heldSandbox();
  try {
    held.sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', latencyMs: 2500, count: 1 }]);
    const env = { OPCLI_CONFIG_DIR: held.dir };
    let settled = false;
    const first = runOpcli(['claims', 'file', ...claimFlags('alice@example.com'), '--json'], { env }).finally(() => {
      settled = true;
    });
    await until(() => settled || held.sandbox.requests.some((r) => r.path === '/v1/claims/offline'));
    expect(settled).toBe(false);
    expect(readdirSync(held.dir).filter((n) => /^claims-record-.*\.lock$/.test(n))).toHaveLength(1);

    const second = runOpcli(['claims', 'file', ...claimFlags('bob@example.com'), '--json'], { env });
    held.clock.advance(2500);
    const [a, b] = await Promise.all([first, second]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(held.sandbox.claims).toHaveLength(2);

    const [name] = readdirSync(held.dir).filter((n) => /^claims-record-.*\.jsonl$/.test(n));
    const lines = readFileSync(join(held.dir, name as string), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; email?: string; issuance?: string; status?: string });
    const aIntent = lines.findIndex((l) => l.type === 'intent' && l.email === 'alice@example.com');
    const bIntent = lines.findIndex((l) => l.type === 'intent' && l.email === 'bob@example.com');
    const aOutcome = lines.findIndex((l) => l.type === 'outcome' && l.issuance === lines[aIntent]?.issuance);
    expect(aIntent).toBeGreaterThan(-1);
    expect(lines[aOutcome]?.status).toBe('filed');
    expect(bIntent).toBeGreaterThan(aOutcome);
    // The record reads intact: the same claim again is held as filed, not refused as damaged.
    const again = await runOpcli(['claims', 'file', ...claimFlags('alice@example.com')], { env });
    expect(again.code).toBe(3);
    expect(again.stderr).not.toMatch(/does not follow the line before it|damaged/);
    expect(held.sandbox.claims).toHaveLength(2);
  } finally {
    await held.close();
  }
});
