/**
 * The record's statements against a real PostgreSQL: exactly one of many members' concurrent
 * inserts of the same attempt wins; an outcome needs its attempt; what is written reads back as it
 * was, naming its author; and each question is answered through the index the schema made for it,
 * over a record large enough that the planner would rather not.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openRecordDatabase, type RecordDatabase, setupRecord } from '../../src/record-pg/database.js';
import { addRows } from '../../src/record-pg/import.js';
import { ask, insertIntent, type IntentRow, QUESTIONS } from '../../src/record-pg/queries.js';
import { missingInfra, type Postgres, startPostgres } from '../infra/index.js';

const missing = missingInfra('pg_ctl');

/** A node of EXPLAIN's JSON plan. */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}
/** Every node of a plan. */
const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];
const ORIGIN = 'https://api.example.com';

describe.skipIf(missing)('the record’s statements', () => {
  let pg: Postgres;
  let database: string;
  const members = [0, 1].map((i) => ({ name: `m${i}_${randomBytes(3).toString('hex')}`, password: `pw-${randomBytes(6).toString('hex')}` }));
  const records: RecordDatabase[] = [];

  beforeAll(async () => {
    pg = await startPostgres();
    database = `rec_${randomBytes(3).toString('hex')}`;
    await pg.admin(`CREATE DATABASE ${database}`);
    for (const m of members) await pg.admin(`CREATE ROLE ${m.name} LOGIN PASSWORD '${m.password}'`);
    await setupRecord(
      { url: `postgresql://${pg.superuser}@127.0.0.1:${pg.port}/${database}`, password: pg.superuserPassword },
      members.map((m) => m.name),
      { env: {}, cwd: '/' },
    );
    for (const m of members) {
      records.push(
        await openRecordDatabase({ url: `postgresql://${m.name}@127.0.0.1:${pg.port}/${database}`, password: m.password }, { env: {}, cwd: '/' }, { max: 4 }),
      );
    }
  });
  afterAll(async () => {
    for (const r of records) await r.close();
    await pg?.stop();
  });

  const credit = (key: string, filing: string, extra: Partial<IntentRow> = {}): IntentRow => ({
    kind: 'credit',
    origin: ORIGIN,
    storeId: 'st_1',
    key,
    attempt: 1,
    filing,
    at: '2026-12-01T10:00:00.000Z',
    customerEmail: 'ann@example.com',
    amountCents: 2500,
    currency: 'USD',
    ...extra,
  });

  test('eight concurrent inserts of attempt 1 of one key, from two members on pools of four: one is inserted, seven are taken', async () => {
    const key = 'shop:s|store:st_1|claim:race';
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => records[i % 2]!.withClient((c) => insertIntent(c, credit(key, `race-${i}`)), 'n/a')));
    expect(answers.filter((a) => a === 'inserted')).toHaveLength(1);
    expect(answers.filter((a) => a === 'taken')).toHaveLength(7);
    const rows = await records[0]!.withClient((c) => ask(c, 'byKey', [ORIGIN, 'st_1', 'credit', key]), 'n/a');
    expect(rows).toHaveLength(1);
    expect(members.map((m) => m.name)).toContain(rows[0]!.author);
    // The loser reads what the winner wrote, and the next attempt is a new number.
    expect(await records[1]!.withClient((c) => insertIntent(c, credit(key, 'race-next', { attempt: 2 })), 'n/a')).toBe('inserted');
  });

  test('an attempt and its outcomes read back as written, naming their author; an outcome of no attempt is refused', async () => {
    const key = 'claim-content-key-1';
    const intent: IntentRow = {
      kind: 'claim',
      origin: ORIGIN,
      storeId: 'st_1',
      key,
      attempt: 1,
      filing: 'f-roundtrip',
      at: '2026-12-02T08:30:00.000Z',
      run: undefined,
      source: '/home/ann/claims.csv',
      line: 4,
      osUser: 'ann',
      host: 'laptop-7',
      profile: 'prod',
      similarity: 'sim-abc',
      customerEmail: 'bo@example.com',
      item: 'SKU-1',
      detail: { note: 'ünïcode ✓' },
    };
    await records[0]!.withClient(async (c) => {
      expect(await insertIntent(c, intent)).toBe('inserted');
      await addRows(c, 'outcomes', [{ filing: 'f-roundtrip', status: 'uncertain', at: '2026-12-02T08:30:01.000Z', error: 'timeout' }]);
    }, 'n/a');
    await records[1]!.withClient(
      (c) => addRows(c, 'outcomes', [{ filing: 'f-roundtrip', status: 'filed', at: '2026-12-02T09:00:00.000Z', sourceOrderId: 'SO-1' }]),
      'n/a',
    );
    const [read] = await records[1]!.withClient((c) => ask(c, 'byKey', [ORIGIN, 'st_1', 'claim', key]), 'n/a');
    const { run: _, ...written } = intent;
    expect(read).toMatchObject({ ...written, forced: false, author: members[0]!.name });
    expect(read!.outcomes.map((o) => [o.status, o.author, o.sourceOrderId ?? o.error])).toEqual([
      ['uncertain', members[0]!.name, 'timeout'],
      ['filed', members[1]!.name, 'SO-1'],
    ]);
    const orphan = records[0]!.withClient(
      (c) => addRows(c, 'outcomes', [{ filing: 'no-such-attempt', status: 'filed', at: '2026-12-02T09:00:00.000Z' }]),
      'nothing was written',
    );
    await expect(orphan).rejects.toThrow(/the server answered 23503: insert or update on table "outcomes" violates foreign key constraint/);
  });

  test('each question is answered through its index, over 60,000 claims and credits', async () => {
    await pg.admin(
      `INSERT INTO opcli.runs (run, origin, store_id, source, at) SELECT 'run-' || n, '${ORIGIN}', 'st_1', 'batch', now() FROM generate_series(0, 499) AS n;
       INSERT INTO opcli.intents (kind, origin, store_id, key, attempt, filing, at, source, run, line, similarity, customer_email, amount_cents, currency)
       SELECT CASE WHEN n % 4 = 0 THEN 'credit' ELSE 'claim' END, '${ORIGIN}', 'st_' || (n % 3), 'key-' || n, 1, 'bulk-' || n,
              timestamptz '2026-01-01' + n * interval '7 minutes', '/data/batch-' || (n % 200) || '.csv', 'run-' || (n % 500), n,
              'sim-' || (n % 20000), 'c' || (n % 15000) || '@example.com', (n % 40) * 500, 'USD'
         FROM generate_series(1, 60000) AS n;
       INSERT INTO opcli.outcomes (filing, status, at) SELECT 'bulk-' || n, 'filed', now() FROM generate_series(1, 60000, 2) AS n;
       ANALYZE opcli.intents; ANALYZE opcli.outcomes;`,
      database,
    );
    const samples: Record<keyof typeof QUESTIONS, [unknown[], string]> = {
      byKey: [[ORIGIN, 'st_1', 'claim', 'key-4'], 'intents_one_attempt'],
      creditHold: [[ORIGIN, 'st_1', 'c8@example.com', 4000, 'USD', '2026-06-01T00:00:00Z', 'key-8'], 'intents_credit_hold'],
      keysOf: [[[ORIGIN, ORIGIN], ['st_1', 'st_2'], 'credit', ['key-4', 'key-8']], 'intents_one_attempt'],
      kindAfter: [['credit', 30000, 1000], 'intents_pkey'],
    };
    for (const [question, [params, index]] of Object.entries(samples)) {
      const plan = await records[0]!.withClient(
        async (c) =>
          (await c.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${QUESTIONS[question as keyof typeof QUESTIONS]}`, params)).rows[0]![
            'QUERY PLAN'
          ][0].Plan,
        'n/a',
      );
      const scans = nodes(plan).filter((n) => n['Relation Name']);
      expect(scans.map((n) => [n['Relation Name'], n['Index Name'] ?? n['Node Type']]).sort(), question).toEqual([
        ['intents', index],
        ['outcomes', 'outcomes_by_filing'],
      ]);
    }
  });
});
