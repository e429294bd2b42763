/**
 * `claims history` counts claims, not attempts: a row not sent by one run and filed by the next is
 * one claim with two events, in --json and in the plain listing; a copy filed on purpose later is
 * another claim.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { claimBodies, claimsSuite, onBackend, RECORD_BACKENDS, writeRows } from './fixtures.js';

// The same history from the record of claims in files and in the team's PostgreSQL (fixtures.ts RECORD_BACKENDS).
for (const record of RECORD_BACKENDS) {
  describe(onBackend(record), () => {
    let sandbox: Sandbox;
    let dir: string;
    const { env } = claimsSuite((s) => ({ sandbox, dir } = s), { record });

    /** Files `n` rows twice over: the first run's requests answered 421 (not processed: not sent), the rerun's filed. */
    async function notSentThenFiled(n: number): Promise<string> {
      const path = join(dir, 'claims.csv');
      writeRows(path, n);
      sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', status: 421 }]);
      const first = await runOpcli(['claims', 'file', '--from', path], { env: env() });
      expect(first.code, first.stderr).toBe(3);
      expect(first.stderr).toContain(`${n} not sent`);
      sandbox.setFaults([]);
      const again = await runOpcli(['claims', 'file', '--from', path], { env: env() });
      expect(again.code, again.stderr).toBe(0);
      expect(claimBodies(sandbox).length).toBe(2 * n);
      return path;
    }

    describe('claims history, one entry per claim', () => {
      it('--json: a claim not sent and then filed is one entry, its two attempts in events', async () => {
        await notSentThenFiled(4);
        const res = await runOpcli(['claims', 'history', '--json'], { env: env() });
        expect(res.code, res.stderr).toBe(0);
        const { claims } = JSON.parse(res.stdout);
        expect(claims).toHaveLength(4);
        for (const claim of claims) {
          expect(claim.status).toBe('filed');
          expect(claim.sourceOrderId).toMatch(/^ord_off_/);
          expect(claim.events.map((e: { status: string }) => e.status)).toEqual(['not_sent', 'filed']);
          expect(claim.events[1].sourceOrderId).toBe(claim.sourceOrderId);
          expect(claim.at).toBe(claim.events[1].at);
        }
        const fields = JSON.parse((await runOpcli(['claims', 'history', '--json', 'status,events'], { env: env() })).stdout);
        expect(Object.keys(fields.claims[0])).toEqual(['status', 'events']);
      });

      it('the plain listing: one line per claim with its latest state; --order finds the claim with both attempts', async () => {
        await notSentThenFiled(3);
        const res = await runOpcli(['claims', 'history'], { env: env() });
        const lines = res.stdout.trim().split('\n');
        expect(lines).toHaveLength(3);
        for (const line of lines) expect(line.split('\t')[1]).toBe('filed');
        const order = lines[0]?.split('\t')[2] as string;
        const one = JSON.parse((await runOpcli(['claims', 'history', '--order', order, '--json'], { env: env() })).stdout);
        expect(one.claims).toHaveLength(1);
        expect(one.claims[0].events).toHaveLength(2);
      });

      it('a copy filed on purpose after the first is filed is another claim', async () => {
        const path = join(dir, 'claims.csv');
        writeRows(path, 2);
        expect((await runOpcli(['claims', 'file', '--from', path], { env: env() })).code).toBe(0);
        const copy = join(dir, 'copy.csv');
        copyFileSync(path, copy);
        expect((await runOpcli(['claims', 'file', '--from', copy, '--allow-duplicates'], { env: env() })).code).toBe(0);
        const { claims } = JSON.parse((await runOpcli(['claims', 'history', '--json'], { env: env() })).stdout);
        expect(claims).toHaveLength(4);
        expect(new Set(claims.map((c: { sourceOrderId: string }) => c.sourceOrderId)).size).toBe(4);
        for (const claim of claims) expect(claim.events).toHaveLength(1);
      });
    });
  });
}
