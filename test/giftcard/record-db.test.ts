import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ResolvedProfile } from '../../src/config/profile.js';
import { issuanceKey, LEDGER_FILE, type LedgerRecord } from '../../src/giftcard/ledger.js';
import { openLedger } from '../../src/giftcard/ledger-db.js';
import { parseRecordUrl } from '../../src/record-pg/url.js';
import { runBinary, runOpcli, sandboxProfile, tempConfigDir } from '../helpers.js';
import { deadPort, missingInfra, type Postgres } from '../infra/index.js';
import { pollUntil } from '../infra/process.js';
import { aliceClaim, type Fixture, fixture, giftcardSuite, ledgerLines, type TeamRecord, teamRecord } from './fixture.js';

const missing = missingInfra('pg_ctl');
giftcardSuite();

/** Requests that move money, as "METHOD path". */
const moneyCalls = (f: Fixture) => f.providerCalls().filter((c) => !c.startsWith('GET'));

describe.skipIf(missing)('store credit with the record in PostgreSQL', () => {
  let pg: Postgres;
  let members: TeamRecord['members'];

  /** A new database holding the team's record (fixture.ts teamRecord), on this file's PostgreSQL. */
  async function record(): Promise<TeamRecord> {
    const team = await teamRecord();
    pg = team.pg;
    members = team.members;
    return team;
  }

  /** The sandbox and profile, and the env that puts the ledger in the backend under test. */
  async function backend(kind: 'file' | 'database'): Promise<{ fx: Fixture; env: Record<string, string>; stored(): Promise<string[]> }> {
    const fx = await fixture({ unset: ['trigger-id'] });
    if (kind === 'file')
      return {
        fx,
        env: {},
        stored: async () =>
          ledgerLines(fx.dir)
            .filter((l) => l.type === 'attempt')
            .map((l) => `${l.issuance}`),
      };
    const { database, env } = await record();
    const stored = async () => {
      // Written by the member's role, in the database, and never to a file of the config folder.
      expect(existsSync(join(fx.dir, LEDGER_FILE))).toBe(false);
      const rows = await pg.psql("SELECT filing || ' ' || author FROM opcli.intents WHERE kind = 'credit' ORDER BY id", { database });
      return rows.stdout
        .trim()
        .split('\n')
        .map((row) => {
          expect(row.split(' ')[1]).toBe(members[0]!.name);
          return row.split(' ')[0]!;
        });
    };
    return { fx, env: env(0), stored };
  }

  for (const kind of ['file', 'database'] as const) {
    describe(`the ${kind} ledger`, () => {
      it('pays a claim once: the same claim however written is held (exit 3, nothing sent); --force pays; history and --verify say so', async () => {
        const { fx, env, stored } = await backend(kind);
        const first = await fx.run([...aliceClaim('C-2001'), '--json'], { env });
        expect(first.code, first.stderr).toBe(0);
        const card = JSON.parse(first.stdout).cardId as string;
        for (const variant of ['C-2001', 'c-2001', 'C\u20102001']) {
          const again = await fx.run(aliceClaim(variant), { env });
          expect(again.code, again.stderr).toBe(3);
          expect(again.stderr).toMatch(/Store credit for claim .* was already issued/);
          expect(again.stderr).toMatch(/with profile "default": 25\.00 USD to alice@example\.com for claim C-2001, order #1001, issued via credit-api-top-up/);
          expect(again.stderr).toContain(`(card ${card})`);
        }
        expect(moneyCalls(fx)).toHaveLength(1);
        expect((await fx.run(aliceClaim('c-2001', ['--force']), { env })).code).toBe(0);
        expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(2);

        const history = await fx.run(['giftcard', 'history', '--claim', 'C-2001', '--json'], { env });
        expect(history.code, history.stderr).toBe(0);
        const issuances = JSON.parse(history.stdout).issuances as Record<string, unknown>[];
        expect(issuances.map((i) => [i.claimId, i.status, i.amount, i.currency, i.path, i.forced, i.duplicateOf === null])).toEqual([
          ['C-2001', 'issued', '25.00', 'USD', 'credit-api-top-up', false, true],
          ['c-2001', 'issued', '25.00', 'USD', 'credit-api-top-up', true, false],
        ]);
        expect(Object.keys(issuances[0]!)).toEqual(Object.keys(issuances[1]!));
        expect(await stored()).toEqual(issuances.map((i) => i.issuance));
        const verify = await fx.run(['giftcard', 'history', '--verify'], { env });
        expect(verify.code).toBe(3);
        expect(verify.stderr).toMatch(/: 1 possible double credit\(s\)/);
      });

      it('holds the same amount to the same customer within 30 days under another claim (exit 3, nothing sent)', async () => {
        const { fx, env } = await backend(kind);
        expect((await fx.run(aliceClaim('C-3001'), { env })).code).toBe(0);
        const held = await fx.run(aliceClaim('C-3002'), { env });
        expect(held.code, held.stderr).toBe(3);
        expect(held.stderr).toMatch(/Held: a credit of the same amount to the same customer was issued within 30 days under another id/);
        expect(held.stderr).toMatch(/Earlier: .* 25\.00 USD to alice@example\.com for claim C-3001/);
        expect(moneyCalls(fx)).toHaveLength(1);
        // Another amount is another credit.
        expect((await fx.run(aliceClaim('C-3003', [], '30.00'), { env })).code).toBe(0);
        expect(moneyCalls(fx)).toHaveLength(2);
      });
    });
  }

  it('eight parallel issuances of one claim from two computers (two HOMEs, two config folders, two member roles) pay once', async () => {
    const fx = await fixture({ unset: ['trigger-id'] });
    const { env: memberEnv } = await record();
    const second = tempConfigDir();
    const homes = [0, 1].map((i) => mkdtempSync(join(tmpdir(), `opcli-home${i}-`)));
    try {
      await sandboxProfile(fx.sandbox, second.dir);
      expect((await runOpcli(['config', 'unset', 'trigger-id'], { env: { OPCLI_CONFIG_DIR: second.dir } })).code).toBe(0);
      const computers = [fx.dir, second.dir].map((dir, i) => ({ ...memberEnv(i), OPCLI_CONFIG_DIR: dir, HOME: homes[i]!, CI: '1' }));
      const runs = await Promise.all(Array.from({ length: 8 }, (_, i) => runBinary(aliceClaim('C-4001'), { env: computers[i % 2] })));
      const codes = runs.map((r) => r.code).sort();
      expect(codes, runs.map((r) => r.stderr).join('\n')).toEqual([0, 3, 3, 3, 3, 3, 3, 3]);
      for (const r of runs.filter((r) => r.code === 3)) expect(r.stderr).toMatch(/has no recorded outcome|was already issued/);
      expect(moneyCalls(fx)).toHaveLength(1);
      expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(1);
      // Each computer's history shows the one credit, written by one of the two roles.
      for (const env of computers) {
        const history = JSON.parse((await runBinary(['giftcard', 'history', '--json'], { env })).stdout);
        expect(history.issuances.map((i: { status: string }) => i.status)).toEqual(['issued']);
      }
    } finally {
      second.cleanup();
      for (const h of homes) rmSync(h, { recursive: true, force: true });
    }
  });

  it('two members decide on the same reading: the database takes one attempt, the other decides again on a fresh reading and is held', async () => {
    const { env } = await record();
    const ledgers = await Promise.all(
      [0, 1].map((i) => openLedger('/nonexistent', { record: parseRecordUrl(env(i).OPCLI_RECORD_URL!, 'test') } as ResolvedProfile, { env: env(i), cwd: '/' })),
    );
    try {
      const key = issuanceKey({ claimId: 'C-7001', orderNumber: '1001', bonus: false }, { shopUrl: 'https://shop.example', storeId: 'st_1' });
      const attempt = (issuance: string, user: string): LedgerRecord => ({
        v: 1,
        type: 'attempt',
        issuance,
        key,
        at: '2026-12-07T10:00:00.000Z',
        user,
        claimId: 'C-7001',
        orderNumber: '1001',
        bonus: false,
        amountCents: 2500,
        amount: '25.00',
        currency: 'USD',
        email: 'ann@example.com',
        name: 'Ann',
        profile: 'desk',
        storeId: 'st_1',
        firstPath: 'credit-api',
        forced: false,
        host: 'laptop',
      });
      // Both read the key before either writes: each would write attempt 1.
      for (const ledger of ledgers) expect((await ledger.heldAgainst(key)).records).toEqual([]);
      await ledgers[0]!.withLock(async () => ledgers[0]!.append(attempt('i-first', 'ann')));
      const readings: string[][] = [];
      await ledgers[1]!.withLock(async () => {
        // The first pass decides on the stale reading (nothing there); the retake reads again.
        const held = readings.length === 0 ? [] : (await ledgers[1]!.heldAgainst(key)).records.map((r) => `${r.type} ${r.issuance}`);
        readings.push(held);
        if (held.length === 0) await ledgers[1]!.append(attempt('i-second', 'bo'));
      });
      expect(readings).toEqual([[], ['attempt i-first']]);
      expect((await ledgers[1]!.heldAgainst(key)).records.map((r) => `${r.type} ${r.issuance} ${r.user}`)).toEqual(['attempt i-first ann']);
    } finally {
      for (const ledger of ledgers) await ledger.close();
    }
  });

  it('a credit paid before record-url was set is still held, and listed; `giftcard repair` looks at that ledger file', async () => {
    const fx = await fixture({ unset: ['trigger-id'] });
    const { env: memberEnv } = await record();
    const env = memberEnv(0);
    expect((await fx.run(aliceClaim('C-8001'))).code).toBe(0);
    const held = await fx.run(aliceClaim('c-8001'), { env });
    expect(held.code, held.stderr).toBe(3);
    expect(held.stderr).toMatch(/Store credit for claim c-8001 was already issued \(recorded as "C-8001"/);
    expect(moneyCalls(fx)).toHaveLength(1);
    const history = JSON.parse((await fx.run(['giftcard', 'history', '--json'], { env })).stdout);
    expect(history.issuances.map((i: { claimId: string; status: string }) => `${i.claimId} ${i.status}`)).toEqual(['C-8001 issued']);
    // A new claim goes to the database, and is listed after the file's.
    expect((await fx.run(aliceClaim('C-8002', [], '12.00'), { env })).code).toBe(0);
    const both = JSON.parse((await fx.run(['giftcard', 'history', '--json'], { env })).stdout);
    expect(both.issuances.map((i: { claimId: string }) => i.claimId)).toEqual(['C-8001', 'C-8002']);
    expect(ledgerLines(fx.dir).filter((l) => l.type === 'attempt')).toHaveLength(1);
    const repair = await fx.run(['giftcard', 'repair', '--yes'], { env });
    expect(repair.code, repair.stderr).toBe(0);
  });

  it('a database that cannot be reached: one line naming it, exit 1, nothing sent', async () => {
    const fx = await fixture({ unset: ['trigger-id'] });
    await record();
    const port = await deadPort();
    const r = await fx.run(aliceClaim('C-5001'), {
      env: { OPCLI_RECORD_URL: `postgresql://${members[0]!.name}:${members[0]!.password}@127.0.0.1:${port}/x`, HOME: '/nonexistent' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')[0]).toMatch(new RegExp(`^Error: Record database 127\\.0\\.0\\.1:${port}/x: connection refused.*rerunning is safe`));
    expect(r.stderr).not.toContain(members[0]!.password);
    expect(fx.providerCalls()).toEqual([]);
  });

  it('the database stopped (pg_ctl stop -m immediate) between the attempt and its outcome: exit 1, one line; the rerun pays nothing', async () => {
    const fx = await fixture({ unset: ['trigger-id'], fakeClock: true });
    const { database, env: memberEnv } = await record();
    const env = memberEnv(0);
    // The top-up is made, and its answer held back until the test moves the clock on.
    fx.sandbox.setFaults([{ method: 'PUT', path: '/provider/v2/gift-cards/', phase: 'after', latencyMs: 5_000 }]);
    const running = fx.run(aliceClaim('C-6001'), { env });
    await pollUntil(
      () => (fx.sandbox.counters.creditsPosted.creditApiTopUp === 1 ? true : undefined),
      60_000,
      () => 'the top-up never arrived',
    );
    await pg.crash();
    fx.clock.advance(5_000);
    const r = await running;
    await pg.restart();
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `Record database 127\\.0\\.0\\.1:${pg.port}/${database}: .*; the credit was issued \\(card gc_000001\\) but its outcome was not written \\(issuance \\S+\\): a rerun holds this credit .* and sends nothing; .*; do not issue it again$`,
        'm',
      ),
    );
    expect(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('Error:')),
    ).toHaveLength(1);
    expect(r.stderr).not.toContain(members[0]!.password);
    fx.sandbox.setFaults([]);
    const rerun = await fx.run(aliceClaim('C-6001'), { env });
    expect(rerun.code, rerun.stderr).toBe(3);
    expect(rerun.stderr).toMatch(/An earlier attempt to issue store credit for claim C-6001 has no recorded outcome/);
    expect(fx.sandbox.counters.creditsPosted.creditApiTopUp).toBe(1);
  });
});
