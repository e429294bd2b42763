/**
 * Issue 40, "a config folder and record-dir": 0.2.0 had no `record-dir`, so a team adopts one after
 * upgrading. The operator who upgrades sets it and runs 0.2.0's commands again: nothing is sent, and
 * what 0.2.0's journals say was filed reaches the shared record, so a teammate's copy of the file is
 * held too.
 */
import { chmodSync, copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { results } from '../claims/fixtures.js';
import { runBinary, sandboxProfile, tempConfigDir } from '../helpers.js';
import { actions, fromFile, oldFiles, opcli, reversedCopy, type Upgraded, upgradeSuite } from './fixture.js';

let sandbox: Sandbox;
let up: Upgraded;
const old = oldFiles('0.2.0');
upgradeSuite(old, (s) => ({ sandbox, up } = s));

/** A team folder beside the upgraded config folder (group-shared, as the store credit guide makes it), set as record-dir. */
async function adoptRecordDir(): Promise<string> {
  const team = join(dirname(up.config), 'team');
  mkdirSync(team);
  chmodSync(team, 0o2770);
  const set = await opcli(up, ['config', 'set', 'record-dir', team]);
  expect(set.code, set.stderr).toBe(0);
  return team;
}

describe('record-dir set after the upgrade from 0.2.0', () => {
  const paidOrMayHave = old.stepsOf('issue').filter((s) => old.outcomeOf(s.argv).status !== 'failed');
  it.each(paidOrMayHave.map((s) => [s.name, s.argv] as const))(
    '%s run again: held from the ledger 0.2.0 left in the config folder, nothing sent',
    async (_name, argv) => {
      await adoptRecordDir();
      const res = await opcli(up, argv);
      expect(res.code, res.stderr).toBe(3);
      expect(res.stderr).toMatch(/was already issued|has no recorded outcome|ended with an unknown outcome/);
      expect(actions(sandbox)).toEqual([]);
    },
  );

  it("a 0.2.0 batch run again reaches the team's record: a teammate's re-sorted copy is held, nothing sent", async () => {
    const team = await adoptRecordDir();
    const [step] = old.stepsOf('batch');
    const argv = step?.argv ?? [];
    const file = fromFile(argv);
    const rerun = await opcli(up, [...argv, '--jsonl']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(results(rerun.stdout).every((r) => r.status === 'filed' && r.earlier)).toBe(true);

    // A teammate: another config folder, the same store, the same record-dir, a copy of the file.
    const mate = tempConfigDir();
    try {
      await sandboxProfile(sandbox, mate.dir);
      const env = { OPCLI_CONFIG_DIR: mate.dir, OPCLI_RECORD_DIR: team };
      const copy = join(mate.dir, `sorted-${file}`);
      copyFileSync(join(up.batches, reversedCopy(up, file, `sorted-${file}`)), copy);
      const res = await runBinary(['claims', 'file', '--from', copy, '--jsonl'], { env });
      expect(res.code, res.stderr).toBe(3);
      const rows = results(res.stdout);
      expect(rows).toHaveLength(old.journalOf(file).size);
      for (const row of rows) expect(row.error).toContain(`already filed from ${join(up.batches, file)}`);
      expect(actions(sandbox)).toEqual([]);
    } finally {
      mate.cleanup();
    }
  });
});
