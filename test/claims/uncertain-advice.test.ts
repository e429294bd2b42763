/**
 * What opcli tells a person about a claim whose answer was lost: where it can really be checked (the
 * merchant dashboard; `claims history` for when it was sent), never `opcli orders list`, which does
 * not show a claim's order; and that --retry-uncertain files again any claim that exists.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { claimBodies, claimsSuite, writeRows } from './fixtures.js';

let sandbox: Sandbox;
let dir: string;
const { env, created } = claimsSuite((s) => ({ sandbox, dir } = s));

/** The service creates each claim, then its answer is lost (a 500 after the work). */
const answerLost = () => sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', phase: 'after', status: 500 }]);

function expectTrueAdvice(stderr: string): void {
  expect(stderr).toContain('merchant dashboard');
  expect(stderr).toContain('`opcli claims history`');
  expect(stderr).not.toContain('orders list');
  expect(stderr).not.toMatch(/check the store/i);
}

describe('advice about uncertain claims', () => {
  it('a batch with uncertain rows: where to look, and that --retry-uncertain files again those that exist', async () => {
    const path = join(dir, 'claims.csv');
    writeRows(path, 3);
    answerLost();
    const res = await runOpcli(['claims', 'file', '--from', path], { env: env() });
    expect(res.code, res.stderr).toBe(3);
    expect(res.stderr).toContain('3 uncertain');
    // The claims exist: the advice must send the person where they can be seen.
    expect(created()).toHaveLength(3);
    expectTrueAdvice(res.stderr);
    expect(res.stderr).toContain('one that exists is filed a second time');
    // And orders list indeed does not show them: the order a claim creates is not a store order.
    const orders = await runOpcli(['orders', 'list', '--all', '--json', 'sourceOrderId'], { env: env() });
    const ids = (JSON.parse(orders.stdout) as { sourceOrderId: string }[]).map((o) => o.sourceOrderId);
    for (const claim of created()) expect(ids).not.toContain((claim as { sourceOrderId: string }).sourceOrderId);
    // --retry-uncertain says before it sends that a claim that exists is filed twice, and it is.
    sandbox.setFaults([]);
    const retry = await runOpcli(['claims', 'file', '--from', path, '--retry-uncertain'], { env: env() });
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stderr.split('\n')[0]).toContain(
      '--retry-uncertain: the rows whose earlier answer was lost are sent again, and any of them whose claim exists is filed a second time',
    );
    expect(retry.stderr.split('\n')[0]).toContain('merchant dashboard');
    expect(created()).toHaveLength(6);
  });

  it('one claim whose answer was lost, then the same claim again: both say where to look', async () => {
    const template = await runOpcli(['claims', 'template', '--json'], { env: env() });
    const data = join(dir, 'claim.json');
    writeFileSync(data, template.stdout);
    answerLost();
    const first = await runOpcli(['claims', 'file', '--data', data], { env: env() });
    expect(first.code, first.stderr).toBe(1);
    expect(first.stderr).toContain('may or may not have been filed');
    expectTrueAdvice(first.stderr);
    sandbox.setFaults([]);
    const again = await runOpcli(['claims', 'file', '--data', data], { env: env() });
    expect(again.code, again.stderr).toBe(3);
    expect(again.stderr).toContain('already sent (outcome uncertain)');
    expectTrueAdvice(again.stderr);
    expect(claimBodies(sandbox)).toHaveLength(1);
  });

  it('--retry-uncertain: its help says it files twice what exists, and what to check first', async () => {
    const res = await runOpcli(['claims', 'file', '--help'], { env: env() });
    const help = res.stdout.replace(/\s+/g, ' ');
    expect(help).toMatch(
      /--retry-uncertain resend rows whose earlier answer was lost; one that exists is filed twice, so first look for them in the merchant dashboard/,
    );
    const repair = (await runOpcli(['claims', 'repair', '--help'], { env: env() })).stdout;
    expect(repair).toContain('merchant dashboard');
    expect(repair).not.toContain('orders list');
  });
});
