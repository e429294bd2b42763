/**
 * The record of claims in PostgreSQL (src/record-pg/claims.ts) against a real server: two members
 * who decide on the same reading of a key both write its attempt, and the database takes one (the
 * other is told its filing was taken: never sent); a key read again gets the next attempt; what a
 * row of a run became is asked by run and line, and by a --key row's key; and each question of the
 * record of claims is answered through an index, over a record large enough that the planner would rather not.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CLAIM_QUESTIONS, DatabaseClaimRecord } from '../../src/record-pg/claims.js';
import type { ReadLine } from '../../src/claims/record-format.js';
import { openRecordDatabase, setupRecord } from '../../src/record-pg/database.js';
import { importRecord } from '../../src/record-pg/import.js';
import { claimRows } from '../../src/record-pg/import-files.js';
import { missingInfra, type Postgres, startPostgres } from '../infra/index.js';

const missing = missingInfra('pg_ctl');
const ORIGIN = 'https://api.example.com';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}
const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

describe.skipIf(missing)('the record of claims in PostgreSQL', () => {
  let pg: Postgres;
  let database: string;
  const members = [0, 1].map((i) => ({ name: `cm${i}_${randomBytes(3).toString('hex')}`, password: `pw-${randomBytes(6).toString('hex')}` }));
  const store = { origin: ORIGIN, storeId: 'st_1' };
  const open = (i: number) =>
    DatabaseClaimRecord.open(
      { url: `postgresql://${members[i]!.name}@127.0.0.1:${pg.port}/${database}`, password: members[i]!.password },
      { env: {}, cwd: '/' },
      store,
      undefined,
    );

  beforeAll(async () => {
    pg = await startPostgres();
    database = `claims_${randomBytes(3).toString('hex')}`;
    await pg.admin(`CREATE DATABASE ${database}`);
    for (const m of members) await pg.admin(`CREATE ROLE ${m.name} LOGIN PASSWORD '${m.password}'`);
    await setupRecord(
      { url: `postgresql://${pg.superuser}@127.0.0.1:${pg.port}/${database}`, password: pg.superuserPassword },
      members.map((m) => m.name),
      { env: {}, cwd: '/' },
    );
  });
  afterAll(async () => {
    await pg?.stop();
  });

  const key = () => randomBytes(32).toString('hex');

  test('two members who read a key at once both write its attempt: the database takes one, the other is told, and a later reading gets the next attempt', async () => {
    const [a, b] = [await open(0), await open(1)];
    try {
      const k = key();
      expect(await a.lookup(k)).toBeUndefined();
      expect(await b.lookup(k)).toBeUndefined();
      const intent = (filing: string) => ({ issuance: filing, key: k, source: 'prompt', profile: 'default', email: 'Dana@Example.com', item: 'Kettle' });
      const [first, second] = await Promise.all([a.intents([intent('fa')]), b.intents([intent('fb')])]);
      const taken = [...first, ...second];
      expect(taken).toHaveLength(1);
      expect(taken[0]![1]).toContain('another member filed the same claim at the same time; not sent');
      const hit = await b.lookup(k);
      expect(hit?.state).toBe('sending');
      expect(hit?.intent?.email).toBe('Dana@Example.com');
      // Settled as not sent, the key is read again and its next attempt is 2, whoever writes it.
      const winner = taken[0]![0] === 'fa' ? b : a;
      winner.outcome({ issuance: taken[0]![0] === 'fa' ? 'fb' : 'fa', key: k, status: 'not_sent' });
      await winner.closeDurable();
      const c = await open(0);
      try {
        expect((await c.lookup(k))?.state).toBe('not_sent');
        expect(await c.intents([intent('fc')])).toEqual(new Map());
        const attempts = await pg.admin(`SELECT attempt || ' ' || filing FROM opcli.intents WHERE key = '${k}' ORDER BY attempt`, database);
        expect(attempts.trim().split('\n').at(-1)).toBe('2 fc');
      } finally {
        await c.close();
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  test("a batch's resume: what its earlier runs did with a row, by row key (a --key row's too) and by look-alike fingerprint, and never another batch's", async () => {
    const r = await open(0);
    const run = `run-${randomBytes(4).toString('hex')}`;
    const other = `run-${randomBytes(4).toString('hex')}`;
    const [k1, k2, k3, k4] = [key(), key(), key(), key()];
    const [like, lone] = ['d'.repeat(64), 'e'.repeat(64)];
    const batch = '/data/claims.csv.journal.jsonl';
    try {
      r.startRun(run, { profile: 'default', source: '/data/claims.csv', journal: batch });
      r.startRun(other, { profile: 'default', source: '/data/other.csv', journal: '/data/other.csv.journal.jsonl' });
      expect(
        await r.intentsDurable([
          { issuance: `${run}.2`, key: k1, run, line: 2, like, claimJson: '{"customer":{"email":"a@example.com"}}' },
          { issuance: `${run}.3`, key: k2, run, line: 3, row: 'f'.repeat(64), tag: 7, like },
          { issuance: `${run}.4`, key: k3, run, line: 4, like: lone },
          { issuance: `${other}.2`, key: k4, run: other, line: 2, like },
        ]),
      ).toEqual(new Map());
      r.outcome({ issuance: `${run}.2`, key: k1, status: 'filed', sourceOrderId: 'SO-9' });
      r.outcome({ issuance: `${run}.4`, key: k3, status: 'rejected', error: 'invalid item' });
      r.outcome({ issuance: `${other}.2`, key: k4, status: 'filed', sourceOrderId: 'SO-10' });
      await r.closeDurable();
      const again = await open(1);
      try {
        expect(await again.batchRow(batch, { key: k1 })).toMatchObject({
          status: 'filed',
          line: 2,
          sourceOrderId: 'SO-9',
          claim: { customer: { email: 'a@example.com' } },
        });
        // Under --key the row key is the value's hash, not the content key; its content tag comes back.
        expect(await again.batchRow(batch, { key: 'f'.repeat(64) })).toMatchObject({ status: 'sending', line: 3, tag: 7 });
        expect(await again.batchRow(batch, { key: k2 })).toBeUndefined();
        expect(await again.batchRow(batch, { key: k3 })).toMatchObject({ status: 'rejected', reason: 'invalid item' });
        // Another batch's rows are not this batch's.
        expect(await again.batchRow(batch, { key: k4 })).toBeUndefined();
        expect(await again.batchRow('/data/other.csv.journal.jsonl', { key: k4 })).toMatchObject({ status: 'filed', line: 2 });
        // The last row that looks like it and may exist (line 3, sent without an answer); a rejected look-alike is no claim.
        expect(await again.batchRow(batch, { like })).toMatchObject({ status: 'sending', line: 3 });
        expect(await again.batchRow(batch, { like: lone })).toBeUndefined();
        expect((await again.lookup(k1))?.outcome?.sourceOrderId).toBe('SO-9');
      } finally {
        await again.close();
      }
    } finally {
      await r.close();
    }
  });

  test('a file record copied by `record import` is answered as the database’s own rows, for a store without a store id', async () => {
    const noStore = { origin: ORIGIN, storeId: null };
    const [k1, k2, run] = [key(), key(), `run-${randomBytes(4).toString('hex')}`];
    const sim = randomBytes(32).toString('hex');
    const who = { user: 'ann', host: 'ann-laptop', profile: 'default' };
    const lines: ReadLine[] = [
      { v: 1, type: 'run', run, at: '2026-11-02T10:00:00.000Z', ...who, source: '/data/nov.csv', journal: '/data/nov.csv.journal.jsonl', journalId: 'j9' },
      { v: 1, type: 'intent', issuance: `${run}.2`, key: k1, at: '2026-11-02T10:00:01.000Z', run, line: 2, ...who, source: '/data/nov.csv' },
      { v: 1, type: 'outcome', issuance: `${run}.2`, key: k1, at: '2026-11-02T10:00:02.000Z', status: 'filed', sourceOrderId: 'SO-77' },
    ];
    Object.assign(lines[1]!, { sim, email: 'Eve@Example.com', item: 'Kettle', row: 'row-hash-9', tag: 3, journal: '/data/nov.csv.journal.jsonl' });
    // A crash cut the record's last line short: the intent of k2, set aside, may have left.
    lines.push({ v: 1, type: 'set-aside', issuance: 'torn-9', key: k2, at: '2026-11-02T10:05:00.000Z', user: 'ann', line: 5, reason: 'was cut short' });
    const db = await openRecordDatabase(
      { url: `postgresql://${members[0]!.name}@127.0.0.1:${pg.port}/${database}`, password: members[0]!.password },
      { env: {}, cwd: '/' },
      { max: 1 },
    );
    try {
      const chunks = async function* () {
        yield claimRows(lines, noStore);
      };
      await db.withClient((c) => importRecord(c, { fileId: `test:${run}`, path: '/tmp/record.jsonl', lines: lines.length }, chunks), 'rerun');
    } finally {
      await db.close();
    }
    const r = await DatabaseClaimRecord.open(
      { url: `postgresql://${members[1]!.name}@127.0.0.1:${pg.port}/${database}`, password: members[1]!.password },
      { env: {}, cwd: '/' },
      noStore,
      undefined,
    );
    try {
      const hit = await r.lookup(k1);
      expect(hit).toMatchObject({ state: 'filed', outcome: { sourceOrderId: 'SO-77' } });
      expect(hit?.intent).toMatchObject({ email: 'Eve@Example.com', journal: '/data/nov.csv.journal.jsonl', journalId: 'j9', row: 'row-hash-9', tag: 3 });
      expect((await r.similar(sim, key()))?.intent?.key).toBe(k1);
      // A batch's resume finds the copied row by the batch's name and its --key row key.
      expect(await r.batchRow('/data/nov.csv.journal.jsonl', { key: 'row-hash-9' })).toMatchObject({ status: 'filed', tag: 3, sourceOrderId: 'SO-77' });
      for (const filter of [{ email: 'eve@example.com' }, { order: 'so-77' }]) {
        const found: string[] = [];
        await r.eachClaim(filter, (attempts) => found.push(...attempts.flatMap((a) => a.map((l) => ('key' in l ? l.key : '')))));
        expect(found, JSON.stringify(filter)).toContain(k1);
      }
      // Held as the file record holds a torn line: it may have been sent.
      expect((await r.lookup(k2))?.state).toBe('torn');
    } finally {
      await r.close();
    }
  });

  test('each question of the record of claims is answered through its index, over 60,000 claims', async () => {
    await pg.admin(
      `INSERT INTO opcli.runs (run, origin, store_id, source, at) SELECT 'bulk-run-' || n, '${ORIGIN}', 'st_1', 'batch', now() FROM generate_series(0, 499) AS n;
       INSERT INTO opcli.intents (kind, origin, store_id, key, attempt, filing, at, source, run, line, similarity, customer_email, detail)
       SELECT 'claim', '${ORIGIN}', 'st_' || (n % 3), 'bulk-key-' || n, 1, 'bulk-' || n, timestamptz '2026-01-01' + n * interval '7 minutes',
              '/data/batch-' || (n % 200) || '.csv', 'bulk-run-' || (n % 500), n, 'sim-' || (n % 20000), 'c' || (n % 15000) || '@example.com',
              jsonb_build_object('journal', '/data/batch-' || (n % 200) || '.csv.journal.jsonl', 'like', 'like-' || (n % 20000))
                || CASE WHEN n % 5 = 0 THEN jsonb_build_object('row', 'row-' || n) ELSE '{}' END
         FROM generate_series(1, 60000) AS n;
       INSERT INTO opcli.outcomes (filing, status, at, source_order_id, detail)
       SELECT 'bulk-' || n, 'filed', now(), 'SO-' || n, jsonb_build_object('order', 'so-' || n) FROM generate_series(1, 60000, 2) AS n;
       ANALYZE opcli.intents; ANALYZE opcli.outcomes;`,
      database,
    );
    const samples: Record<keyof typeof CLAIM_QUESTIONS, [unknown[], string[]]> = {
      byKey: [[ORIGIN, 'st_1', 'bulk-key-4'], ['intents_one_attempt']],
      lastOfSimilarity: [
        [ORIGIN, 'st_1', 'sim-7'],
        ['intents_by_similarity', 'intents_one_attempt'],
      ],
      maxAttempts: [[ORIGIN, 'st_1', ['bulk-key-4', 'bulk-key-7']], ['intents_one_attempt']],
      batchRow: [[ORIGIN, 'st_1', '/data/batch-7.csv.journal.jsonl', 'row-10'], ['intents_by_batch_row']],
      batchLike: [[ORIGIN, 'st_1', '/data/batch-7.csv.journal.jsonl', 'like-7'], ['intents_by_batch_like']],
      keysOfCustomer: [[ORIGIN, 'st_1', 'c7@example.com'], ['intents_by_customer']],
      keysOfOrder: [
        [ORIGIN, 'st_1', 'so-7'],
        ['intents_filing_key', 'outcomes_by_order'],
      ],
    };
    const db = await openRecordDatabase(
      { url: `postgresql://${members[0]!.name}@127.0.0.1:${pg.port}/${database}`, password: members[0]!.password },
      { env: {}, cwd: '/' },
    );
    try {
      for (const [question, [params, indexes]] of Object.entries(samples)) {
        const plan = await db.withClient(
          async (c) =>
            (
              await c.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
                `EXPLAIN (FORMAT JSON) ${CLAIM_QUESTIONS[question as keyof typeof CLAIM_QUESTIONS]}`,
                params,
              )
            ).rows[0]!['QUERY PLAN'][0].Plan,
          'n/a',
        );
        const scans = nodes(plan).filter((n) => n['Relation Name']);
        // No table is read whole; the index made for the question is the one that answers it.
        expect(
          scans.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']),
          question,
        ).toEqual([]);
        for (const index of indexes)
          expect(
            nodes(plan).map((n) => n['Index Name']),
            question,
          ).toContain(index);
      }
    } finally {
      await db.close();
    }
  });
});
