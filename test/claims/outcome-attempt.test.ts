/**
 * An outcome belongs to its attempt (src/record/outcome.ts): `filed` is final for its key, and a
 * later line of another attempt (a `rejected` of a copy filed on purpose) cannot undo it, in the
 * batch, in `claims history` and in the journal alike.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { runOpcli } from '../helpers.js';
import { claimBodies, claimsSuite, results, row, writeCsv } from './fixtures.js';

let sandbox: Sandbox;
let dir = '';
const { env } = claimsSuite((s) => {
  ({ sandbox, dir } = s);
});

describe('a later attempt cannot undo `filed`', () => {
  it('a copy filed with --allow-duplicates while the service answers 422, then a plain copy: nothing is sent for those rows', async () => {
    const path = join(dir, 'claims.csv');
    writeCsv(path, [row(1), row(2)]);
    expect((await runOpcli(['claims', 'file', '--from', path], { env: env() })).code).toBe(0);
    expect(claimBodies(sandbox)).toHaveLength(2);

    // A second attempt, on purpose, that the service refuses: its `rejected` is that attempt's outcome only.
    const forced = join(dir, 'claims (1).csv');
    copyFileSync(path, forced);
    sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', status: 422 }]);
    const refused = await runOpcli(['claims', 'file', '--from', forced, '--allow-duplicates', '--jsonl'], { env: env() });
    expect(refused.code).toBe(3);
    expect(results(refused.stdout).map((r) => r.status)).toEqual(['rejected', 'rejected']);
    sandbox.setFaults([]);
    const sentBefore = claimBodies(sandbox).length;

    const plain = join(dir, 'claims (2).csv');
    copyFileSync(path, plain);
    const again = await runOpcli(['claims', 'file', '--from', plain, '--jsonl'], { env: env() });
    expect(again.code).toBe(3);
    expect(results(again.stdout).map((r) => r.status)).toEqual(['held', 'held']);
    for (const r of results(again.stdout)) expect(r.error).toContain('already filed from');
    expect(claimBodies(sandbox)).toHaveLength(sentBefore);

    // The same file's own journal says filed too, and history lists the first filing as filed.
    const rerun = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], { env: env() });
    expect(results(rerun.stdout).map((r) => r.status)).toEqual(['filed', 'filed']);
    expect(claimBodies(sandbox)).toHaveLength(sentBefore);
    const history = await runOpcli(['claims', 'history', '--json'], { env: env() });
    expect(history.code).toBe(0);
    // One entry per claim (docs/json.md): the two filed, then the two copies the service refused.
    const claims = (JSON.parse(history.stdout) as { claims: { status: string }[] }).claims;
    expect(claims.map((c) => c.status).sort()).toEqual(['filed', 'filed', 'rejected', 'rejected']);
  });
});
