/**
 * The record of claims in the team's PostgreSQL (issue 42, src/record-pg/claims.ts): two members,
 * each with a HOME and config folder of their own and no folder shared, one record-url each (two
 * member roles). What one files, the other never files again; a batch killed with kill -9 on one
 * keeps its in-flight rows uncertain on the other; the database stopped (`pg_ctl stop -m
 * immediate`) in the middle of a batch lets no request leave without its committed intent.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { BIN, ROOT, runBinary, runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';
import { deadPort, missingInfra } from '../infra/index.js';
import { type TeamRecord, teamRecord } from '../giftcard/fixture.js';
import { stringify } from 'csv-stringify/sync';
import { COLUMNS, claimBodies, duplicates, heldSandbox, results, row, rowOf, writeCsv, writeRows } from './fixtures.js';

const missing = missingInfra('pg_ctl');

/** One member of the team: a config folder with a profile for the sandbox, a HOME of their own, their role's record-url. */
interface Member {
  dir: string;
  env: Record<string, string>;
  cleanup(): void;
}

async function member(sandbox: Sandbox, team: TeamRecord, i: number): Promise<Member> {
  const config = tempConfigDir();
  const home = mkdtempSync(join(tmpdir(), `opcli-home-${i}-`));
  await sandboxProfile(sandbox, config.dir);
  return {
    dir: config.dir,
    env: { ...team.env(i), OPCLI_CONFIG_DIR: config.dir, HOME: home },
    cleanup: () => {
      config.cleanup();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** No file record of claims was written in a member's config folder: the record is the database. */
function noRecordFile(m: Member): void {
  expect(readdirSync(m.dir).filter((f) => f.startsWith('claims-record-'))).toEqual([]);
}

/** The rows of the database's intents of claims, as "line author" (or the SQL given). */
async function intents(team: TeamRecord, select = "line || ' ' || author"): Promise<string[]> {
  const r = await team.pg.psql(`SELECT ${select} FROM opcli.intents WHERE kind = 'claim' ORDER BY id`, { database: team.database });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim().split('\n').filter(Boolean);
}

describe.skipIf(missing)('claims with the record in PostgreSQL: two members, no shared folder', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it("a batch's resume asks the database by the batch's name: from the other member at the same path, its filed rows are settled, a changed --key row is named, a look-alike row is held", async () => {
    const team = await teamRecord();
    const [a, b] = [await member(sandbox, team, 0), await member(sandbox, team, 1)];
    const folder = mkdtempSync(join(tmpdir(), 'opcli-batch-'));
    try {
      sandbox.resetLog();
      // Under --key: the rows are known by their rma, whoever runs the batch.
      const keyed = join(folder, 'keyed.csv');
      const columns = ['rma', ...COLUMNS];
      const write = (rows: Record<string, string>[]) => writeFileSync(keyed, stringify([columns, ...rows.map((r) => columns.map((c) => r[c] ?? ''))]));
      const rows = [1, 2, 3].map((i) => ({ ...row(i), rma: `RMA-000${i}` }));
      write(rows);
      expect((await runOpcli(['claims', 'file', '--from', keyed, '--key', 'rma'], { env: a.env })).code).toBe(0);
      write([rows[2] as Record<string, string>, { ...rows[1], 'item.details': 'row 2, changed' }, rows[0] as Record<string, string>]);
      const keyedAgain = await runOpcli(['claims', 'file', '--from', keyed, '--key', 'rma', '--jsonl'], { env: b.env });
      expect(keyedAgain.code).toBe(3);
      expect(results(keyedAgain.stdout).find((r) => r.line === 3)?.error).toMatch(
        /^RMA-0002 was filed on \d{4}-\d{2}-\d{2} from line 3 with different content \(item\.details row 2 → row 2, changed\); not sent/,
      );
      expect(results(keyedAgain.stdout).map((r) => [r.line, r.status, r.earlier])).toEqual([
        [2, 'filed', true],
        [3, 'held', undefined],
        [4, 'filed', true],
      ]);
      expect(claimBodies(sandbox)).toHaveLength(3);

      // Without --key: a row added that looks like one the batch filed (the same customer and item) is held, naming its line.
      const plain = join(folder, 'plain.csv');
      writeCsv(plain, [row(11), row(12)]);
      expect((await runOpcli(['claims', 'file', '--from', plain], { env: a.env })).code).toBe(0);
      writeCsv(plain, [row(11), row(12), row(11, { 'item.details': 'row 11, again' })]);
      const plainAgain = await runOpcli(['claims', 'file', '--from', plain, '--jsonl'], { env: b.env });
      expect(plainAgain.code).toBe(3);
      expect(results(plainAgain.stdout).find((r) => r.line === 4)?.error).toMatch(
        /^looks like the claim filed from line 2 on \d{4}-\d{2}-\d{2} \(item\.details row 11 → row 11, again\); not sent; --allow-similar files it/,
      );
      expect(results(plainAgain.stdout).map((r) => [r.status, r.earlier])).toEqual([
        ['filed', true],
        ['filed', true],
        ['held', undefined],
      ]);
      expect(claimBodies(sandbox)).toHaveLength(5);
      // Each member's run asked the database: no journal and no file record was written anywhere.
      expect(readdirSync(folder).sort()).toEqual(['keyed.csv', 'plain.csv']);
      noRecordFile(a);
      noRecordFile(b);
    } finally {
      a.cleanup();
      b.cleanup();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('a batch filed from one and a copy of its file from the other: every row filed once; the copy is held, naming the first run', async () => {
    const team = await teamRecord();
    const [a, b] = [await member(sandbox, team, 0), await member(sandbox, team, 1)];
    try {
      sandbox.resetLog();
      const path = join(a.dir, 'claims.csv');
      writeRows(path, 6);
      const first = await runOpcli(['claims', 'file', '--from', path, '--jsonl'], { env: a.env });
      expect(first.code, first.stderr).toBe(0);
      expect(results(first.stdout).map((r) => r.status)).toEqual(Array(6).fill('filed'));
      const copy = join(b.dir, 'copy of claims.csv');
      copyFileSync(path, copy);
      // A dry run from the other member already says so, and sends nothing.
      const dry = await runOpcli(['claims', 'file', '--from', copy, '--dry-run'], { env: b.env });
      expect(dry.code).toBe(3);
      expect(dry.stderr).toContain('Dry run of 6 rows: 0 would be sent, 0 would be refused (invalid), 6 would be held');
      const second = await runOpcli(['claims', 'file', '--from', copy, '--jsonl'], { env: b.env });
      expect(second.code).toBe(3);
      for (const r of results(second.stdout)) {
        expect(r.status).toBe('held');
        expect(r.error).toContain(`already filed from ${path} line ${r.line}`);
      }
      expect(claimBodies(sandbox)).toHaveLength(6);
      expect(duplicates(claimBodies(sandbox))).toEqual([]);
      // Each intent was written by the first member's role, and no file record exists on either side.
      expect(await intents(team)).toEqual([2, 3, 4, 5, 6, 7].map((line) => `${line} ${team.members[0]!.name}`));
      noRecordFile(a);
      noRecordFile(b);
    } finally {
      a.cleanup();
      b.cleanup();
    }
  });

  it('one claim filed by one member is refused to the other (exit 3); --force files it; history from either lists both, as from a file', async () => {
    const team = await teamRecord();
    const [a, b] = [await member(sandbox, team, 0), await member(sandbox, team, 1)];
    const local = tempConfigDir();
    await sandboxProfile(sandbox, local.dir);
    try {
      sandbox.resetLog();
      const claim = join(a.dir, 'claim.json');
      const data = {
        customer: { email: 'dana@example.com' },
        item: { name: 'Kettle', price: 49.99, details: 'one claim' },
        warranty: { dateOfPurchase: '2024-05-01T10:00:00Z', warrantyPeriod: 'P1Y' },
        shippingAddress: { firstName: 'Dana', lastName: 'Example', address1: '1 Main St', city: 'Springfield', zip: '62701', country: 'United States' },
        signature: '',
        salesChannel: 'IN_STORE',
        claimCategory: 'WARRANTY',
        issueType: 'DEFECTIVE_ITEM',
        resolution: 'RESHIP',
      };
      writeFileSync(claim, JSON.stringify(data));
      const filed = await runOpcli(['claims', 'file', '--data', claim], { env: a.env });
      expect(filed.code, filed.stderr).toBe(0);
      const again = await runOpcli(['claims', 'file', '--data', claim], { env: b.env });
      expect(again.code).toBe(3);
      expect(again.stderr).toContain('This claim was already filed from --data');
      expect(claimBodies(sandbox)).toHaveLength(1);
      const forced = await runOpcli(['claims', 'file', '--data', claim, '--force'], { env: b.env });
      expect(forced.code, forced.stderr).toBe(0);
      expect(claimBodies(sandbox)).toHaveLength(2);
      // The same two filings with the record in files: history says the same, but for where the record is.
      expect((await runOpcli(['claims', 'file', '--data', claim], { env: { OPCLI_CONFIG_DIR: local.dir } })).code).toBe(0);
      expect((await runOpcli(['claims', 'file', '--data', claim, '--force'], { env: { OPCLI_CONFIG_DIR: local.dir } })).code).toBe(0);
      const history = async (env: Record<string, string>) => {
        const r = await runOpcli(['claims', 'history', '--json'], { env });
        expect(r.code, r.stderr).toBe(0);
        return (JSON.parse(r.stdout).claims as Record<string, unknown>[]).map(({ at: _at, sourceOrderId: _s, events, ...c }) => ({
          ...c,
          events: (events as Record<string, unknown>[]).map(({ at: _a, sourceOrderId: _o, ...e }) => e),
        }));
      };
      const fromDatabase = await history(b.env);
      expect(fromDatabase).toHaveLength(2);
      expect(fromDatabase.map((c) => (c as { forced?: boolean }).forced)).toEqual([false, true]);
      expect(await history(a.env)).toEqual(fromDatabase);
      expect(await history({ OPCLI_CONFIG_DIR: local.dir })).toEqual(fromDatabase);
      const byEmail = await runOpcli(['claims', 'history', '--email', 'DANA@example.com'], { env: a.env });
      expect(byEmail.stdout.trim().split('\n')).toHaveLength(2);
      const none = await runOpcli(['claims', 'history', '--email', 'erin@example.com'], { env: a.env });
      expect(none.stderr).toMatch(/No claims recorded for this filter \(record database 127\.0\.0\.1:\d+\/gc_\w+\)/);
      noRecordFile(a);
      noRecordFile(b);
    } finally {
      a.cleanup();
      b.cleanup();
      local.cleanup();
    }
  });

  it('eight `claims file --data` of one claim at once, four from each member (built binary): one is filed, seven are refused (exit 3)', async () => {
    const team = await teamRecord();
    const [a, b] = [await member(sandbox, team, 0), await member(sandbox, team, 1)];
    try {
      sandbox.resetLog();
      const template = JSON.parse((await runOpcli(['claims', 'template', '--json'], { env: a.env })).stdout);
      const data = join(a.dir, 'claim.json');
      writeFileSync(data, JSON.stringify({ ...template, item: { ...template.item, details: 'eight at once' } }));
      const runs = await Promise.all(Array.from({ length: 8 }, (_, i) => runBinary(['claims', 'file', '--data', data], { env: (i % 2 ? b : a).env })));
      expect(runs.map((r) => r.code).sort(), runs.map((r) => r.stderr).join('\n')).toEqual([0, 3, 3, 3, 3, 3, 3, 3]);
      for (const r of runs.filter((x) => x.code === 3)) expect(r.stderr).toMatch(/This claim was already (filed|sent \(outcome uncertain\))/);
      expect(claimBodies(sandbox)).toHaveLength(1);
      expect(await intents(team, "attempt || ''")).toEqual(['1']);
    } finally {
      a.cleanup();
      b.cleanup();
    }
  }, 60_000);

  it('a batch killed with kill -9 on one member and run on the other: the rows in flight stay uncertain (held), none is sent twice', async () => {
    const team = await teamRecord();
    const held = await heldSandbox();
    const [a, b] = [await member(held.sandbox, team, 0), await member(held.sandbox, team, 1)];
    try {
      const path = join(a.dir, 'big.csv');
      const total = 60;
      writeRows(path, total);
      // Claims are created at once but answered as the test moves the clock: requests are in flight at the kill.
      held.sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', phase: 'after', latencyMs: 40 }]);
      const child = spawn(process.execPath, [BIN, 'claims', 'file', '--from', path, '--concurrency', '8'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, ...a.env },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c) => {
        stderr += c.toString();
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
      const stopPump = held.pump();
      await new Promise<void>((resolve, reject) => {
        const poll = setInterval(() => {
          if (held.sandbox.counters.claimsCreated < 20) return;
          clearInterval(poll);
          child.kill('SIGKILL');
          resolve();
        }, 2);
        child.on('close', () => {
          clearInterval(poll);
          reject(new Error(`the batch ended before the kill: ${stderr}`));
        });
      }).finally(stopPump);
      expect(await exited).toBe('SIGKILL');
      held.sandbox.setFaults([]);
      // In flight at the kill: committed intents the database holds without an outcome.
      const inFlight = (
        await team.pg.psql(
          "SELECT i.line FROM opcli.intents i WHERE i.kind = 'claim' AND NOT EXISTS (SELECT 1 FROM opcli.outcomes o WHERE o.filing = i.filing) ORDER BY i.line",
          { database: team.database },
        )
      ).stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map(Number);
      expect(inFlight.length).toBeGreaterThan(0);

      const copy = join(b.dir, 'big.csv');
      copyFileSync(path, copy);
      const rerun = await runOpcli(['claims', 'file', '--from', copy, '--concurrency', '8', '--jsonl'], { env: b.env });
      expect(rerun.code).toBe(3);
      const rows = results(rerun.stdout);
      expect(rows).toHaveLength(total);
      for (const line of inFlight) {
        const r = rows.find((x) => x.line === line);
        expect(r?.status).toBe('held');
        expect(r?.error).toContain('already sent (outcome uncertain)');
      }
      const bodies = claimBodies(held.sandbox);
      expect(duplicates(bodies)).toEqual([]);
      // Every row reached the service at most once; every row not in flight was filed by one of the two.
      const received = new Set(bodies.map(rowOf));
      for (let r = 1; r <= total; r++) if (!inFlight.includes(r + 1)) expect(received.has(r)).toBe(true);
      noRecordFile(a);
      noRecordFile(b);
    } finally {
      a.cleanup();
      b.cleanup();
      await held.close();
    }
  }, 60_000);
});

describe('a record database that cannot be reached', () => {
  it('claims file (one claim and a batch) stops before anything is sent: exit 1, one line naming it, never the password; no file record is made', async () => {
    const sandbox = await startSandbox();
    const config = tempConfigDir();
    try {
      await sandboxProfile(sandbox, config.dir);
      const port = await deadPort();
      const env = { OPCLI_CONFIG_DIR: config.dir, HOME: '/nonexistent', OPCLI_RECORD_URL: `postgresql://alice:pw-secret-42@127.0.0.1:${port}/team` };
      const path = join(config.dir, 'claims.csv');
      writeRows(path, 3);
      const template = (await runOpcli(['claims', 'template', '--json'], { env })).stdout;
      for (const argv of [
        ['claims', 'file', '--from', path],
        ['claims', 'file', '--data', '-'],
      ]) {
        const res = await runOpcli(argv, { env, stdin: template });
        expect(res.code, res.stderr).toBe(1);
        expect(res.stderr).toContain(`Error: Record database 127.0.0.1:${port}/team: connection refused`);
        expect(res.stderr).not.toContain('pw-secret-42');
      }
      expect(claimBodies(sandbox)).toEqual([]);
      expect(readdirSync(config.dir).filter((f) => f.startsWith('claims-record-'))).toEqual([]);
    } finally {
      await sandbox.close();
      config.cleanup();
    }
  });
});

describe.skipIf(missing)('the record database stopped in the middle of a batch (pg_ctl stop -m immediate)', () => {
  it('no request left without a committed intent; exit 1 and one line naming the database; after a restart the rerun files each remaining row once', async () => {
    const team = await teamRecord();
    const held = await heldSandbox();
    const a = await member(held.sandbox, team, 0);
    try {
      const path = join(a.dir, 'claims.csv');
      const total = 120;
      writeRows(path, total);
      held.sandbox.setFaults([{ method: 'POST', path: '/v1/claims/offline', phase: 'after', latencyMs: 40 }]);
      const stopPump = held.pump();
      const run = runOpcli(['claims', 'file', '--from', path, '--concurrency', '4', '--jsonl'], { env: a.env });
      await new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (held.sandbox.counters.claimsCreated < 30) return;
          clearInterval(poll);
          resolve();
        }, 2);
      });
      await team.pg.crash();
      const res = await run.finally(stopPump);
      held.sandbox.setFaults([]);
      expect(res.code).toBe(1);
      // --jsonl: the error is one JSON line on stderr, its message the one line.
      const errors = res.stderr.split('\n').filter((l) => l.startsWith('{"error"'));
      expect(errors, res.stderr).toHaveLength(1);
      const error = JSON.parse(errors[0] as string).error as { message: string; database: unknown };
      expect(error.message).toMatch(
        new RegExp(`^Record database 127\\.0\\.0\\.1:${team.pg.port}/${team.database}: .*; rerunning the same command once the database is back is safe`),
      );
      expect(error.database).toEqual({ host: '127.0.0.1', port: team.pg.port, database: team.database });
      expect(res.stderr).not.toContain(team.env(0).OPCLI_RECORD_URL!.split(':')[2]!.split('@')[0]!);
      const received = claimBodies(held.sandbox).map(rowOf);
      expect(received.length).toBeLessThan(total);
      // Rows the run reports as not sent were not received.
      const reported = results(res.stdout);
      for (const r of reported.filter((x) => x.status === 'not_sent')) expect(received).not.toContain(r.line - 1);

      await team.pg.restart();
      // Every request the sandbox received has its intent, committed before it left.
      const lines = new Set((await intents(team, "line || ''")).map(Number));
      for (const r of received) expect(lines.has(r + 1)).toBe(true);
      const rerun = await runOpcli(['claims', 'file', '--from', path, '--concurrency', '4', '--jsonl'], { env: a.env });
      // Rows in flight when the database stopped were answered, but their outcome could not be written
      // (no journal holds it either): the rerun reports them uncertain from the earlier run, each one a
      // row the sandbox received, and never resends them; every other row is filed.
      const again = results(rerun.stdout);
      const uncertain = again.filter((r) => r.status === 'uncertain');
      for (const r of uncertain) {
        expect(r.earlier).toBe(true);
        expect(received).toContain(r.line - 1);
      }
      expect(again.filter((r) => r.status !== 'filed' && r.status !== 'uncertain')).toEqual([]);
      expect(rerun.code, rerun.stderr).toBe(uncertain.length ? 3 : 0);
      const bodies = claimBodies(held.sandbox);
      expect(duplicates(bodies)).toEqual([]);
      expect(new Set(bodies.map(rowOf)).size).toBe(total);
      noRecordFile(a);
    } finally {
      a.cleanup();
      await held.close();
    }
  }, 90_000);
});
